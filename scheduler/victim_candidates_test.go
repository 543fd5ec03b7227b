package scheduler_test

import (
	"math"
	"slices"
	"strings"
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

// TestCustomSelectorMayReorderCandidates: a custom selector that sorts
// its candidates its own way in place (here by ID, descending) before
// calling preempt.Select returns indices into them as it left them. Step
// evicts the job those indices name, the one whose GPUs the preemptor is
// reserved on; it used to map them through the order it handed out, and
// evicted the other job while reserving GPUs the first kept.
func TestCustomSelectorMayReorderCandidates(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8}, {Name: "n1", GPUs: 8}}}
	run := func(id, node string, ago time.Duration) scheduler.Job {
		return scheduler.Job{ID: id, Tier: scheduler.P3, Members: 1, GPUsPerMember: 8, State: scheduler.Running,
			Started: now.Add(-ago), Allocation: topology.Allocation{{Node: node, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}}
	}
	snap := &scheduler.Snapshot{Now: now, Cluster: c, Jobs: []scheduler.Job{
		run("a", "n0", time.Minute), run("b", "n1", time.Hour),
		{ID: "p", Tier: scheduler.P1, Members: 1, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now},
	}}
	mine := scheduler.VictimFunc(func(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool) {
		slices.SortFunc(cands, func(x, y preempt.Candidate) int { return strings.Compare(y.ID, x.ID) })
		return preempt.Select(ix, r, s, cands)
	})
	d, err := scheduler.New(scheduler.Config{Victims: mine}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Evictions, 1)
	require.Len(t, d.Reservations, 1)
	evicted := d.Evictions[0].Job
	reservedOn := d.Reservations[0].Allocation[0].Node
	holder := map[string]string{"n0": "a", "n1": "b"}[reservedOn]
	require.Equal(t, holder, evicted, "evicted %s, but p is reserved on %s, which %s holds and keeps", evicted, reservedOn, holder)
}
