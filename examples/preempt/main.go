// Command preempt runs the preemption seed scenario on a 64-GPU cluster
// (8 nodes × 8 GPUs) with Config{}'s default tiers: P0 is never
// preempted, P1 only by P0, P2 by P0 and P1, P3 by anyone above it.
//
// Part 1, at 10:00: X, a P3 job, runs on 8 GPUs and needs 5 minutes to
// checkpoint. P, a P1 job, needs all 64 GPUs while 56 are free. Step
// evicts X (reason preempted, by P, grace 5m, requeued) and reserves the
// 64 GPUs for P from 10:05. At 10:02 X is still checkpointing and P
// waits. At 10:05 the host reports X gone and requeues it: P starts on
// the 64 GPUs and X waits in the queue.
//
// Part 2: a P0 production service holds 16 GPUs and a P3 job 8. A P1 job
// that needs 56 GPUs could only fit by evicting the service, so it waits
// and evicts nothing; a P1 job that needs 48 GPUs evicts only the P3 job.
//
// Part 3: with a minimum runtime of 30m and the default disruption
// budget, two P1 jobs need a victim each: the first takes one, the
// second waits (awaiting-preemption, the budget spent) until a later
// Step, and the decision's nextWake tells the host when a protected job
// becomes a victim.
//
// Every Step is pure: the host applies placements (running, Started =
// now), evictions (evicting, EvictedAt = now), removes jobs whose run or
// grace has ended (requeueing them when the eviction says so), and
// advances Now.
package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/internal/scenario"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

func main() { scenario.Main("preempt", run) }

func run(w io.Writer) error {
	day := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	at := func(hh, mm int) time.Time {
		return day.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
	}
	cluster := topology.Uniform(8, 8, "H100")
	node := func(i int) topology.NodeGPUs {
		return topology.NodeGPUs{Node: fmt.Sprintf("n%02d", i), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}
	}
	job := func(id, team string, tier, members int, limit time.Duration, submitted time.Time) scheduler.Job {
		return scheduler.Job{ID: id, Team: team, Tier: scheduler.TierN(tier), Members: members, GPUsPerMember: 8,
			GPUType: "H100", TimeLimit: limit, Submitted: submitted}
	}
	s := scheduler.New(scheduler.Config{})

	fmt.Fprintln(w, "part 1: a P1 job preempts a P3 job")
	fmt.Fprintln(w, "cluster: 8 nodes × 8 H100 = 64 GPUs; X (P3, 8 GPUs, checkpoint grace 5m) runs on n07")
	x := job("X", "batch", 3, 1, 24*time.Hour, at(8, 30))
	x.CheckpointGrace = 5 * time.Minute
	x.State, x.Started, x.Allocation = scheduler.Running, at(9, 0), topology.Allocation{node(7)}
	h := host.New(cluster, x)
	h.Actual = map[string]time.Duration{"X": 24 * time.Hour, "P": 12 * time.Hour}
	h.Arrive = []scheduler.Job{job("P", "research", 1, 8, 12*time.Hour, at(9, 55))}
	for _, now := range []time.Time{at(10, 0), at(10, 2), at(10, 5)} {
		if err := step(w, h, s, now); err != nil {
			return err
		}
	}

	fmt.Fprintln(w, "\npart 2: P0 production is never a victim")
	fmt.Fprintln(w, "cluster: 64 GPUs; serve (P0 inference, 2×8 GPUs) on n00-n01, Y (P3, 8 GPUs) on n02; 40 free")
	serve := job("serve", "prod", 0, 2, 0, at(0, 0))
	serve.Kind, serve.State, serve.Started = scheduler.Inference, scheduler.Running, at(0, 0)
	serve.Allocation = topology.Allocation{node(0), node(1)}
	y := job("Y", "batch", 3, 1, 24*time.Hour, at(8, 30))
	y.CheckpointGrace = 5 * time.Minute
	y.State, y.Started, y.Allocation = scheduler.Running, at(9, 0), topology.Allocation{node(2)}
	h = host.New(cluster, serve, y)
	h.Actual = map[string]time.Duration{"serve": 1000 * time.Hour, "Y": 24 * time.Hour,
		"Q56": 12 * time.Hour, "R48": 12 * time.Hour}
	h.Arrive = []scheduler.Job{
		job("Q56", "research", 1, 7, 12*time.Hour, at(9, 50)),
		job("R48", "research", 1, 6, 12*time.Hour, at(9, 55)),
	}
	if err := step(w, h, s, at(10, 0)); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nQ56 would fit only by evicting serve (P0): it waits and takes no victim.")
	fmt.Fprintln(w, "R48 fits by evicting Y (P3) alone; serve keeps running.")
	return part3(w, cluster, node, job, at)
}

// part3 shows the disruption budget and nextWake: three P1 jobs that
// each need a victim, under Config{MinRuntime: 30 * time.Minute} and
// the default budget (the larger of 5% of 64 GPUs and the first
// preemptor's victims: 8 GPUs per Step).
func part3(w io.Writer, cluster topology.Cluster, node func(int) topology.NodeGPUs,
	job func(string, string, int, int, time.Duration, time.Time) scheduler.Job, at func(int, int) time.Time) error {
	fmt.Fprintln(w, "\npart 3: the disruption budget and nextWake")
	fmt.Fprintln(w, "cluster: 64 GPUs; serve (P0, 5×8 GPUs) on n00-n04; A, B, C (P3, 8 GPUs each, started 08:00, 08:30, 09:40) on n05-n07")
	fmt.Fprintln(w, "policy: minRuntime 30m; the default budget evicts at most 8 GPUs per Step here")
	serve := job("serve", "prod", 0, 5, 0, at(0, 0))
	serve.Kind, serve.State, serve.Started = scheduler.Inference, scheduler.Running, at(0, 0)
	serve.Allocation = topology.Allocation{node(0), node(1), node(2), node(3), node(4)}
	jobs := []scheduler.Job{serve}
	for i, started := range []time.Time{at(8, 0), at(8, 30), at(9, 40)} {
		v := job(string(rune('A'+i)), "batch", 3, 1, 0, at(7, 0))
		v.Kind, v.CheckpointGrace = scheduler.Inference, 5*time.Minute
		v.State, v.Started, v.Allocation = scheduler.Running, started, topology.Allocation{node(5 + i)}
		jobs = append(jobs, v)
	}
	h := host.New(cluster, jobs...)
	h.Actual = map[string]time.Duration{"serve": 1000 * time.Hour, "A": 1000 * time.Hour, "B": 1000 * time.Hour,
		"C": 1000 * time.Hour, "H1": 12 * time.Hour, "H2": 12 * time.Hour, "H3": 12 * time.Hour}
	h.Arrive = []scheduler.Job{
		job("H1", "research", 1, 1, 12*time.Hour, at(9, 55)),
		job("H2", "research", 1, 1, 12*time.Hour, at(9, 56)),
		job("H3", "research", 1, 1, 12*time.Hour, at(9, 57)),
	}
	s := scheduler.New(scheduler.Config{MinRuntime: 30 * time.Minute})
	now := at(10, 0)
	for range 4 {
		d, err := stepAt(w, h, s, now)
		if err != nil {
			return err
		}
		// The host Steps at the next event it knows of (a grace ends)
		// or at the decision's nextWake, whichever comes first.
		now = h.Next(now, d, time.Hour)
	}
	fmt.Fprintln(w, "\nAt 10:00 H1 takes B (the least work lost) and spends the Step's budget: H2 and")
	fmt.Fprintln(w, "H3 wait. C, started 09:40, is too young to be a victim until it has run 30")
	fmt.Fprintln(w, "minutes: nextWake is 10:10. At 10:05 B is gone and H1 starts; H2, next in line,")
	fmt.Fprintln(w, "takes A. At 10:10 H2 starts and H3 takes C, now old enough; at 10:15 H3 starts.")
	return nil
}

// step runs one Step at now, prints it and applies the decision.
func step(w io.Writer, h *host.Host, s *scheduler.Scheduler, now time.Time) error {
	_, err := stepAt(w, h, s, now)
	return err
}

// stepAt is step, returning the decision.
func stepAt(w io.Writer, h *host.Host, s *scheduler.Scheduler, now time.Time) (*scheduler.Decision, error) {
	events := h.Advance(now)
	snap := h.Snapshot(now)
	d, err := s.Step(snap)
	if err != nil {
		return nil, err
	}
	if err := show(w, now, h, events, d); err != nil {
		return nil, err
	}
	h.Apply(now, d)
	return d, nil
}

// holders names the jobs that are evicting, or evicted by d, and hold
// GPUs of a: the reason a reserved job is not placed yet.
func holders(h *host.Host, a topology.Allocation, d *scheduler.Decision) []string {
	held := map[string]bool{}
	for _, g := range a {
		for _, i := range g.GPUs {
			held[fmt.Sprint(g.Node, "/", i)] = true
		}
	}
	var out []string
	for _, j := range h.Jobs {
		evicted := j.State == scheduler.Evicting || slices.ContainsFunc(d.Evictions, func(e scheduler.Eviction) bool { return e.Job == j.ID })
		if !evicted {
			continue
		}
		for _, g := range j.Allocation {
			if slices.ContainsFunc(g.GPUs, func(i int) bool { return held[fmt.Sprint(g.Node, "/", i)] }) {
				out = append(out, j.ID)
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func show(w io.Writer, now time.Time, h *host.Host, events []string, d *scheduler.Decision) error {
	fmt.Fprintf(w, "\n%s step", now.Format("15:04"))
	if len(events) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(events, "; "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  job\ttier\tGPUs\tstate / decision\twhen / where / why")
	jobOf := func(id string) *scheduler.Job { return h.Job(id) }
	for _, j := range h.Jobs {
		if j.State == scheduler.Evicting {
			fmt.Fprintf(tw, "  %s\t%s\t%d\tstill evicting\tsince %s, gone by %s\n", j.ID, j.Tier, j.GPUs(),
				j.EvictedAt.Format("15:04"), j.EvictedAt.Add(j.CheckpointGrace).Format("15:04"))
		}
	}
	for _, e := range d.Evictions {
		j := jobOf(e.Job)
		fmt.Fprintf(tw, "  %s\t%s\t%d\tevict %s\tby %s, grace %s, requeue=%t\n", e.Job, j.Tier, j.GPUs(), e.Reason, e.By, host.Duration(e.Grace), e.Requeue)
	}
	for _, p := range d.Placements {
		j := jobOf(p.Job)
		fmt.Fprintf(tw, "  %s\t%s\t%d\tstart\tnow on %s\n", p.Job, j.Tier, p.Allocation.Count(), host.Compact(p.Allocation))
	}
	for _, r := range d.Reservations {
		j := jobOf(r.Job)
		why := ""
		if v := holders(h, r.Allocation, d); len(v) > 0 {
			why = fmt.Sprintf(" (waits for %s to checkpoint)", strings.Join(v, ", "))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\treserved\tfrom %s on %s%s\n", r.Job, j.Tier, r.Allocation.Count(), r.Start.Format("15:04"), host.Compact(r.Allocation), why)
	}
	for _, p := range d.Pending {
		j := jobOf(p.Job)
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", p.Job, j.Tier, j.GPUs(), p.Reason, p.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !d.NextWake.IsZero() {
		fmt.Fprintf(w, "  nextWake %s\n", d.NextWake.Format("15:04"))
	}
	return nil
}
