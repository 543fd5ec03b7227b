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
		} else if ne := &p.nodes[n]; ne.firstReservation < run(d) && len(ne.reservations()) > 0 {
			u &^= p.reservedIn(ne, 0, run(d))
		}
		if sl.GPUs&^u != 0 || !p.roomFor(sl, start, d) {
			return false
		}
	}
	return true
}

// UsableReserved reports whether pl may be reserved from start for a run
// of d: as [Profile.Usable], except that a GPU released by start counts
// even when start is now (<= 0), as [Profile.Earliest] counts it. A GPU
// held now by a job whose release is due now (its time limit reached) is
// not usable for a run taken now ([Profile.Take]) but is for a
// reservation from now. CPU and memory are checked on the live view, as
// Usable checks them for a run from now. It changes nothing. O(slots × e)
// for e events per node.
func (p *Profile) UsableReserved(pl gang.Placement, start, d time.Duration) bool {
	start = max(start, 0)
	for _, sl := range pl.Slots {
		n := sl.Node
		if int(n) < 0 || int(n) >= len(p.nodes) || p.ix.State(n) != topology.Ready {
			return false
		}
		u := p.usable(n, p.ix.FreeSet(n), start, run(d)) & p.ix.Healthy(n)
		if sl.GPUs&^u != 0 || !p.roomFor(sl, start, d) {
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
		p.ix.AddUse(sl.Node, sl.CPUMillis, sl.MemoryMiB)
	}
	p.recordRelease(pl, run(d))
}

// Unreserve takes back a reservation that [Profile.Reserve] made for pl
// from start for a run of d: its GPUs are usable over that span again,
// as if it had never been made, while every other reservation stays (a
// reservation of the same GPUs that Reserve joined to it is kept whole).
// It panics when no such reservation was made. Answers [Profile.Earliest]
// remembered survive, as they do a release moved earlier: a query first
// searches the starts at which the freed GPUs are usable for its run.
// O(nodes of pl × e·(e + g + log E)) for e events per node and g GPUs
// per node.
func (p *Profile) Unreserve(pl gang.Placement, start, d time.Duration) Mark {
	m := Mark{loose: len(p.memo.loose), forgets: p.memo.forgets}
	end := add(start, run(d))
	for _, sl := range pl.Slots {
		n := sl.Node
		ne := &p.nodes[n]
		k := -1
		for i := ne.numReleases; i < len(ne.events); i++ {
			if e := &ne.events[i]; e.set == sl.GPUs && e.start <= start && e.end >= end {
				k = i
				break
			}
		}
		if k < 0 {
			panic("backfill: Unreserve of a reservation that was not made")
		}
		e := ne.events[k]
		ne.events = slices.Delete(ne.events, k, k+1)
		p.timeline.starts.Delete(timelineEntry{at: e.start, seq: e.startSeq, n: n})
		if e.end != Forever {
			p.timeline.ends.Delete(timelineEntry{at: e.end, seq: e.seq, n: n})
		}
		p.count(n, e.start, e.end, e.set.Len())
		ne.reservationsChanged()
		p.markStale(n)
		p.recomputeReservedAgainBy(n, e)
		// A run that starts before the reservation's end may now use its
		// GPUs: remembered answers hold for the others (see memo.go).
		p.memo.loosen(n, e.set, 0, e.end)

		if e.cpu != 0 || e.mem != 0 {
			p.memo.forget() // CPU or memory freed: a remembered answer may be too late
		}
		// What Reserve joined to it on either side goes back in, with the
		// CPU and memory of the event (Reserve joins only equal ones).
		joined := sl
		joined.CPUMillis, joined.MemoryMiB = e.cpu, e.mem
		one := gang.Placement{Slots: []gang.Slot{joined}}
		if e.start < start {
			p.Reserve(one, e.start, start-e.start)
		}
		if end < e.end {
			p.Reserve(one, end, span(end, e.end))
		}
	}
	return m
}

// Mark is where [Profile.Unreserve] left the profile's remembered
// answers, for [Profile.Restore].
type Mark struct {
	loose   int
	forgets uint32
}

// Restore puts back the reservation that Unreserve (which returned m)
// took back, when nothing else changed the profile since but queries
// and placements that were taken back: the profile is then as it was,
// and so are its remembered answers (Unreserve recorded the freed spans
// as loosened windows, which every later query would otherwise read;
// answers remembered while they were open only start sweeps earlier
// than they need to). A caller that searched for an earlier start and
// found none puts the reservation back this way.
func (p *Profile) Restore(pl gang.Placement, start, d time.Duration, m Mark) {
	p.Reserve(pl, start, d)
	if p.memo.forgets != m.forgets || len(p.memo.loose) < m.loose {
		return
	}
	// The windows go; a bound remembered while they were open holds (it
	// was found with more GPUs usable), and is marked as having read
	// none of them, so that windows numbered alike later are read.
	p.memo.loose = p.memo.loose[:m.loose]
	e := int32(m.loose)
	for _, gs := range p.memo.answers {
		for _, g := range gs {
			for j := range g.bounds {
				g.bounds[j].epoch = min(g.bounds[j].epoch, e)
			}
		}
	}
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
	ne.firstReservation, ne.lastReservationEnd = 0, 0
	for i, e := range ne.reservations() {
		if i == 0 || e.start < ne.firstReservation {
			ne.firstReservation = e.start
		}
		ne.lastReservationEnd = max(ne.lastReservationEnd, e.end)
	}
}

// recomputeReservedAgainBy recomputes reservedAgainBy for the timeline
// entries of node n's events after gone, a reservation of n, was taken
// out (see timelineEntry), where its value could have counted gone:
//
//	entry                      value read from                      recomputed when
//	reservation start at s     last reservations of its GPUs that   it shares a GPU with gone,
//	                           end by s (heldBefore)                and gone ends by s
//	release or end at t        first reservations of its GPUs from  it shares a GPU with gone,
//	                           t on (reservedAgainAfter)            and gone starts at or after t
//
// Every other value reads reservations that all stay. O(e) for e events
// of n, plus O(e) per value recomputed.
func (p *Profile) recomputeReservedAgainBy(n topology.NodeID, gone nodeEvent) {
	ne := &p.nodes[n]
	for _, e := range ne.events {
		if e.reserve && e.set&gone.set != 0 && gone.end <= e.start {
			p.timeline.setReservedAgainBy(e.startSeq, p.heldBefore(n, e.set, e.start))
		}
		if at, ok := e.freedAt(); ok && e.seq > 0 && e.set&gone.set != 0 && gone.start >= at {
			p.timeline.setReservedAgainBy(e.seq, p.reservedAgainAfter(n, e.set, at))
			// The value may have grown (the reservation taken out was
			// the first after it), past the bound its run keeps of them
			// (see latestReservedAgainBy), which only a drop leaves valid.
			if r := p.timeline.ends.locate(timelineEntry{at: at, seq: e.seq, n: n}); r != nil {
				r.boundKnown = false
			}
		}
	}
}
