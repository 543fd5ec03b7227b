package backfill

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Usable reports whether every GPU of pl is usable for a run of d from
// start, by the rule of [Profile]: healthy, on a ready node, free now or
// released by start, and held by no reservation at any moment of the
// run. A run from now (start <= 0) may use only GPUs free now. It
// changes nothing: a host checks with it that a slot promised earlier is
// still there before it reserves it again ([Profile.Reserve]) or takes
// it ([Profile.Take]). O(slots × e) for e events per node.
func (p *Profile) Usable(pl gang.Placement, start, d time.Duration) bool {
	start = max(start, 0)
	for _, sl := range pl.Slots {
		n := sl.Node
		if int(n) < 0 || int(n) >= len(p.nodes) || p.ix.State(n) != topology.Ready {
			return false
		}
		free := p.ix.FreeSet(n)
		u := free
		if start > 0 {
			u = p.usable(n, free, start, run(d)) & p.ix.Healthy(n)
		} else if ne := &p.nodes[n]; ne.resFirst < run(d) && len(ne.reservations()) > 0 {
			u &^= p.reservedIn(ne, 0, run(d))
		}
		if sl.GPUs&^u != 0 {
			return false
		}
	}
	return true
}

// Take starts a run of d now on the GPUs of pl, which the caller found
// usable from now ([Profile.Usable]): it holds them in the index and
// records their release at d, as [Profile.PlaceNow] does for the GPUs it
// chooses.
func (p *Profile) Take(pl gang.Placement, d time.Duration) {
	p.sync()
	defer p.settle()
	for _, sl := range pl.Slots {
		if err := p.ix.TakeSet(sl.Node, sl.GPUs); err != nil {
			panic("backfill: Take of GPUs that are not free: " + err.Error())
		}
	}
	p.recordRelease(pl, run(d))
}

// Unreserve takes back a reservation that [Profile.Reserve] made for pl
// from start for a run of d: its GPUs are usable over that span again,
// as if it had never been made, while every other reservation stays (a
// reservation of the same GPUs that Reserve joined to it is kept whole).
// It panics when no such reservation was made. Answers [Profile.Earliest]
// remembered are dropped. O(nodes of pl × e·(e + g + log E)) for e events
// per node and g GPUs per node.
func (p *Profile) Unreserve(pl gang.Placement, start, d time.Duration) {
	end := add(start, run(d))
	for _, sl := range pl.Slots {
		n := sl.Node
		ne := &p.nodes[n]
		k := -1
		for i := ne.rel; i < len(ne.ev); i++ {
			if e := &ne.ev[i]; e.set == sl.GPUs && e.start <= start && e.end >= end {
				k = i
				break
			}
		}
		if k < 0 {
			panic("backfill: Unreserve of a reservation that was not made")
		}
		e := ne.ev[k]
		ne.ev = slices.Delete(ne.ev, k, k+1)
		p.starts.Delete(tev{at: e.start, seq: e.sseq, n: n})
		if e.end != Forever {
			p.timeline.Delete(tev{at: e.end, seq: e.seq, n: n})
		}
		p.count(n, e.start, e.end, e.set.Len())
		ne.reservationsChanged()
		p.markStale(n)
		p.againAll(n)

		// What Reserve joined to it on either side goes back in.
		one := gang.Placement{Slots: []gang.Slot{sl}}
		if e.start < start {
			p.Reserve(one, e.start, start-e.start)
		}
		if end < e.end {
			p.Reserve(one, end, span(end, e.end))
		}
	}
	// Remembered answers go: recording the freed span as loosened
	// windows (as MoveRelease does) makes every later query read them,
	// which costs more than searching afresh once Unreserve is called
	// for thousands of reservations.
	p.forget()
}

// span is the length of [from, to), Forever when to is.
func span(from, to time.Duration) time.Duration {
	if to == Forever {
		return Forever
	}
	return to - from
}

// reservationsChanged recomputes the summary of the reservations after
// one was taken out.
func (ne *nodeEvents) reservationsChanged() {
	ne.resFirst, ne.resEnd = 0, 0
	for i, e := range ne.reservations() {
		if i == 0 || e.start < ne.resFirst {
			ne.resFirst = e.start
		}
		ne.resEnd = max(ne.resEnd, e.end)
	}
}

// againAll recomputes againOf for every timeline entry of node n's
// events after a reservation of n was taken out: each may have leant on
// it (see tev).
func (p *Profile) againAll(n topology.NodeID) {
	ne := &p.nodes[n]
	for _, e := range ne.ev {
		if e.reserve {
			p.againOf[e.sseq] = p.heldBefore(n, e.set, e.start)
		}
		if at, ok := e.freedAt(); ok && e.seq > 0 {
			p.againOf[e.seq] = p.again(n, e.set, at)
		}
	}
}
