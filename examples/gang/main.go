// Command gang runs the gang-scheduling seed scenario: on a 128-GPU
// cluster, jobs A (64 GPUs, 12 hours) and B (64 GPUs, 8 hours) start at
// 00:00. Job C (96 GPUs) arrives at 00:01 on the full cluster and is
// promised a start at 12:00, when A ends. B ends at 08:00: C does not
// start on B's 64 GPUs, which it cannot use, and keeps its 12:00 start.
package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gpusched/gpusched/internal/scenario"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

func main() { scenario.Main("gang", run) }

func run(w io.Writer) error {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	cluster := topology.Uniform(16, 8, "H100")
	job := func(id string, members int, limit time.Duration) scheduler.Job {
		return scheduler.Job{ID: id, Team: "research", Tier: scheduler.P1, Members: members, GPUsPerMember: 8,
			GPUType: "H100", TimeLimit: limit, Submitted: now}
	}
	s := scheduler.New(scheduler.Config{})
	fmt.Fprintf(w, "cluster: %d nodes × 8 H100 = 128 GPUs\n", len(cluster.Nodes))

	// Step 1: A and B are submitted.
	snap := &scheduler.Snapshot{Now: now, Cluster: cluster, Jobs: []scheduler.Job{
		job("A", 8, 12*time.Hour), job("B", 8, 8*time.Hour),
	}}
	d, err := s.Step(snap)
	if err != nil {
		return err
	}
	if err := show(w, now, d); err != nil {
		return err
	}
	// The host starts what was placed, then C (96 GPUs) arrives.
	next := &scheduler.Snapshot{Now: now.Add(time.Minute), Cluster: cluster}
	for _, j := range snap.Jobs {
		for _, p := range d.Placements {
			if p.Job == j.ID {
				j.State, j.Started, j.Allocation = scheduler.Running, now, p.Allocation
			}
		}
		next.Jobs = append(next.Jobs, j)
	}
	c := job("C", 12, 6*time.Hour)
	c.Submitted = next.Now
	next.Jobs = append(next.Jobs, c)
	if d, err = s.Step(next); err != nil {
		return err
	}
	if err := show(w, next.Now, d); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nC takes nothing now: a gang runs whole or not at all. It is promised")
	fmt.Fprintln(w, "all of A's GPUs and 32 of B's from 12:00, when A, the later of the two, ends.")

	// B ends at 08:00 and the host drops it: 64 GPUs are free.
	later := &scheduler.Snapshot{Now: now.Add(8 * time.Hour), Cluster: cluster}
	for _, j := range next.Jobs {
		if j.ID != "B" {
			later.Jobs = append(later.Jobs, j)
		}
	}
	if d, err = s.Step(later); err != nil {
		return err
	}
	if err := show(w, later.Now, d); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nB's 64 GPUs are free, but C needs 96: it does not start on them and")
	fmt.Fprintln(w, "keeps its 12:00 start.")
	return nil
}

func show(w io.Writer, now time.Time, d *scheduler.Decision) error {
	fmt.Fprintf(w, "\nstep at %s\n", now.Format("15:04"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "job\tGPUs\tdecision\twhere / why")
	for _, p := range d.Placements {
		fmt.Fprintf(tw, "%s\t%d\tstart now\t%s\n", p.Job, p.Allocation.Count(), p.Allocation)
	}
	for _, r := range d.Reservations {
		fmt.Fprintf(tw, "%s\t%d\treserved\tfrom %s on %s\n", r.Job, r.Allocation.Count(), r.Start.Format("15:04"), r.Allocation)
	}
	for _, p := range d.Pending {
		fmt.Fprintf(tw, "%s\t\t%s\t%s\n", p.Job, p.Reason, p.Message)
	}
	return tw.Flush()
}
