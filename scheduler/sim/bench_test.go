package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/trace"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
)

// BenchmarkSimulateKTH replays the first 10,000 jobs of the KTH-SP2 log
// on 100 one-GPU nodes with EASY backfill.
func BenchmarkSimulateKTH(b *testing.B) {
	jobs := simJobs(readKTH(b), 1)[:10000]
	cfg := scheduler.Config{Backfill: scheduler.EASY, Order: scheduler.TierOrder{}}
	for b.Loop() {
		if _, err := sim.Run(sim.Uniform(100, 1), jobs, cfg, sim.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSimulateKTH100k replays 100,000 jobs: the KTH-SP2 log repeated
// end to end (each copy shifted by the log's span), on 100 one-GPU nodes
// with EASY backfill.
func BenchmarkSimulateKTH100k(b *testing.B) {
	one := simJobs(readKTH(b), 1)
	span := one[len(one)-1].Submit + one[len(one)-1].Limit
	jobs := make([]sim.Job, 0, 100000)
	for c := 0; len(jobs) < cap(jobs); c++ {
		for _, j := range one {
			if len(jobs) == cap(jobs) {
				break
			}
			j.ID = padID(len(jobs))
			j.Submit += span * time.Duration(c)
			jobs = append(jobs, j)
		}
	}
	cfg := scheduler.Config{Backfill: scheduler.EASY, Order: scheduler.TierOrder{}}
	for b.Loop() {
		if _, err := sim.Run(sim.Uniform(100, 1), jobs, cfg, sim.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSimulatePhilly10k replays the first 10,000 jobs of the
// normalized Philly GPU trace on 64 nodes of 8 GPUs, FCFS with EASY
// backfill, as examples/simulate does. It is skipped when the shared
// trace is absent.
func BenchmarkSimulatePhilly10k(b *testing.B) {
	tr, err := trace.Read(sharedTrace(b, "gpu/philly-pollux-osdi21-normalized.csv"), "csv")
	require.NoError(b, err)
	jobs := simJobs(tr, 8)[:10000]
	cfg := scheduler.Config{Backfill: scheduler.EASY, Order: scheduler.TierOrder{}}
	for b.Loop() {
		if _, err := sim.Run(sim.Uniform(64, 8), jobs, cfg, sim.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
