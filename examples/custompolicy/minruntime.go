package main

import (
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// minRuntime is a scheduler.VictimSelector that never preempts a job
// within Min of its start: it drops the candidates that have run (Ran)
// less than Min, lets preempt.Select choose among the rest and maps the
// chosen indices back to the caller's slice.
type minRuntime struct {
	// Min is how long a job must have run before it may be preempted.
	Min time.Duration
}

// Select implements scheduler.VictimSelector.
func (m minRuntime) Select(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool) {
	var keep []preempt.Candidate
	var orig []int // orig[k] is the index in cands of keep[k]
	for i, c := range cands {
		if c.Ran >= m.Min {
			keep = append(keep, c)
			orig = append(orig, i)
		}
	}
	victims, pl, ok := preempt.Select(ix, r, s, keep)
	for k, v := range victims {
		victims[k] = orig[v]
	}
	return victims, pl, ok
}
