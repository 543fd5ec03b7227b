package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// Evictions under way make waiting as fast as preempting only for a start
// on the GPUs of the jobs being evicted.
func TestPreemptionIgnoresUnrelatedEvictions(t *testing.T) {
	now := gen.Now
	one := func(node string) topology.Allocation {
		return topology.Allocation{{Node: node, GPUs: []int{0, 1, 2, 3}}}
	}
	cluster := topology.Cluster{Nodes: []topology.Node{
		{Name: "a", GPUs: 4}, {Name: "b", GPUs: 4}, {Name: "gone", GPUs: 4, State: topology.Down},
	}}
	modes := []scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative}

	// E checkpoints for an hour on a down node: its GPUs serve no one.
	// P may preempt V (no grace) and start now, or wait 30 minutes for
	// V's limit. It must preempt: E's eviction does not make waiting
	// any faster. (It used to wait, as if the hour E checkpoints were
	// the time any preemption takes.)
	t.Run("elsewhere", func(t *testing.T) {
		snap := &scheduler.Snapshot{Now: now, Cluster: cluster, Jobs: []scheduler.Job{
			{ID: "E", Tier: scheduler.P3, Members: 1, GPUsPerMember: 4, State: scheduler.Evicting, EvictedAt: now, CheckpointGrace: time.Hour, Allocation: one("gone")},
			{ID: "P", Tier: scheduler.P0, Members: 1, GPUsPerMember: 4, Submitted: now},
			{ID: "U", Tier: scheduler.P0, Members: 1, GPUsPerMember: 4, State: scheduler.Running, Started: now.Add(-time.Hour), Allocation: one("b")},
			{ID: "V", Tier: scheduler.P3, Members: 1, GPUsPerMember: 4, State: scheduler.Running, Started: now.Add(-time.Hour), TimeLimit: 90 * time.Minute, Allocation: one("a")},
		}}
		for _, mode := range modes {
			d, err := scheduler.New(scheduler.Config{Backfill: mode}).Step(snap)
			require.NoError(t, err)
			require.Equal(t, []scheduler.Eviction{{Job: "V", Reason: scheduler.EvictPreempted, By: "P", Requeue: true}}, d.Evictions, mode)
			require.Equal(t, []scheduler.Reservation{{Job: "P", Start: now, Allocation: one("a")}}, d.Reservations, mode)
		}
	})

	// The Step after a preemption: V, P's victim, checkpoints on a for
	// ten more minutes, and P is pending again. W (no grace) could be
	// stopped to start P now, but P waits for V's GPUs: preempting again
	// would stop a second job for the same gang.
	t.Run("own victims", func(t *testing.T) {
		snap := &scheduler.Snapshot{Now: now, Cluster: cluster, Jobs: []scheduler.Job{
			{ID: "P", Tier: scheduler.P0, Members: 1, GPUsPerMember: 4, Submitted: now.Add(-time.Minute)},
			{ID: "V", Tier: scheduler.P3, Members: 1, GPUsPerMember: 4, State: scheduler.Evicting, EvictedAt: now.Add(-time.Minute), CheckpointGrace: 11 * time.Minute, Started: now.Add(-time.Hour), Allocation: one("a")},
			{ID: "W", Tier: scheduler.P3, Members: 1, GPUsPerMember: 4, State: scheduler.Running, Started: now.Add(-time.Hour), Allocation: one("b")},
		}}
		for _, mode := range modes {
			d, err := scheduler.New(scheduler.Config{Backfill: mode}).Step(snap)
			require.NoError(t, err)
			require.Empty(t, d.Evictions, mode)
			require.Equal(t, []scheduler.Reservation{{Job: "P", Start: now.Add(10 * time.Minute), Allocation: one("a")}}, d.Reservations, mode)
		}
	})
}
