package backfill

import (
	"cmp"
	"math/bits"
	"slices"
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Reserve promises the GPUs of pl for [start, start+d). The caller must
// have found them usable for that window (with [Profile.Earliest]).
// A reservation of the same GPUs of a node that ends when this one starts
// is extended instead, which answers every query alike (a GPU is usable
// when no reservation holds it at any moment of a run) with half the
// events: queued gangs stack this way on the nodes they share.
// O(nodes of pl × (e·(1+g) + log E)) for e events per node and g GPUs per
// node, plus, once a whole-node gang has been queried, the cut of each
// node's whole-node free windows.
func (p *Profile) Reserve(pl gang.Placement, start, d time.Duration) {
	// An extension adds no reservation start, so no reservedAgainBy of a release
	// or reservation end changes, each being the first start of a
	// reservation of its GPUs at or after it; only a new reservation
	// lowers them (lowerReservedAgainBy, the e·g term). wholeReserve cuts the
	// windows.
	end := add(start, run(d))
	p.countSlots(pl.Slots, start, end)
	// The timeline entries go in together after the loop, which reads
	// only the nodes' events: every end of this reservation is at end
	// with a new seq, and every start at start, so each set lies in one
	// place in its tree (see [events.InsertSorted]).
	ends, starts, gone := p.scratch.ends[:0], p.scratch.starts[:0], p.scratch.gone[:0]
	for _, s := range pl.Slots {
		p.noteEvent(s.Node)
		p.wholeReserve(s.Node, start, end)
		p.blockCursors(s.Node, s.GPUs, start, end)
		p.noteStart(s.Node, start)
		cpu, mem := p.slotUse(s)
		if old, ok := p.extend(s.Node, s.GPUs, start, end, cpu, mem); ok {
			gone = append(gone, old)
			if end != Forever {
				ends = append(ends, timelineEntry{at: end, seq: p.timeline.seq, n: s.Node, set: s.GPUs})
			}
			continue
		}
		p.timeline.seq++
		starts = append(starts, timelineEntry{at: start, seq: p.timeline.seq, n: s.Node, set: s.GPUs})
		p.timeline.setReservedAgainBy(p.timeline.seq, p.heldBefore(s.Node, s.GPUs, start))
		e := nodeEvent{reserve: true, start: start, end: end, set: s.GPUs, startSeq: p.timeline.seq, cpu: cpu, mem: mem}
		if end != Forever {
			p.timeline.seq++
			e.seq = p.timeline.seq
			ends = append(ends, timelineEntry{at: end, seq: p.timeline.seq, n: s.Node, set: s.GPUs})
			p.timeline.setReservedAgainBy(p.timeline.seq, p.reservedAgainAfter(s.Node, s.GPUs, end))
		}
		p.nodes[s.Node].addReservation(e)
		p.lowerReservedAgainBy(s.Node, s.GPUs, start)
	}
	if len(gone) > 0 {
		slices.SortFunc(gone, func(a, b timelineEntry) int { return cmp.Compare(a.seq, b.seq) }) // all at start
		p.timeline.ends.DeleteSorted(gone)
	}
	p.timeline.ends.InsertSorted(ends)
	p.timeline.starts.InsertSorted(starts)
	p.scratch.ends, p.scratch.starts, p.scratch.gone = ends[:0], starts[:0], gone[:0]
	p.useCursors(pl)
}

// heldBefore returns, for a reservation of s on node n from start, the
// earliest over the GPUs of s of the end of the last reservation of that
// GPU that ends by start; 0 when a GPU of s has none. A reservation is
// extended only up to the next reservation of its GPUs, so each of those
// reservations stays, ending no earlier, unless [Profile.Unreserve] takes
// it back, which recomputes the value for the node's entries.
// O(e·g) for e events of the node and g GPUs of s.
func (p *Profile) heldBefore(n topology.NodeID, s topology.GPUSet, start time.Duration) time.Duration {
	var last [64]time.Duration
	var have topology.GPUSet
	for _, e := range p.nodes[n].reservations() {
		if e.end > start {
			break // ordered by end: the rest end later
		}
		if e.set&s == 0 {
			continue
		}
		for g := e.set & s; g != 0; g &= g - 1 {
			i := bits.TrailingZeros64(uint64(g))
			if have&(1<<i) == 0 || e.end > last[i] {
				last[i] = e.end
				have |= 1 << i
			}
		}
	}
	if have != s {
		return 0
	}
	until := Forever
	for g := s; g != 0; g &= g - 1 {
		until = min(until, last[bits.TrailingZeros64(uint64(g))])
	}
	return until
}

// extend lengthens to end a reservation of exactly set on node n that
// ends at start, and reports whether there was one, with the timeline
// entry of its old end, which the caller deletes; the new end, when there
// is one, has seq p.timeline.seq, for the caller to enter. It moves the
// reservation to its place among those ordered by end.
func (p *Profile) extend(n topology.NodeID, set topology.GPUSet, start, end time.Duration, cpu, mem int64) (timelineEntry, bool) {
	ne := &p.nodes[n]
	evs := ne.events
	for i := len(evs) - 1; i >= ne.numReleases; i-- {
		e := evs[i]
		if e.end < start {
			return timelineEntry{}, false // ordered by end: none earlier ends at start
		}
		if e.end != start || e.set != set || e.cpu != cpu || e.mem != mem {
			continue
		}
		old := timelineEntry{at: e.end, seq: e.seq, n: n}
		e.end = end
		if end != Forever {
			p.timeline.seq++
			e.seq = p.timeline.seq
		}
		j := i + 1
		for j < len(evs) && evs[j].end <= end {
			j++
		}
		copy(evs[i:j-1], evs[i+1:j])
		evs[j-1] = e
		ne.lastReservationEnd = max(ne.lastReservationEnd, end)
		if end != Forever {
			p.timeline.setReservedAgainBy(p.timeline.seq, p.reservedAgainAfter(n, set, end))
		}
		return old, true
	}
	return timelineEntry{}, false
}
