package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// A planning horizon shorter than a victim's grace does not undo a
// preemption in the next Step. P evicts R (no grace) and V (five
// minutes) and is reserved n0 at +5m, beyond the one-minute horizon, as
// preemptions may be. A minute later R is back in the queue and V still
// checkpoints: P must keep its claim on n0 until V is gone. It used to
// wait without one (its start lay beyond the horizon), R started again
// on the GPUs it had just left, and P preempted it a second time.
func TestClaimBeyondHorizonWhileVictimsCheckpoint(t *testing.T) {
	now := gen.Now
	run := func(id string, gpus []int, grace time.Duration) scheduler.Job {
		return scheduler.Job{ID: id, Tier: scheduler.P3, Members: 1, GPUsPerMember: len(gpus), State: scheduler.Running,
			Started: now.Add(-time.Hour), CheckpointGrace: grace, Allocation: topology.Allocation{{Node: "n0", GPUs: gpus}}}
	}
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4}}}
	h := host.New(c, run("R", []int{0, 1}, 0), run("V", []int{2, 3}, 5*time.Minute),
		scheduler.Job{ID: "P", Tier: scheduler.P0, Members: 1, GPUsPerMember: 4, Submitted: now.Add(-time.Minute)})
	for _, mode := range []scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative} {
		cfg := scheduler.Config{Backfill: mode, Order: scheduler.TierOrder{}, Horizon: time.Minute}
		s := h.Snapshot(now)
		d, err := scheduler.New(cfg).Step(s)
		require.NoError(t, err)
		require.Len(t, d.Evictions, 2, "%v: %+v", mode, d)
		require.Equal(t, []scheduler.Reservation{{Job: "P", Start: now.Add(5 * time.Minute),
			Allocation: topology.Allocation{{Node: "n0", GPUs: []int{0, 1, 2, 3}}}}}, d.Reservations)
		next := host.New(c, s.Jobs...)
		next.Apply(now, d)
		later := now.Add(time.Minute)
		next.Advance(later)
		s = next.Snapshot(later)
		d, err = scheduler.New(cfg).Step(s)
		require.NoError(t, err)
		require.Empty(t, d.Placements, "%v: R must not start on the GPUs P waits for\n%s", mode, dump(s, d))
		require.Empty(t, d.Evictions, mode)
		require.Equal(t, []scheduler.Reservation{{Job: "P", Start: now.Add(5 * time.Minute),
			Allocation: topology.Allocation{{Node: "n0", GPUs: []int{0, 1, 2, 3}}}}}, d.Reservations, "%v\n%s", mode, dump(s, d))
		require.NoError(t, checkAll(newWorld(s, d, cfg), checkNoDoubleAllocation, checkNoJobLost, checkReservationsHold))
	}
}
