package scheduler_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
)

// TestPropertyConcurrentSteps checks the promise of the Scheduler doc:
// with the built-in policies, several goroutines may call Step, Explain
// and Validate at once on one Scheduler and one snapshot, and each gets
// the answer it would get alone. Under the race detector (as CI runs
// it), a write to shared state fails the test too.
func TestPropertyConcurrentSteps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot(t)
		cfg := scheduler.Config{Backfill: rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative, scheduler.NoBackfill}).Draw(t, "backfill")}
		sched := scheduler.New(cfg)
		want, err := sched.Step(gen.Clone(s))
		require.NoError(t, err)
		var job string
		if len(s.Jobs) > 0 {
			job = s.Jobs[rapid.IntRange(0, len(s.Jobs)-1).Draw(t, "job")].ID
		}
		wantE, err := sched.Explain(gen.Clone(s), job)
		if len(s.Jobs) > 0 {
			require.NoError(t, err)
		}
		const n = 4
		got := make([]*scheduler.Decision, n)
		gotE := make([]*scheduler.Explanation, n)
		errs := make([]error, 3*n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(3)
			go func() { defer wg.Done(); got[i], errs[3*i] = sched.Step(s) }()
			go func() { defer wg.Done(); gotE[i], errs[3*i+1] = sched.Explain(s, job) }()
			go func() { defer wg.Done(); errs[3*i+2] = sched.Validate(s) }()
		}
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[3*i])
			require.NoError(t, errs[3*i+2])
			require.Equal(t, want, got[i])
			if len(s.Jobs) > 0 {
				require.NoError(t, errs[3*i+1])
				require.Equal(t, wantE, gotE[i])
			}
		}
	})
}
