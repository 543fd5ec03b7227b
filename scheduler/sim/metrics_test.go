package sim_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
	"github.com/gpusched/gpusched/topology"
)

// TestSummaryLongWaitsDoNotOverflow queues 100 jobs of 100 days at once
// on one GPU. FCFS runs them one after another, so job i waits i·100 days
// and the waits sum to 4950·100 days, about 4.3e19 ns: more than an int64
// of nanoseconds holds (9.2e18). Summing time.Durations wrapped around:
// here the mean wait came out as 680 days instead of 4950, and on the
// whole Philly trace the mean wait and flow time came out negative.
func TestSummaryLongWaitsDoNotOverflow(t *testing.T) {
	const n = 100
	const day = 24 * time.Hour
	const run = 100 * day
	jobs := make([]sim.Job, n)
	for i := range jobs {
		jobs[i] = sim.Job{ID: fmt.Sprintf("j%03d", i), Team: []string{"even", "odd"}[i%2],
			Members: 1, GPUsPerMember: 1, Run: run, Tier: scheduler.P3}
	}
	require.Greater(t, float64(n*(n-1)/2)*float64(run), float64(math.MaxInt64), "the summed waits must exceed an int64 of nanoseconds")

	res, err := sim.Run(sim.Uniform(1, 1), jobs, fcfs(scheduler.EASY), sim.Options{})
	require.NoError(t, err)
	for i, j := range res.Jobs {
		require.Equal(t, time.Duration(i)*run, j.Wait, j.ID)
	}
	s := res.Summary
	require.Equal(t, n, s.Finished)
	// Waits 0, 1, …, 99 times run: mean 49.5, median (49+50)/2, p95 the
	// 95th value (94), max 99. Flow times are 1 … 100 runs: mean 50.5.
	require.Equal(t, 99*run/2, s.MeanWait)
	require.Equal(t, 99*run/2, s.MedianWait)
	require.Equal(t, 94*run, s.P95Wait)
	require.Equal(t, 99*run, s.MaxWait)
	require.Equal(t, 101*run/2, s.MeanFlowTime)
	require.Equal(t, time.Duration(n)*run, s.Makespan)
	// Bounded slowdown of job i is i+1: mean 50.5.
	require.InDelta(t, 50.5, s.MeanBoundedSlowdown, 1e-9)
	require.InDelta(t, 1.0, s.Utilization, 1e-12)
	require.InDelta(t, float64(n)*run.Hours(), s.GPUHours, 1e-6)
	// Even jobs wait 0, 2, …, 98 runs (mean 49), odd ones 1, 3, …, 99
	// (mean 50); each sum overflows on its own too.
	require.Len(t, s.Teams, 2)
	require.Equal(t, "even", s.Teams[0].Team)
	require.Equal(t, 49*run, s.Teams[0].MeanWait)
	require.Equal(t, 50*run, s.Teams[1].MeanWait)
	require.InDelta(t, 50.0, s.Teams[0].MeanBoundedSlowdown, 1e-9)
	require.InDelta(t, 51.0, s.Teams[1].MeanBoundedSlowdown, 1e-9)
	require.InDelta(t, 1.0, s.Jain, 1e-12)
}

// Utilization counts the GPU time held between the first submit and the
// last finish, the span of the makespan: time held by a job that never
// finishes, after the last finish, does not count (it took utilization
// to 2 here). GPU-hours count all of it.
func TestUtilizationWithinMakespan(t *testing.T) {
	s := time.Second
	jobs := []sim.Job{
		{ID: "a", Submit: 0, Run: 5 * s, Members: 1, GPUsPerMember: 1},
		{ID: "b", Submit: 5 * s, Run: 10 * s, Members: 1, GPUsPerMember: 1},
	}
	c := sim.Uniform(1, 1)
	res, err := sim.Run(c, jobs, scheduler.Config{}, sim.Options{
		NodeEvents: []sim.NodeEvent{{At: 10 * s, Node: c.Nodes[0].Name, State: topology.Down}}})
	require.NoError(t, err)
	require.Equal(t, 5*s, res.Summary.Makespan)
	require.InDelta(t, 1.0, res.Summary.Utilization, 1e-9)
	require.InDelta(t, 10.0/3600, res.Summary.GPUHours, 1e-9)
}

// A policy that preempts and requeues jobs in turn without end makes Run
// fail instead of running forever. With time limits not enforced, backfill
// trusts A's and B's one-second limits: each is placed again next to P's
// reservation, overruns, and is preempted again, every second.
func TestRunStopsEndlessPreemption(t *testing.T) {
	s := time.Second
	jobs := []sim.Job{
		{ID: "A", Submit: 0, Members: 1, GPUsPerMember: 2, Run: 100 * s, Limit: s, CheckpointGrace: s, Tier: scheduler.P2},
		{ID: "B", Submit: s, Members: 1, GPUsPerMember: 2, Run: 100 * s, Limit: s, CheckpointGrace: s, Tier: scheduler.P2},
		{ID: "C", Submit: 0, Members: 1, GPUsPerMember: 2, Run: 5 * s, Tier: scheduler.P2},
		{ID: "P", Submit: 5 * s, Members: 2, GPUsPerMember: 2, Run: 10 * s, Tier: scheduler.P1},
	}
	_, err := sim.Run(sim.Uniform(2, 2), jobs, scheduler.Config{IgnoreTimeLimits: true}, sim.Options{MaxPreemptions: 50})
	require.ErrorContains(t, err, "more than 50 preemptions while no job arrived or finished")
	// With limits enforced the same workload ends.
	res, err := sim.Run(sim.Uniform(2, 2), jobs, scheduler.Config{}, sim.Options{MaxPreemptions: 50})
	require.NoError(t, err)
	require.Equal(t, len(jobs), res.Summary.Finished)
}

// A long job preempted by each of a stream of arrivals, more often than
// MaxPreemptions, is not an endless cycle: every preemption follows an
// arrival, and the run ends.
func TestManyPreemptionsThatEnd(t *testing.T) {
	s := time.Second
	jobs := []sim.Job{{ID: "long", Team: "a", Members: 1, GPUsPerMember: 1, Run: 1000 * s, Tier: scheduler.P3, Kind: scheduler.Inference}}
	for i := range 60 {
		jobs = append(jobs, sim.Job{ID: fmt.Sprintf("hi%03d", i), Team: "b", Members: 1, GPUsPerMember: 1,
			Run: s, Tier: scheduler.P0, Submit: time.Duration(1+3*i) * s})
	}
	res, err := sim.Run(sim.Uniform(1, 1), jobs, scheduler.Config{}, sim.Options{MaxPreemptions: 50})
	require.NoError(t, err)
	require.Equal(t, len(jobs), res.Summary.Finished)
	require.Equal(t, 60, res.Jobs[0].Preemptions)

	// Sixty arrivals each preempt a different long job, and nothing
	// finishes until they are all in: arrivals are progress too.
	jobs = nil
	for i := range 60 {
		jobs = append(jobs, sim.Job{ID: fmt.Sprintf("lo%03d", i), Team: "a", Members: 1, GPUsPerMember: 1,
			Run: 100 * s, Tier: scheduler.P3, Kind: scheduler.Inference},
			sim.Job{ID: fmt.Sprintf("hi%03d", i), Team: "b", Members: 1, GPUsPerMember: 1,
				Run: 100 * s, Tier: scheduler.P0, Submit: time.Duration(1+i) * s})
	}
	res, err = sim.Run(sim.Uniform(60, 1), jobs, scheduler.Config{}, sim.Options{MaxPreemptions: 50})
	require.NoError(t, err)
	require.Equal(t, len(jobs), res.Summary.Finished)
	require.Equal(t, 60, res.Summary.Preemptions)
}

// Rounding in the sum of float seconds does not take utilization above 1.
func TestUtilizationRounding(t *testing.T) {
	ms := time.Millisecond
	jobs := []sim.Job{{ID: "a", Members: 1, GPUsPerMember: 1, Run: 100 * ms},
		{ID: "b", Members: 1, GPUsPerMember: 1, Run: 100 * ms}, {ID: "c", Members: 1, GPUsPerMember: 1, Run: 100 * ms}}
	res, err := sim.Run(sim.Uniform(1, 1), jobs, scheduler.Config{Order: scheduler.TierOrder{}}, sim.Options{})
	require.NoError(t, err)
	require.LessOrEqual(t, res.Summary.Utilization, 1.0)
	require.InDelta(t, 1.0, res.Summary.Utilization, 1e-12)
}
