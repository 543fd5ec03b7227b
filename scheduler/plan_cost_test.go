package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanWalkCost holds the walks of a conservative Step with a plan
// (counted, not timed), on the benchmark snapshots of 2,048 and 16,384
// nodes and 10,000 pending jobs after a first Step, its reservations
// passed back: every promise is kept, so the compression tries re-pins
// while every reservation is in the profile, and each kept preemptor
// spares the jobs that leave its promised GPUs in time. A re-pin's search
// for the reservations in its way stops walking a node's list once none
// of the GPUs it wants can be freed, and sparing looks only at the
// candidates on the promise's nodes: together at most one entry per
// pending job and eight per node. Walking each list to the end of a run
// without a time limit fails it on both sizes, looking at every candidate
// for each kept preemptor on the larger.
func TestPlanWalkCost(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds two benchmark snapshots; run without -short and -race")
	}
	const pending = 10000
	for _, nodes := range []int{2048, 16384} {
		walked := planWalks(t, nodes, pending)
		require.LessOrEqual(t, walked, pending+8*nodes, "nodes %d", nodes)
	}
}

// planWalks is the count of TestPlanWalkCost on the benchmark snapshot
// of nodes and pending jobs.
func planWalks(t *testing.T, nodes, pending int) int {
	snap := benchSnapshot(nodes, pending)
	cfg := Config{Backfill: Conservative}
	first, err := New(cfg).Step(snap)
	require.NoError(t, err)
	next := applied(snap, first)
	next.Plan = first.Reservations
	d, walked, err := stepCountingWalks(cfg, next)
	require.NoError(t, err)
	want, err := New(cfg).Step(next)
	require.NoError(t, err)
	require.Equal(t, want.Reservations, d.Reservations, "the counting Step decides as Step does")
	t.Logf("nodes %d: %d reservations kept, %d entries walked", nodes, len(d.Reservations), walked)
	return walked
}
