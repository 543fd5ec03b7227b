package scheduler_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestVictimCandidatesAsDocumented pins what the VictimSelector doc says
// a candidate holds: the job's ID, tier and checkpoint grace, the time
// since its start as WorkLost and Ran (the longest duration for a job
// whose start is unknown), and Borrowed for a team above its nominal
// quota.
func TestVictimCandidatesAsDocumented(t *testing.T) {
	a := polRunning("a", time.Hour, "n00")
	b := polRunning("b", time.Hour, "n01")
	b.Started = time.Time{}
	c := polRunning("c", 2*time.Hour, "n02")
	c.Team, c.CheckpointGrace = "other", 3*time.Minute
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: policyCluster(3),
		Teams: []scheduler.Team{{Name: "batch", Share: 1, Quota: &scheduler.Quota{GPUs: 8, BorrowLimit: 8}}},
		Jobs:  []scheduler.Job{a, b, c, polPending("p", "x", 1, 3, time.Hour, 0)}}
	var seen map[string]preempt.Candidate
	show := scheduler.VictimFunc(func(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool) {
		seen = map[string]preempt.Candidate{}
		for _, c := range cands {
			seen[c.ID] = c
		}
		return preempt.Select(ix, r, s, cands)
	})
	_, err := scheduler.New(scheduler.Config{Victims: show}).Step(snap)
	require.NoError(t, err)
	require.Len(t, seen, 3)
	for id, want := range map[string]struct {
		ran      time.Duration
		grace    time.Duration
		borrowed bool
	}{
		"a": {time.Hour, time.Minute, true},
		"b": {math.MaxInt64, time.Minute, true},
		"c": {2 * time.Hour, 3 * time.Minute, false},
	} {
		got := seen[id]
		require.Equal(t, 3, got.Tier, id)
		require.Equal(t, want.ran, got.Ran, id)
		require.Equal(t, want.ran, got.WorkLost, id)
		require.Equal(t, want.grace, got.Grace, id)
		require.Equal(t, want.borrowed, got.Borrowed, id)
		require.Equal(t, 8, got.NumGPUs(), id)
	}
}
