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
		return scheduler.Job{ID: id, Team: "research", Tier: scheduler.P1, Members: members, GPUsPerMember: 8,
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

// A host's loop over three Steps, applying each decision to its own copy
// of the state: placements start (running, Started = now, on the GPUs
// given), evictions begin (evicting, EvictedAt = now), and once the host
// sees an evicted job gone it requeues it as pending when the eviction
// said so. At 10:00 the tier-1 job urgent preempts the tier-3 job batch,
// which has 5 minutes to checkpoint; at 10:05 batch is gone, urgent
// starts on the GPUs reserved for it and batch waits for them again.
func ExampleScheduler_Step_hostLoop() {
	at := func(h, m int) time.Time { return time.Date(2026, 12, 2, h, m, 0, 0, time.UTC) }
	snap := &scheduler.Snapshot{Now: at(9, 0), Cluster: topology.Uniform(2, 8, "H100"), Jobs: []scheduler.Job{
		{ID: "batch", Tier: scheduler.P3, Members: 2, GPUsPerMember: 8, TimeLimit: 12 * time.Hour,
			CheckpointGrace: 5 * time.Minute, Submitted: at(8, 0)},
	}}
	s := scheduler.New(scheduler.Config{})
	step := func() {
		d, err := s.Step(snap)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(snap.Now.Format("15:04"))
		find := func(id string) *scheduler.Job {
			for i := range snap.Jobs {
				if snap.Jobs[i].ID == id {
					return &snap.Jobs[i]
				}
			}
			return nil
		}
		for _, p := range d.Placements {
			fmt.Printf("  start %s on %s\n", p.Job, p.Allocation)
			j := find(p.Job)
			j.State, j.Started, j.Allocation = scheduler.Running, snap.Now, p.Allocation
		}
		for _, e := range d.Evictions {
			fmt.Printf("  evict %s (%s by %s), grace %s, requeue %t\n", e.Job, e.Reason, e.By, e.Grace, e.Requeue)
			j := find(e.Job)
			j.State = scheduler.Evicting
			if e.Reason != scheduler.EvictNodeDown { // it has no grace (see there)
				j.EvictedAt = snap.Now
			}
		}
		for _, r := range d.Reservations {
			fmt.Printf("  reserve %s from %s on %s\n", r.Job, r.Start.Format("15:04"), r.Allocation)
		}
	}

	step()

	snap.Now = at(10, 0)
	snap.Jobs = append(snap.Jobs, scheduler.Job{ID: "urgent", Tier: scheduler.P1, Members: 1, GPUsPerMember: 8,
		TimeLimit: time.Hour, Submitted: snap.Now})
	step()

	snap.Now = at(10, 5)
	for i := range snap.Jobs { // the host sees batch gone and requeues it
		if j := &snap.Jobs[i]; j.ID == "batch" {
			j.State, j.Allocation, j.Started, j.EvictedAt = scheduler.Pending, nil, time.Time{}, time.Time{}
		}
	}
	step()
	// Output:
	// 09:00
	//   start batch on n00[0-7] n01[0-7]
	// 10:00
	//   evict batch (preempted by urgent), grace 5m0s, requeue true
	//   reserve urgent from 10:05 on n00[0-7]
	// 10:05
	//   start urgent on n00[0-7]
	//   reserve batch from 11:05 on n00[0-7] n01[0-7]
}
