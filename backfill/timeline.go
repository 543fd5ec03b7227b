package backfill

import (
	"math/bits"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// timeline is the profile's events in time order. Releases and
// reservation ends are in ends, except releases recorded since the last
// query that sweeps: they wait in waiting until flushTimeline enters
// them, so that a profile that only places jobs never builds the tree.
// Reservation starts are in starts. Each entry has a sequence number
// (seq, the last one given), which orders entries at one moment and
// indexes reservedAgainBy (see timelineEntry).
type timeline struct {
	ends, starts *events
	waiting      []timelineEntry
	// flushed is seq when waiting was last flushed: later releases wait.
	flushed int32
	// shrunkWaiting says that a move took GPUs from a waiting release
	// (see shrunk).
	shrunkWaiting   bool
	reservedAgainBy []time.Duration // by seq
	seq             int32
}

// timelineEntry is an entry of the timeline: at time at, node n
// changes. Three facts often let a cursor that passes an entry skip
// reading the node's events (see [Profile.move]):
//   - set is the GPUs reserved, released, or freed by the end of a
//     reservation: always the GPUs its event frees now (see shrunk for a
//     release that [Profile.MoveRelease] takes GPUs from);
//   - for a release or reservation end, reservedAgainBy[seq] is the
//     moment by which every GPU it frees is reserved again: the latest,
//     over those GPUs, of the start of the first reservation of that GPU
//     at or after at (Forever when one has none). A run from at or later
//     that ends after it cannot use any of them from this event on. It
//     may be later than the truth (lowerReservedAgainBy recomputes it
//     only for the events a new reservation follows), which costs only a
//     recomputation or a fit check that was not needed; never earlier;
//   - for a reservation start, reservedAgainBy[seq] is instead a moment
//     by which each GPU it reserves has an earlier reservation that ends
//     at or after it (and by the start): the earliest, over the GPUs, of
//     the end of each one's last earlier reservation, or 0 when a GPU has
//     none (see heldBefore). It does not say that every GPU is held all
//     the way up to it: an earlier reservation may start late. A run that
//     starts before it and ends by the start overlaps such a reservation
//     of each GPU unless that reservation starts at or after the run's
//     end.
//
// For example, with reservations A of GPU 0 over [0, 2h), B of GPU 0 over
// [3h, 5h) and C of GPU 1 over [4h, 6h):
//
//	entry            reservedAgainBy   because
//	A ends at 2h     3h                B reserves GPU 0 again from 3h
//	B ends at 5h     Forever           no later reservation of GPU 0
//	C ends at 6h     Forever           no later reservation of GPU 1
//	B starts at 3h   2h                GPU 0's last earlier reservation, A, ends at 2h
//	A, C start       0                 no earlier reservation of their GPUs
type timelineEntry struct {
	at  time.Duration
	seq int32
	n   topology.NodeID
	set topology.GPUSet
}

func entryLess(a, b timelineEntry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// AddRelease records that the held GPUs s of node n become free at
// offset at. A release at or before now (at <= 0) is recorded at 0: the
// GPUs stay held in the index, so no job is placed on them now, but they
// are usable for any run from now on (a job being evicted whose grace is
// over is gone, though its GPUs are not yet seen free). Releases at
// Forever, or on nodes that are not ready, are ignored. GPUs that already
// have a release are free from the earlier of the two: to replace a
// release (GPUs freed early and taken again), use [Profile.MoveRelease].
// O(e + log E) for e events of the node.
func (p *Profile) AddRelease(n topology.NodeID, s topology.GPUSet, at time.Duration) {
	if p.addRelease(n, s, at) {
		p.memo.forget()
	}
}

// addRelease records a release and reports whether it did.
func (p *Profile) addRelease(n topology.NodeID, s topology.GPUSet, at time.Duration) bool {
	if at == Forever || s == 0 || p.ix.State(n) != topology.Ready {
		return false
	}
	if at <= 0 {
		at = 0
		p.releasedNow = true
	}
	p.noteEvent(n)
	p.markStale(n)
	p.timeline.seq++
	p.nodes[n].addRelease(nodeEvent{start: at, end: at, set: s, seq: p.timeline.seq})
	if p.dense.earliestRelease != nil {
		p.dense.earliestRelease[n] = min(p.dense.earliestRelease[n], at)
	}
	p.count(n, at, Forever, (s & p.ix.Healthy(n)).Len())
	p.timeline.waiting = append(p.timeline.waiting, timelineEntry{at: at, seq: p.timeline.seq, n: n, set: s})
	p.timeline.setReservedAgainBy(p.timeline.seq, p.reservedAgainAfter(n, s, at))
	return true
}

// flushTimeline puts the releases recorded since the last query into the
// timeline. Only Earliest reads the timeline (moving its cursor and
// sweeping), after cursorFor has called this, so a Step that places jobs
// and asks no query never pays for the B-tree.
func (p *Profile) flushTimeline() {
	for _, e := range p.timeline.waiting {
		if p.timeline.shrunkWaiting {
			// A move took GPUs from some of these releases: enter
			// each as its node's events have it now (see shrunk).
			set, ok := p.nodes[e.n].releaseSet(e.seq)
			if !ok {
				continue // it frees nothing any more
			}
			if set != e.set {
				e.set = set
				p.timeline.reservedAgainBy[e.seq] = p.reservedAgainAfter(e.n, set, e.at)
			}
		}
		p.timeline.ends.Insert(e)
	}
	p.timeline.waiting = p.timeline.waiting[:0]
	p.timeline.flushed, p.timeline.shrunkWaiting = p.timeline.seq, false
}

// setReservedAgainBy records reservedAgainBy for the timeline entry seq.
func (tl *timeline) setReservedAgainBy(seq int32, at time.Duration) {
	if k := int(seq) + 1 - len(tl.reservedAgainBy); k > 0 {
		// Doubling: append grows a long slice by a quarter, and copies
		// it each time; seq grows by one or two per event.
		tl.reservedAgainBy = append(tl.reservedAgainBy, make([]time.Duration, max(k, len(tl.reservedAgainBy)))...)
	}
	tl.reservedAgainBy[seq] = at
}

// reservedAgainAfter returns, for GPUs s of node n freed at at, the latest over them
// of the start of the first reservation of that GPU at or after at
// (Forever when one has none); reservations last at least a nanosecond,
// so each holds its GPUs in a run from at. O(events of n).
func (p *Profile) reservedAgainAfter(n topology.NodeID, s topology.GPUSet, at time.Duration) time.Duration {
	var next [64]time.Duration // read for the GPUs of s alone
	for g := s; g != 0; g &= g - 1 {
		next[bits.TrailingZeros64(uint64(g))] = Forever
	}
	// A reservation from at or later ends after at: the walk stops at
	// the first, from the last, that ended by at.
	ne := &p.nodes[n]
	for i := len(ne.events) - 1; i >= ne.numReleases; i-- {
		e := &ne.events[i]
		if e.end <= at {
			break
		}
		if e.start < at {
			continue
		}
		for g := e.set & s; g != 0; g &= g - 1 {
			i := bits.TrailingZeros64(uint64(g))
			next[i] = min(next[i], e.start)
		}
	}
	latest := time.Duration(0)
	for g := s; g != 0; g &= g - 1 {
		latest = max(latest, next[bits.TrailingZeros64(uint64(g))])
	}
	return latest
}

// lowerReservedAgainBy recomputes reservedAgainBy for the events of node n that a
// reservation of s from start may lower: per GPU of s, the last event at
// or before start that frees it. (An earlier event that frees the GPU is
// usually followed by a reservation of it before this one; where it is
// not, its reservedAgainBy stays later than the truth, which is allowed.)
// O(events of n × (1 + events recomputed)).
func (p *Profile) lowerReservedAgainBy(n topology.NodeID, s topology.GPUSet, start time.Duration) {
	ne := &p.nodes[n]
	evs := ne.events
	var last [64]int32
	var lastAt [64]time.Duration
	for i := range last {
		last[i] = -1
	}
	for k := range evs {
		at, ok := evs[k].freedAt()
		if !ok || at > start {
			if k >= ne.numReleases {
				break // reservations ordered by end: the rest end later
			}
			continue
		}
		for g := evs[k].set & s; g != 0; g &= g - 1 {
			if i := bits.TrailingZeros64(uint64(g)); last[i] < 0 || at > lastAt[i] {
				last[i], lastAt[i] = int32(k), at
			}
		}
	}
	done := topology.GPUSet(0)
	for g := s; g != 0; g &= g - 1 {
		i := bits.TrailingZeros64(uint64(g))
		k := last[i]
		if k < 0 || done&(1<<i) != 0 {
			continue
		}
		for h := g; h != 0; h &= h - 1 {
			if j := bits.TrailingZeros64(uint64(h)); last[j] == k {
				done |= 1 << j
			}
		}
		e := &evs[k]
		at, _ := e.freedAt()
		p.timeline.reservedAgainBy[e.seq] = p.reservedAgainAfter(n, e.set, at)
	}
}
