package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestHeldAcrossFailuresDocumented checks the documented behaviour of
// snapshots that look contradictory but are valid (see Job.Started,
// Job.EvictedAt and Job.Allocation): a running job on an unhealthy GPU
// or a draining node keeps running, and the GPU is given to no one after
// it; an evicting job on a down node is not evicted again and holds its
// GPUs until evictedAt + checkpointGrace, even when evictedAt is after
// now; a running job with no start is never past its limit, which counts
// from now.
func TestHeldAcrossFailuresDocumented(t *testing.T) {
	now := gen.Now
	one := func(n string, g ...int) topology.Allocation { return topology.Allocation{{Node: n, GPUs: g}} }
	c := topology.Cluster{Nodes: []topology.Node{
		{Name: "sick", GPUs: 2, Unhealthy: []int{0}},
		{Name: "drain", GPUs: 2, State: topology.Draining},
		{Name: "down", GPUs: 2, State: topology.Down},
		{Name: "late", GPUs: 2},
		{Name: "nostart", GPUs: 2},
	}}
	jobs := []scheduler.Job{
		{ID: "S", Tier: scheduler.P0, Members: 1, GPUsPerMember: 2, State: scheduler.Running, Started: now.Add(-2 * time.Hour), TimeLimit: 3 * time.Hour, Allocation: one("sick", 0, 1)},
		{ID: "D", Tier: scheduler.P0, Members: 1, GPUsPerMember: 2, State: scheduler.Running, Started: now.Add(-2 * time.Hour), TimeLimit: 3 * time.Hour, Allocation: one("drain", 0, 1)},
		{ID: "E", Tier: scheduler.P0, Members: 1, GPUsPerMember: 2, State: scheduler.Evicting, EvictedAt: now.Add(-time.Minute), CheckpointGrace: time.Hour, Allocation: one("down", 0, 1)},
		{ID: "F", Tier: scheduler.P0, Members: 1, GPUsPerMember: 2, State: scheduler.Evicting, EvictedAt: now.Add(time.Hour), CheckpointGrace: 10 * time.Minute, Allocation: one("late", 0, 1)},
		{ID: "N", Tier: scheduler.P0, Members: 1, GPUsPerMember: 2, State: scheduler.Running, TimeLimit: 2 * time.Hour, CheckpointGrace: 5 * time.Minute, Allocation: one("nostart", 0, 1)},
		{ID: "P", Tier: scheduler.P0, Members: 1, GPUsPerMember: 2, Submitted: now, TimeLimit: time.Hour},
	}
	s := &scheduler.Snapshot{Now: now, Cluster: c, Jobs: jobs}
	require.NoError(t, scheduler.Validate(s))
	d, err := scheduler.New(scheduler.Config{Backfill: scheduler.Conservative}).Step(s)
	require.NoError(t, err)
	require.Empty(t, d.Evictions, dump(s, d))
	require.Empty(t, d.Placements, dump(s, d))
	// F is gone at evictedAt + grace, an hour and ten minutes from now;
	// N at now + its limit + its grace: two hours and five minutes.
	require.Equal(t, []scheduler.Reservation{{Job: "P", Start: now.Add(70 * time.Minute), Allocation: one("late", 0, 1)}}, d.Reservations, dump(s, d))

	// Without F and its node, P waits for N: neither S's healthy GPU
	// nor D's GPUs ever serve it.
	s.Jobs = append(jobs[:3:3], jobs[4:]...)
	s.Cluster.Nodes = append(c.Nodes[:3:3], c.Nodes[4:]...)
	d, err = scheduler.New(scheduler.Config{Backfill: scheduler.Conservative}).Step(s)
	require.NoError(t, err)
	require.Equal(t, []scheduler.Reservation{{Job: "P", Start: now.Add(125 * time.Minute), Allocation: one("nostart", 0, 1)}}, d.Reservations, dump(s, d))
}

// TestEvictingWithoutAllocationIsAnError: an evicting job must name the
// GPUs it still holds, as a running job must.
func TestEvictingWithoutAllocationIsAnError(t *testing.T) {
	s := &scheduler.Snapshot{Now: gen.Now, Cluster: topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 1}}},
		Jobs: []scheduler.Job{{ID: "E", Members: 1, GPUsPerMember: 1, State: scheduler.Evicting, EvictedAt: gen.Now}}}
	require.EqualError(t, scheduler.Validate(s), `snapshot: jobs[0] "E": allocation must be given for an evicting job`)
	_, err := scheduler.New(scheduler.Config{}).Step(s)
	require.EqualError(t, err, `snapshot: jobs[0] "E": allocation must be given for an evicting job`)
}
