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
			{ID: "E", Tier: 3, Members: 1, GPUsPerMember: 4, State: scheduler.Evicting, EvictedAt: now, CheckpointGrace: time.Hour, Allocation: one("gone")},
			{ID: "P", Tier: 0, Members: 1, GPUsPerMember: 4, Submitted: now},
			{ID: "U", Tier: 0, Members: 1, GPUsPerMember: 4, State: scheduler.Running, Started: now.Add(-time.Hour), Allocation: one("b")},
			{ID: "V", Tier: 3, Members: 1, GPUsPerMember: 4, State: scheduler.Running, Started: now.Add(-time.Hour), TimeLimit: 90 * time.Minute, Allocation: one("a")},
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
			{ID: "P", Tier: 0, Members: 1, GPUsPerMember: 4, Submitted: now.Add(-time.Minute)},
			{ID: "V", Tier: 3, Members: 1, GPUsPerMember: 4, State: scheduler.Evicting, EvictedAt: now.Add(-time.Minute), CheckpointGrace: 11 * time.Minute, Started: now.Add(-time.Hour), Allocation: one("a")},
			{ID: "W", Tier: 3, Members: 1, GPUsPerMember: 4, State: scheduler.Running, Started: now.Add(-time.Hour), Allocation: one("b")},
		}}
		for _, mode := range modes {
			d, err := scheduler.New(scheduler.Config{Backfill: mode}).Step(snap)
			require.NoError(t, err)
			require.Empty(t, d.Evictions, mode)
			require.Equal(t, []scheduler.Reservation{{Job: "P", Start: now.Add(10 * time.Minute), Allocation: one("a")}}, d.Reservations, mode)
		}
	})
}

// A start that takes GPUs being evicted and GPUs a running job holds
// until its limit counts as fast as preempting only until the evictions
// of the GPUs it takes end. Here P could wait 30 minutes for a (E1 is
// gone in a minute, V reaches its limit at 30), or stop W (no grace) and
// start on c now. It must preempt: E2, checkpointing for an hour on b,
// which P does not take, must not make the 30 minutes count as fast.
func TestPreemptionMixedStartOnEvictingGPUs(t *testing.T) {
	now := gen.Now
	on := func(node string, gpus ...int) topology.Allocation {
		return topology.Allocation{{Node: node, GPUs: gpus}}
	}
	cluster := topology.Cluster{Nodes: []topology.Node{{Name: "a", GPUs: 2}, {Name: "b", GPUs: 2}, {Name: "c", GPUs: 2}}}
	snap := &scheduler.Snapshot{Now: now, Cluster: cluster, Jobs: []scheduler.Job{
		{ID: "E1", Tier: 3, Members: 1, GPUsPerMember: 1, State: scheduler.Evicting, EvictedAt: now, CheckpointGrace: time.Minute, Allocation: on("a", 0)},
		{ID: "E2", Tier: 3, Members: 1, GPUsPerMember: 2, State: scheduler.Evicting, EvictedAt: now, CheckpointGrace: time.Hour, Allocation: on("b", 0, 1)},
		{ID: "P", Tier: 0, Members: 1, GPUsPerMember: 2, Submitted: now},
		{ID: "V", Tier: 0, Members: 1, GPUsPerMember: 1, State: scheduler.Running, Started: now.Add(-time.Hour), TimeLimit: 90 * time.Minute, Allocation: on("a", 1)},
		{ID: "W", Tier: 3, Members: 1, GPUsPerMember: 2, State: scheduler.Running, Started: now.Add(-time.Hour), Allocation: on("c", 0, 1)},
	}}
	for _, mode := range []scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative} {
		d, err := scheduler.New(scheduler.Config{Backfill: mode}).Step(snap)
		require.NoError(t, err)
		require.Equal(t, []scheduler.Eviction{{Job: "W", Reason: scheduler.EvictPreempted, By: "P", Requeue: true}}, d.Evictions, mode)
		require.Equal(t, []scheduler.Reservation{{Job: "P", Start: now, Allocation: on("c", 0, 1)}}, d.Reservations, mode)
	}
}
