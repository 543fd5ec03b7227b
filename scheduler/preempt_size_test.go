package scheduler_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// The fewest-GPUs rule of the victims' cost order counts all the GPUs a
// job holds, not only those it can give the preemptor. X holds n00 and
// n01, Y holds n02; both are tier 3 and started together. A, first in the
// queue, is reserved one of X's nodes from X's end, so the search leaves
// those GPUs out of X's. P then needs one node now: stopping X or Y
// frees one node it can use, but stopping X stops 16 GPUs of work and
// Y only 8. Y must go. (With X's reserved GPUs left out, X used to look
// like an 8-GPU job, and X, first by ID, went.)
func TestVictimCostCountsReservedGPUs(t *testing.T) {
	now := gen.Now
	nodes := func(names ...string) topology.Allocation {
		var a topology.Allocation
		for _, n := range names {
			a = append(a, topology.NodeGPUs{Node: n, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
		}
		return a
	}
	running := func(id string, limit time.Duration, on ...string) scheduler.Job {
		return scheduler.Job{ID: id, Tier: scheduler.P3, Members: len(on), GPUsPerMember: 8, State: scheduler.Running,
			Started: now.Add(-time.Hour), TimeLimit: limit, Allocation: nodes(on...)}
	}
	snap := &scheduler.Snapshot{
		Now:     now,
		Cluster: topology.Uniform(3, 8, ""),
		Jobs: []scheduler.Job{
			{ID: "A", Tier: scheduler.P3, Members: 1, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now},
			{ID: "P", Tier: scheduler.P1, Members: 1, GPUsPerMember: 8, TimeLimit: 4 * time.Hour, Submitted: now},
			running("X", 2*time.Hour, "n00", "n01"),
			running("Y", 4*time.Hour, "n02"),
		},
	}
	// A before P: A cannot preempt (tier 3), so it is reserved X's GPUs.
	byID := scheduler.OrderFunc(func(_ *scheduler.Snapshot, jobs []*scheduler.Job) {
		slices.SortFunc(jobs, func(a, b *scheduler.Job) int { return strings.Compare(a.ID, b.ID) })
	})
	for _, mode := range []scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative} {
		cfg := scheduler.Config{Backfill: mode, Order: byID}
		d, err := scheduler.New(cfg).Step(snap)
		require.NoError(t, err)
		require.Len(t, d.Reservations, 2, "%v: %+v", mode, d)
		require.Equal(t, "A", d.Reservations[0].Job)
		require.Equal(t, now.Add(time.Hour), d.Reservations[0].Start)
		require.Equal(t, []scheduler.Eviction{{Job: "Y", Reason: scheduler.EvictPreempted, By: "P", Requeue: true}}, d.Evictions, mode)
		require.Equal(t, scheduler.Reservation{Job: "P", Start: now, Allocation: nodes("n02")}, d.Reservations[1], mode)
	}
}
