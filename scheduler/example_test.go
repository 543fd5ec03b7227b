package scheduler_test

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// The seed scenario: 128 GPUs as 16 nodes of 8. A and B take 64 GPUs
// each; C needs 96 in one gang, so it waits whole, with a reservation
// for when both have ended, rather than taking part of the cluster.
func ExampleScheduler_Step() {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	c := topology.Uniform(16, 8, "H100")
	job := func(id string, members int, limit time.Duration, age time.Duration) scheduler.Job {
		return scheduler.Job{ID: id, Team: "research", Tier: 1, Members: members, GPUsPerMember: 8,
			TimeLimit: limit, Submitted: now.Add(-age)}
	}
	snap := &scheduler.Snapshot{Now: now, Cluster: c, Jobs: []scheduler.Job{
		job("A", 8, 12*time.Hour, 3*time.Hour),
		job("B", 8, 24*time.Hour, 2*time.Hour),
		job("C", 12, 24*time.Hour, time.Hour),
	}}
	d, err := scheduler.New(scheduler.Config{Order: scheduler.TierOrder{}}).Step(snap)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range d.Placements {
		fmt.Printf("start %s on %s\n", p.Job, p.Allocation)
	}
	for _, r := range d.Reservations {
		fmt.Printf("reserve %s at %s on %d GPUs\n", r.Job, r.Start.Format(time.RFC3339), r.Allocation.Count())
	}
	for _, w := range d.Pending {
		fmt.Printf("%s waits: %s\n", w.Job, w.Reason)
	}
	// Output:
	// start A on n00[0-7] n01[0-7] n02[0-7] n03[0-7] n04[0-7] n05[0-7] n06[0-7] n07[0-7]
	// start B on n08[0-7] n09[0-7] n10[0-7] n11[0-7] n12[0-7] n13[0-7] n14[0-7] n15[0-7]
	// reserve C at 2026-12-03T00:00:00Z on 96 GPUs
}
