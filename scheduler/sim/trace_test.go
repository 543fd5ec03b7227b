package sim_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/trace"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
)

// repoRoot walks up from the working directory to the directory holding
// go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// sharedTrace returns the path of a trace in the shared trace directory
// next to the repository, skipping the test when it is absent.
func sharedTrace(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "..", "shared", "traces", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("trace %s not available: %v", rel, err)
	}
	return p
}

// simJobs converts trace jobs for nodes of g GPUs (see sim.Shape). IDs
// are the trace positions, zero-padded so that ID order is trace order.
func simJobs(tr *trace.Trace, g int) []sim.Job {
	jobs := make([]sim.Job, len(tr.Jobs))
	for i, j := range tr.Jobs {
		m, per := sim.Shape(j.Procs, g)
		jobs[i] = sim.Job{
			ID:      padID(i),
			Submit:  time.Duration(j.Submit) * time.Second,
			Run:     time.Duration(j.Run) * time.Second,
			Limit:   time.Duration(j.Limit) * time.Second,
			Members: m, GPUsPerMember: per,
			Team: j.Team, Tier: j.Tier,
		}
	}
	return jobs
}

func padID(i int) string {
	const digits = "0123456789"
	b := []byte("j0000000")
	for k := len(b) - 1; k > 0 && i > 0; k-- {
		b[k] = digits[i%10]
		i /= 10
	}
	return string(b)
}

func readKTH(t testing.TB) *trace.Trace {
	tr, err := trace.Read(sharedTrace(t, "swf/KTH-SP2-1996-2-predictsim-filtered.swf"), "swf")
	require.NoError(t, err)
	return tr
}

func TestKTHPublished(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("replays 28,481 jobs twice; skipped in short mode and under the race detector")
	}
	tr := readKTH(t)
	require.Len(t, tr.Jobs, 28481)
	for _, tc := range []struct {
		name string
		cfg  scheduler.Config
		bsld float64
	}{
		{"easy", scheduler.Config{Backfill: scheduler.EASY, Order: scheduler.TierOrder{}}, 92.5765},
		{"easy-sjbf", scheduler.Config{Backfill: scheduler.EASY, Order: scheduler.TierOrder{}, BackfillOrder: scheduler.ShortestFirst}, 69.4054},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res, err := sim.Run(sim.Uniform(100, 1), simJobs(tr, 1), tc.cfg, sim.Options{})
			require.NoError(t, err)
			s := res.Summary
			t.Logf("%s: bsld %.4f max %.1f flow %.1f util %.4f steps %d in %s", tc.name, s.MeanBoundedSlowdown, s.MaxBoundedSlowdown, s.MeanFlowTime.Seconds(), s.Utilization, s.Steps, time.Since(start))
		})
	}
}
