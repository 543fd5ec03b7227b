package backfill

import (
	"time"

	"github.com/gpusched/gpusched/topology"
)

// MoveRelease records that the held GPUs s of node n now become free at
// offset at instead of when an earlier AddRelease said: an evicted job
// holds its GPUs until its checkpoint grace ends, even if its time limit
// would have ended sooner. A release may move later only if no
// reservation holds those GPUs before the new time (queries assume no
// GPU is reserved while it is held). Answers that [Profile.Earliest]
// remembered survive the move, earlier or later (see there). O(e·(e +
// log E)) for e events of n.
func (p *Profile) MoveRelease(n topology.NodeID, s topology.GPUSet, at time.Duration) {
	at = max(at, 0) // at or before now: released now, as AddRelease records it
	// The latest release that s had, which bounds the starts the move
	// can help (Forever when a held GPU of s had none).
	old, had := p.dropReleases(n, s)
	if s&^had&p.ix.Held(n) != 0 {
		old = Forever
	}
	// Runs from at until the old release may now use s: remembered
	// answers hold outside that window (see memo.go).
	if p.addRelease(n, s, at) {
		p.memo.loosen(n, s, at, old)
	}
}

// dropReleases takes the GPUs s of node n out of its releases, and
// returns the latest release that had one of them and the GPUs of s that
// had one. O(e·(e + log E)) for e events of n.
func (p *Profile) dropReleases(n topology.NodeID, s topology.GPUSet) (old time.Duration, had topology.GPUSet) {
	ne := &p.nodes[n]
	evs := ne.releases()
	p.markStale(n)
	kept := evs[:0]
	for _, e := range evs {
		if moved := e.set & s; moved != 0 {
			p.count(n, e.start, Forever, -(moved & p.ix.Healthy(n)).Len())
			old, had = max(old, e.start), had|moved
			e.set &^= s
			p.shrunk(n, e)
		}
		if e.set != 0 {
			kept = append(kept, e)
		}
	}
	// Releases left with no GPUs go: slide the reservations down.
	if len(kept) < len(evs) {
		ne.events = append(ne.events[:len(kept)], ne.events[len(evs):]...)
		ne.numReleases = len(kept)
	}
	ne.releasesChanged()
	return old, had
}

// shrunk brings the timeline entry of release e of node n up to date
// after a move took GPUs from it: the entry goes when e frees none, and
// otherwise carries e's GPUs and their reservedAgainBy. A sweep would otherwise
// count the moved GPUs as ones the entry could free and try a start in
// vain, and a cursor that passes it would recompute the node for nothing:
// preempting thousands of jobs leaves thousands of such entries. An entry
// still waiting to enter the timeline is brought up to date when it
// enters (see flushTimeline). O(e + log E).
func (p *Profile) shrunk(n topology.NodeID, e nodeEvent) {
	if e.seq > p.timeline.flushed {
		p.timeline.shrunkWaiting = true
		return
	}
	if e.set == 0 {
		p.timeline.ends.Delete(timelineEntry{at: e.start, seq: e.seq, n: n})
		return
	}
	p.timeline.ends.Insert(timelineEntry{at: e.start, seq: e.seq, n: n, set: e.set})
	p.timeline.reservedAgainBy[e.seq] = p.reservedAgainAfter(n, e.set, e.start)
}
