// Command backfill runs the backfill seed scenario as a timeline on a
// 128-GPU cluster (16 nodes × 8 GPUs) with EASY backfill, Config{}'s
// default, driven by the host loop a real system would run.
//
// At 08:00 job A (64 GPUs) has 6 hours of its time limit left and job B
// (32 GPUs) runs for a day. Job C needs 96 GPUs: it cannot start, so it
// gets a reservation for 14:00, when A ends. The 32 GPUs free until then
// are a gap that backfill fills with jobs that end before 14:00: E (32
// GPUs, 1 h) at once, then D (8 GPUs, 2 h) when E is done. F asks for
// 10 hours although it would need far less; by its limit it would still
// hold GPUs that C needs at 14:00, so it waits behind the reservation. G
// asks for 1 hour but needs 3; Step kills it at its limit (reason
// time-limit). At 14:00 A ends and C starts on its reserved GPUs.
//
// Every Step is pure: the host applies placements (running, Started =
// now), evictions (evicting, EvictedAt = now), removes jobs whose run or
// grace has ended, advances Now, and passes each decision's reservations
// back as the next snapshot's plan, which keeps them as promises.
//
// A second, shorter story runs conservative backfill on 4 nodes: P (24
// GPUs) is promised 12:00 and Q (8 GPUs) 11:00; R1 ends two hours early
// at 10:00, and the waiting jobs move earlier in queue order without
// disturbing each other's promises: P to 11:00, Q to now.
package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/internal/scenario"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

func main() { scenario.Main("backfill", run) }

func run(w io.Writer) error {
	day := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	at := func(hh, mm int) time.Time {
		return day.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
	}
	cluster := topology.Uniform(16, 8, "H100")
	alloc := func(from, to int) topology.Allocation {
		var a topology.Allocation
		for i := from; i < to; i++ {
			a = append(a, topology.NodeGPUs{Node: fmt.Sprintf("n%02d", i), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
		}
		return a
	}
	job := func(id string, members int, limit time.Duration, submitted time.Time) scheduler.Job {
		return scheduler.Job{ID: id, Team: "research", Tier: scheduler.P1, Members: members, GPUsPerMember: 8,
			GPUType: "H100", TimeLimit: limit, Submitted: submitted}
	}
	a := job("A", 8, 12*time.Hour, at(1, 30))
	a.State, a.Started, a.Allocation = scheduler.Running, at(2, 0), alloc(0, 8)
	b := job("B", 4, 24*time.Hour, at(5, 30))
	b.State, b.Started, b.Allocation = scheduler.Running, at(6, 0), alloc(8, 12)
	h := host.New(cluster, a, b)
	// The host knows how long each job really runs; Step only sees time
	// limits. F overestimates (asks 10 h, needs 1 h); G underestimates
	// (asks 1 h, needs 3 h).
	h.Actual = map[string]time.Duration{"A": 12 * time.Hour, "B": 24 * time.Hour, "C": 4 * time.Hour,
		"D": 2 * time.Hour, "E": time.Hour, "F": time.Hour, "G": 3 * time.Hour}
	h.Arrive = []scheduler.Job{
		job("C", 12, 4*time.Hour, at(7, 10)),
		job("E", 4, time.Hour, at(7, 20)),
		job("D", 1, 2*time.Hour, at(7, 30)),
		job("F", 1, 10*time.Hour, at(7, 40)),
		job("G", 1, time.Hour, at(7, 50)),
	}

	// TierOrder (tier, then submit time) instead of the default
	// fair-share order: every job here belongs to one team, and the
	// multifactor size term would rank the big jobs first, which would
	// hide the first-come order the story is told in.
	s := scheduler.New(scheduler.Config{Order: scheduler.TierOrder{}})
	fmt.Fprintf(w, "cluster: 16 nodes × 8 H100 = 128 GPUs, EASY backfill (one reservation)\n")
	fmt.Fprintf(w, "running: A 64 GPUs until 14:00 (its limit), B 32 GPUs until tomorrow 06:00\n")
	fmt.Fprintf(w, "queue:   C 96 GPUs 4h, E 32 GPUs 1h, D 8 GPUs 2h, F 8 GPUs asks 10h (needs 1h), G 8 GPUs asks 1h (needs 3h)\n")

	for _, now := range []time.Time{at(8, 0), at(9, 0), at(10, 0), at(11, 0), at(14, 0)} {
		events := h.Advance(now)
		snap := h.Snapshot(now)
		d, err := s.Step(snap)
		if err != nil {
			return err
		}
		if err := show(w, now, h, events, d); err != nil {
			return err
		}
		h.Apply(now, d)
	}
	fmt.Fprintln(w, "\nC started at 14:00 as reserved: backfill used the gap without delaying it.")
	return promises(w, at)
}

// promises is the second story: conservative backfill, with the host
// passing each decision's reservations back as the next snapshot's plan
// (host.Host does). Every reservation is then a promise: a start never
// moves later, and when a job ends early the waiting jobs move earlier,
// in queue order, each without disturbing the others' promises.
func promises(w io.Writer, at func(hh, mm int) time.Time) error {
	job := func(id string, members int, limit time.Duration, submitted time.Time) scheduler.Job {
		return scheduler.Job{ID: id, Team: "research", Tier: scheduler.P1, Members: members, GPUsPerMember: 8,
			GPUType: "H100", TimeLimit: limit, Submitted: submitted}
	}
	nodes := func(from, to int) topology.Allocation {
		var a topology.Allocation
		for i := from; i < to; i++ {
			a = append(a, topology.NodeGPUs{Node: fmt.Sprintf("n%02d", i), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
		}
		return a
	}
	r1 := job("R1", 2, 4*time.Hour, at(7, 0))
	r1.State, r1.Started, r1.Allocation = scheduler.Running, at(8, 0), nodes(0, 2)
	r2 := job("R2", 2, 3*time.Hour, at(7, 0))
	r2.State, r2.Started, r2.Allocation = scheduler.Running, at(8, 0), nodes(2, 4)
	h := host.New(topology.Uniform(4, 8, "H100"), r1, r2, job("P", 3, 2*time.Hour, at(8, 10)), job("Q", 1, time.Hour, at(8, 20)))
	h.Actual = map[string]time.Duration{"R1": 2 * time.Hour, "R2": 3 * time.Hour, "P": 2 * time.Hour, "Q": time.Hour}
	s := scheduler.New(scheduler.Config{Backfill: scheduler.Conservative, Order: scheduler.TierOrder{}})
	fmt.Fprintf(w, "\nconservative backfill, each decision's reservations passed back as the next plan\n")
	fmt.Fprintf(w, "cluster: 4 nodes × 8 H100; R1 (16 GPUs) asks until 12:00 but ends at 10:00; R2 (16 GPUs) ends at 11:00\n")
	promised := map[string]time.Time{}
	for _, now := range []time.Time{at(8, 30), at(10, 0), at(11, 0)} {
		events := h.Advance(now)
		d, err := s.Step(h.Snapshot(now))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s", now.Format("15:04"))
		if len(events) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(events, "; "))
		}
		fmt.Fprintln(w, ":")
		for _, p := range d.Placements {
			fmt.Fprintf(w, "    %s starts now%s\n", p.Job, was(promised, p.Job))
			delete(promised, p.Job)
		}
		for _, r := range d.Reservations {
			fmt.Fprintf(w, "    %s promised %s%s\n", r.Job, r.Start.Format("15:04"), was(promised, r.Job))
			promised[r.Job] = r.Start
		}
		h.Apply(now, d)
	}
	fmt.Fprintln(w, "\nNo promise moved later; when R1 ended early, P and Q moved earlier in queue order.")
	return nil
}

// was says what job id was promised before, if anything.
func was(promised map[string]time.Time, id string) string {
	if t, ok := promised[id]; ok {
		return " (was promised " + t.Format("15:04") + ")"
	}
	return ""
}

func show(w io.Writer, now time.Time, h *host.Host, events []string, d *scheduler.Decision) error {
	fmt.Fprintf(w, "\n%s step", now.Format("15:04"))
	if len(events) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(events, "; "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  job\tGPUs\tlimit\tdecision\twhen / where / why")
	limit := func(id string) string {
		if j := h.Job(id); j != nil {
			return host.Duration(j.TimeLimit)
		}
		return ""
	}
	gpus := func(id string) int {
		if j := h.Job(id); j != nil {
			return j.GPUs()
		}
		return 0
	}
	for _, e := range d.Evictions {
		fmt.Fprintf(tw, "  %s\t%d\t%s\tevict %s\tnow, requeue=%t\n", e.Job, gpus(e.Job), limit(e.Job), e.Reason, e.Requeue)
	}
	for _, p := range d.Placements {
		j := h.Job(p.Job)
		fmt.Fprintf(tw, "  %s\t%d\t%s\tstart\tnow, ends by %s, on %s\n", p.Job, p.Allocation.Count(), limit(p.Job),
			now.Add(j.TimeLimit).Format("15:04"), host.Compact(p.Allocation))
	}
	for _, r := range d.Reservations {
		fmt.Fprintf(tw, "  %s\t%d\t%s\treserved\tfrom %s on %s\n", r.Job, r.Allocation.Count(), limit(r.Job), r.Start.Format("15:04"), host.Compact(r.Allocation))
	}
	for _, p := range d.Pending {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", p.Job, gpus(p.Job), limit(p.Job), p.Reason, p.Message)
	}
	return tw.Flush()
}
