package sim

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/measure"
	"github.com/gpusched/gpusched/scheduler"
)

// allocated returns the bytes the heap allocated while f ran.
func allocated(f func()) uint64 {
	bytes, _ := measure.Allocated(f)
	return bytes
}

// Showing Step a prefix of a flat pool changes nothing: on random
// workloads of every backfill mode, with tiers that preempt, time limits,
// graces, checkpoints and jobs larger than the pool, a run that narrows
// and one that always shows the whole pool give the same results, every
// attempt's allocation included.
func TestPoolPrefixDecidesAsWhole(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 40).Draw(rt, "nodes")
		var jobs []Job
		for i := range rapid.IntRange(1, 25).Draw(rt, "jobs") {
			j := Job{
				ID:              fmt.Sprintf("j%02d", i),
				Submit:          time.Duration(rapid.IntRange(0, 40).Draw(rt, "submit")) * time.Second,
				Run:             time.Duration(rapid.IntRange(1, 30).Draw(rt, "run")) * time.Second,
				Members:         rapid.IntRange(1, nodes+2).Draw(rt, "members"),
				GPUsPerMember:   1,
				Team:            rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "team"),
				Tier:            scheduler.TierN(rapid.IntRange(0, 3).Draw(rt, "tier")),
				Kind:            rapid.SampledFrom([]scheduler.Kind{scheduler.Training, scheduler.Inference}).Draw(rt, "kind"),
				CheckpointGrace: time.Duration(rapid.IntRange(0, 2).Draw(rt, "grace")) * time.Second,
			}
			if rapid.Bool().Draw(rt, "hasLimit") {
				j.Limit = time.Duration(rapid.IntRange(1, 40).Draw(rt, "limit")) * time.Second
			}
			jobs = append(jobs, j)
		}
		cfg := scheduler.Config{
			Order:         scheduler.TierOrder{},
			Backfill:      rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative, scheduler.NoBackfill}).Draw(rt, "backfill"),
			BackfillOrder: rapid.SampledFrom([]scheduler.BackfillOrder{scheduler.ByPriority, scheduler.ShortestFirst}).Draw(rt, "order"),
			Reservations:  rapid.IntRange(0, 3).Draw(rt, "reservations"),
		}
		opt := Options{RecordRuns: true, CheckpointInterval: time.Duration(rapid.IntRange(0, 5).Draw(rt, "checkpoint")) * time.Second}
		c := Uniform(nodes, 1)
		require.True(rt, narrowable(&c, &cfg, &opt))
		whole, errWhole := simulate(c, jobs, cfg, opt, false)
		prefix, errPrefix := simulate(c, jobs, cfg, opt, true)
		require.Equal(rt, errWhole, errPrefix)
		if !reflect.DeepEqual(whole, prefix) {
			rt.Fatalf("the prefix decides otherwise:\n whole  %+v\n prefix %+v", whole.Jobs, prefix.Jobs)
		}
	})
}

// flatJobs are n jobs of 1 to 8 processors arriving every 10 s and running
// 50 to 500 s: a queue on 100 processors, none on 20,000.
func flatJobs(n int) []Job {
	jobs := make([]Job, n)
	for i := range jobs {
		run := time.Duration(50+(i*37)%450) * time.Second
		jobs[i] = Job{ID: fmt.Sprintf("j%04d", i), Submit: time.Duration(i*10) * time.Second,
			Run: run, Limit: run, Members: 1 + i%8, GPUsPerMember: 1}
	}
	return jobs
}

// A flat pool of 20,000 processors costs what one of 100 does for the same
// jobs, once its nodes are set up: Step is shown the nodes in use and
// enough free ones for the queue, not the whole pool. (Shown the whole
// pool, each of the run's ~800 Steps allocates per node.)
func TestFlatPoolCostIndependentOfSize(t *testing.T) {
	jobs := flatJobs(400)
	cfg := scheduler.Config{Order: scheduler.TierOrder{}, Backfill: scheduler.EASY}
	cost := func(n int) uint64 {
		c := Uniform(n, 1)
		return allocated(func() {
			_, err := Run(c, jobs, cfg, Options{})
			require.NoError(t, err)
		})
	}
	small, large := cost(100), cost(20000)
	// Setting up the pool (a copy of the nodes, the name index, the GPUs
	// held) costs a few hundred bytes per node, once.
	const setupPerNode = 400
	t.Logf("allocated: %d bytes on 100 processors, %d on 20,000", small, large)
	require.LessOrEqual(t, large, 2*small+setupPerNode*20000,
		"20,000 processors cost %d bytes, 100 cost %d", large, small)
}

// The same holds for an SWF header's claim: a pool of 1,048,576
// processors for 50 one-processor jobs.
func TestHugePoolFewJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("sets up a million nodes")
	}
	jobs := make([]Job, 50)
	for i := range jobs {
		jobs[i] = Job{ID: fmt.Sprintf("j%02d", i), Submit: time.Duration(i*5) * time.Second,
			Run: 100 * time.Second, Members: 1 + i, GPUsPerMember: 1}
	}
	c := Uniform(1<<20, 1)
	cfg := scheduler.Config{Order: scheduler.TierOrder{}, Backfill: scheduler.EASY}
	steps, shown := 0, 0
	r, err := newRunner(c, jobs, cfg, Options{})
	require.NoError(t, err)
	r.opt.Progress = func(int, int) { steps++; shown += len(r.snap.Cluster.Nodes) }
	require.NoError(t, r.loop())
	// At most every job's processors at once: 50·51/2.
	require.LessOrEqual(t, shown, steps*50*51/2, "nodes shown over %d Steps", steps)
}

// Uniform names nodes "n" and the index zero-padded to the width of the
// largest, so that name order is index order.
func TestUniformNames(t *testing.T) {
	for _, n := range []int{0, 1, 2, 9, 10, 11, 100, 101, 1000} {
		c := Uniform(n, 2)
		require.Len(t, c.Nodes, n)
		width := len(fmt.Sprint(max(n-1, 0)))
		for i, node := range c.Nodes {
			require.Equal(t, fmt.Sprintf("n%0*d", width, i), node.Name)
			require.Equal(t, 2, node.GPUs)
		}
	}
}
