package sim_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
)

// maxDur is the last time a time.Duration holds, about 292 years.
const maxDur = time.Duration(math.MaxInt64)

// TestRunRefusesTimesThatWrap: a workload whose times run past what a
// time.Duration holds is refused with ErrTimeRange. A run of 100 s from
// a submit 50 s before the last Duration ended at a negative time, and
// the metrics came out impossible (makespan 0, wait -100 s).
func TestRunRefusesTimesThatWrap(t *testing.T) {
	late := func(id string, submit, run, limit time.Duration) sim.Job {
		return sim.Job{ID: id, Submit: submit, Run: run, Limit: limit, Members: 1, GPUsPerMember: 1, Tier: scheduler.P3}
	}
	victim := late("V", 0, 100*s, 0)
	victim.CheckpointGrace = maxDur - s // from its preemption at 2 s, past the last Duration
	preemptor := late("P", 2*s, s, 0)
	preemptor.Tier = scheduler.P0
	for _, tc := range []struct {
		name  string
		jobs  []sim.Job
		nodes []sim.NodeEvent
		want  string
	}{
		{"end of run", []sim.Job{late("A", maxDur-50*s, 100*s, 0)}, nil, `job "A"`},
		{"time limit", []sim.Job{late("A", maxDur-50*s, 200*s, 100*s)}, nil, `job "A"`},
		{"submit span", []sim.Job{late("A", -6e18, s, 0), late("B", 6e18, s, 0)}, nil, `jobs[1] "B"`},
		{"node event span", []sim.Job{late("A", 6e18, s, 0)}, []sim.NodeEvent{{At: -6e18, Node: "n0"}}, `jobs[0] "A"`},
		{"event after span", []sim.Job{late("A", -6e18, s, 0)}, []sim.NodeEvent{{At: 6e18, Node: "n0"}}, `nodeEvents[0]`},
		{"run from a negative origin", []sim.Job{late("A", -10*s, s, 0), late("B", maxDur-15*s, 10*s, 0)}, nil, `job "B"`},
		{"checkpoint grace", []sim.Job{victim, preemptor}, nil, `job "V"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := sim.Run(sim.Uniform(1, 1), tc.jobs, fcfs(scheduler.EASY), sim.Options{NodeEvents: tc.nodes})
			if err == nil {
				t.Fatalf("no error; summary %+v", res.Summary)
			}
			require.True(t, errors.Is(err, sim.ErrTimeRange), "%v", err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestRunAtTheEdgeOfTime: times that reach exactly the last Duration, or
// span all of it, simulate correctly, with few or many plot points: the
// end of the sampler's last bucket, and its width times the points,
// wrapped around, and it looped without end.
func TestRunAtTheEdgeOfTime(t *testing.T) {
	one := func(id string, submit, run time.Duration) sim.Job {
		return sim.Job{ID: id, Submit: submit, Run: run, Members: 1, GPUsPerMember: 1, Tier: scheduler.P3}
	}
	for _, tc := range []struct {
		name     string
		jobs     []sim.Job
		makespan time.Duration
		points   []int
	}{
		// 2^40 points of 1 s cover 100 s; a wider run would fill them.
		{"ends at the last Duration", []sim.Job{one("A", maxDur-100*s, 100*s)}, 100 * s, []int{0, 1, 2, 7, 1 << 40}},
		{"spans every Duration", []sim.Job{one("A", -1<<62, s), one("B", 1<<62-1-s, s)}, maxDur, []int{0, 1, 2, 7}},
		{"from zero to the last Duration", []sim.Job{one("A", 0, s), one("B", maxDur-s, s)}, maxDur, []int{0, 1, 2, 7}},
	} {
		for _, points := range tc.points {
			t.Run(fmt.Sprintf("%s/%d points", tc.name, points), func(t *testing.T) {
				res, err := sim.Run(sim.Uniform(1, 1), tc.jobs, fcfs(scheduler.EASY), sim.Options{MaxPoints: points})
				require.NoError(t, err)
				sum := res.Summary
				require.Equal(t, len(tc.jobs), sum.Completed)
				require.Equal(t, tc.makespan, sum.Makespan)
				require.Zero(t, sum.MaxWait)
				require.Equal(t, 1.0, sum.MeanBoundedSlowdown)
				require.NotEmpty(t, res.Series)
				if points > 0 {
					require.LessOrEqual(t, len(res.Series), points)
				}
				origin := tc.jobs[0].Submit
				for _, p := range res.Series {
					require.GreaterOrEqual(t, p.At, origin)
					require.Positive(t, p.Width)
				}
			})
		}
	}
}
