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
// remembered survive the move, earlier or later (see there). O(events of
// n + log E).
func (p *Profile) MoveRelease(n topology.NodeID, s topology.GPUSet, at time.Duration) {
	at = max(at, 0) // at or before now: released now, as AddRelease records it
	evs := p.nodes[n].releases()
	p.markStale(n)
	// The latest release that s had, which bounds the starts the move
	// can help (Forever when a held GPU of s had none).
	old, had := time.Duration(0), topology.GPUSet(0)
	for i := range evs {
		if moved := evs[i].set & s; moved != 0 {
			p.count(n, evs[i].start, Forever, -(moved & p.ix.Healthy(n)).Len())
			old, had = max(old, evs[i].start), had|moved
		}
		evs[i].set &^= s
	}
	p.nodes[n].releasesChanged()
	if s&^had&p.ix.Held(n) != 0 {
		old = Forever
	}
	// The old timeline entries (in the timeline, or still waiting to
	// enter it) stay with their old sets and againOf: a cursor that
	// passes one may recompute the node, which reads the events above,
	// or skip it, and a sweep may count its GPUs as ones it could free
	// and try a start in vain. None of that changes an answer, so they
	// need not be removed.
	//
	// Runs from at until the old release may now use s: remembered
	// answers hold outside that window (see memo.go).
	if p.addRelease(n, s, at) {
		p.loosen(n, s, at, old)
	}
}
