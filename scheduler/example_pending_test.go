package scheduler_test

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// pendingSnapshot is two leaves of two 8-GPU H100 nodes each; job run
// holds one node of leaf l0 for two more hours. The queue asks for
// things this cluster cannot give now, or ever.
func pendingSnapshot() *scheduler.Snapshot {
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	var nodes []topology.Node
	for i, leaf := range []string{"l0", "l0", "l1", "l1"} {
		nodes = append(nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8, GPUType: "H100",
			Domains: map[string]string{"leaf": leaf}})
	}
	job := func(id, team string, members, gpus int) scheduler.Job {
		return scheduler.Job{ID: id, Team: team, Tier: scheduler.P2, Members: members, GPUsPerMember: gpus,
			TimeLimit: time.Hour, Submitted: now.Add(-time.Hour)}
	}
	run := job("run", "prod", 1, 8)
	run.Tier, run.TimeLimit = scheduler.P0, 3*time.Hour
	run.State, run.Started = scheduler.Running, now.Add(-time.Hour)
	run.Allocation = topology.Allocation{{Node: "n0", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}

	a100 := job("a100", "research", 1, 8)
	a100.GPUType = "A100"
	leaf := job("leaf-3x8", "research", 3, 8)
	leaf.Topology.Required = "leaf"
	return &scheduler.Snapshot{
		Now:     now,
		Cluster: topology.Cluster{Levels: []string{"leaf"}, Nodes: nodes},
		Teams: []scheduler.Team{{Name: "prod", Share: 1}, {Name: "research", Share: 1},
			{Name: "interns", Share: 1, Quota: &scheduler.Quota{GPUs: 8}}},
		Jobs: []scheduler.Job{run, a100, leaf,
			job("huge", "research", 5, 8),
			job("intern", "interns", 2, 8),
			job("wide", "research", 4, 8),
		},
	}
}

// Reading why jobs wait: every pending job that neither starts nor gets a
// reservation is in Decision.Pending, in job ID order, with a Reason code
// to act on and a Message to show. Here "wide" needs all four nodes and
// gets the one reservation of EASY backfill, for when run ends; the
// others wait.
func ExampleWait() {
	d, err := scheduler.New(scheduler.Config{}).Step(pendingSnapshot())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range d.Reservations {
		fmt.Printf("%s: reserved from %s\n", r.Job, r.Start.Format("15:04"))
	}
	for _, w := range d.Pending {
		switch w.Reason {
		case scheduler.ReasonUnsatisfiable, scheduler.ReasonGPUType:
			fmt.Printf("%s: never on this cluster (%s): %s\n", w.Job, w.Reason, w.Message)
		default:
			fmt.Printf("%s: waits (%s): %s\n", w.Job, w.Reason, w.Message)
		}
	}
	// Output:
	// wide: reserved from 11:00
	// a100: never on this cluster (gpu-type): no node has GPU type "A100"
	// huge: never on this cluster (unsatisfiable): needs 5×8 GPUs; this cluster holds at most 4 such members
	// intern: waits (quota): interns uses 0 of 8 nominal + 0 borrowable GPUs; job needs 16
	// leaf-3x8: never on this cluster (unsatisfiable): needs 3×8 GPUs in one leaf; no leaf of this cluster holds more than 2 such members
}

// Explain tells, for one job, what Step decided and the numbers behind
// it; String renders it as text (the step command's -explain JOB -text).
func ExampleScheduler_Explain() {
	e, err := scheduler.New(scheduler.Config{}).Explain(pendingSnapshot(), "intern")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.Outcome, e.Reason, e.Quota.Nominal, e.Quota.InUse)
	fmt.Print(e)
	// Output:
	// pending quota 8 0
	// job intern: pending (quota): interns uses 0 of 8 nominal + 0 borrowable GPUs; job needs 16
	//   asks 2×8 GPUs; free GPUs now hold 3 such members
	//   nodes: 4 total, 4 ready, 4 of its type, 4 with 8+ healthy GPUs, 3 with 8+ free
	//   quota: team interns holds 0 of 8 nominal + 0 borrowable GPUs
	//   queue: 1 of 5 pending; tier 2, priority 1000.6 (fair-share 1.000, age 0.006, size 0.500)
}
