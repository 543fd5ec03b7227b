// Command fairshare runs the fair-share seed scenario on a 256-GPU
// cluster (32 nodes × 8 GPUs) shared by teams A, B and C with shares 40,
// 35 and 25. Last week A used 60% of the GPU-hours and B and C 20% each.
//
// Part 1 prints the fair-share report (in the spirit of sshare) that
// Step's default order is built on: A, over its share, falls to the
// lowest factor; B and C, under theirs, rise above it.
//
// Part 2 shows the order Step serves a mixed queue in. 224 GPUs are busy
// for the day and 32 are free; nine 32-GPU one-hour jobs, three per team,
// were submitted interleaved (A, B, C, A, B, C, ...). Under conservative
// backfill every blocked job gets a reservation, so the reserved start
// times spell out the queue order: B's jobs first, then C's, then A's.
//
// Part 3 simulates six weeks of saturating demand: every hour each team
// has more pending 8-GPU one-hour jobs than the cluster holds. An hourly
// loop over Step (Config{}: EASY backfill, multifactor Fair Tree order)
// starts what Step places, and when the jobs end charges their GPU-hours
// to a usage ledger with a 7-day half-life, whose decayed usage is the
// next snapshot's Team.Usage. Each team's weekly share of the GPU-hours
// converges to 40/35/25.
package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/internal/scenario"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

func main() { scenario.Main("fairshare", run) }

const (
	nodes     = 32
	clusterGP = nodes * 8
	weeks     = 6
	week      = 7 * 24 * time.Hour
)

var (
	teamNames = []string{"A", "B", "C"}
	shares    = map[string]float64{"A": 40, "B": 35, "C": 25}
	lastWeek  = map[string]float64{"A": 0.60, "B": 0.20, "C": 0.20}
	// start is a Monday; last week is the week before it.
	start = time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
)

func cluster() topology.Cluster {
	return topology.Uniform(nodes, 8, "H100")
}

// seedLedger charges last week's usage hour by hour to a ledger with the
// default 7-day half-life: the cluster was full, A used 60% of it and B
// and C 20% each.
func seedLedger() (*fairshare.Ledger, error) {
	l := fairshare.NewLedger(7 * 24 * time.Hour)
	for h := range 168 {
		at := start.Add(time.Duration(h-168) * time.Hour)
		for _, t := range teamNames {
			if err := l.Add(t, lastWeek[t]*clusterGP*3600, at); err != nil {
				return nil, err
			}
		}
	}
	return l, nil
}

// teams returns the snapshot's teams with their decayed usage at now.
func teams(l *fairshare.Ledger, now time.Time) []scheduler.Team {
	var out []scheduler.Team
	for _, t := range teamNames {
		out = append(out, scheduler.Team{Name: t, Share: shares[t], Usage: l.Own(t, now)})
	}
	return out
}

func run(w io.Writer) error {
	ledger, err := seedLedger()
	if err != nil {
		return err
	}
	now := start.Add(10 * time.Hour)
	queue := mixedQueue(ledger, now)
	if err := report(w, queue); err != nil {
		return err
	}
	if err := queueOrder(w, queue); err != nil {
		return err
	}
	return simulate(w, ledger)
}

// report prints part 1: the factors of the seed's teams, and how they
// compare with a week used exactly in proportion to the shares.
func report(w io.Writer, snap *scheduler.Snapshot) error {
	fmt.Fprintln(w, "part 1: fair-share report, teams A 40%, B 35%, C 25%; last week A used 60%, B 20%, C 20%")
	fmt.Fprintln(w, "cluster: 32 nodes × 8 H100 = 256 GPUs; usage in GPU-seconds, decayed with a 7-day half-life")
	fmt.Fprintln(w, "running and pending GPUs are those of the queue of part 2")
	fs := scheduler.Factors(snap)
	fmt.Fprintln(w)
	if err := fairshare.WriteReport(w, fs.Report(gpusByState(snap))); err != nil {
		return err
	}
	// The same week used in proportion to the shares, for comparison.
	var sum float64
	for _, t := range snap.Teams {
		sum += t.Usage
	}
	fair := &scheduler.Snapshot{Now: snap.Now, Cluster: snap.Cluster, Teams: slices.Clone(snap.Teams)}
	for i := range fair.Teams {
		fair.Teams[i].Usage = sum * shares[fair.Teams[i].Name] / 100
	}
	ffs := scheduler.Factors(fair)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "team\tshare\tused\tclassic if used = share\tclassic now\tFair Tree now\tpriority of a 32-GPU job")
	var wts fairshare.Weights
	for _, t := range teamNames {
		f, _ := fs.Get(t)
		ff, _ := ffs.Get(t)
		p := wts.Priority(fairshare.JobFactors{Tier: 1, FairShare: f.FairTree, GPUs: 32, ClusterGPUs: clusterGP})
		trend := "rises"
		if f.Classic < ff.Classic {
			trend = "falls"
		}
		fmt.Fprintf(tw, "%s\t%.0f%%\t%.0f%%\t%.3f\t%.3f (%s)\t%.3f\t%.1f\n", t, shares[t], 100*f.NormUsage,
			ff.Classic, f.Classic, trend, f.FairTree, p)
	}
	return tw.Flush()
}

// mixedQueue is the snapshot of part 2: 224 GPUs run for the day (A 96,
// B 96, C 32) and nine 32-GPU one-hour jobs wait, submitted A1, B1, C1,
// A2, ... a minute apart.
func mixedQueue(ledger *fairshare.Ledger, now time.Time) *scheduler.Snapshot {
	snap := &scheduler.Snapshot{Now: now, Cluster: cluster(), Teams: teams(ledger, now)}
	next := 0
	hold := func(team string, members int) {
		var a topology.Allocation
		for range members {
			a = append(a, topology.NodeGPUs{Node: fmt.Sprintf("n%02d", next), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
			next++
		}
		snap.Jobs = append(snap.Jobs, scheduler.Job{ID: "run-" + team, Team: team, Tier: scheduler.P1, Members: members,
			GPUsPerMember: 8, TimeLimit: 24 * time.Hour, Submitted: now.Add(-2 * time.Hour),
			State: scheduler.Running, Started: now.Add(-time.Hour), Allocation: a})
	}
	hold("A", 12)
	hold("B", 12)
	hold("C", 4)
	for k := range 9 {
		team := teamNames[k%3]
		snap.Jobs = append(snap.Jobs, scheduler.Job{ID: fmt.Sprintf("%s%d", team, k/3+1), Team: team, Tier: scheduler.P1,
			Members: 4, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now.Add(time.Duration(k-20) * time.Minute)})
	}
	return snap
}

// gpusByState sums the GPUs of the snapshot's running and pending jobs
// per team, for the report's last columns.
func gpusByState(snap *scheduler.Snapshot) (running, pending map[string]int) {
	running, pending = map[string]int{}, map[string]int{}
	for _, j := range snap.Jobs {
		switch j.State {
		case scheduler.Running, scheduler.Evicting:
			running[j.Team] += j.GPUs()
		case scheduler.Pending:
			pending[j.Team] += j.GPUs()
		}
	}
	return running, pending
}

// queueOrder prints part 2: the order Step serves a mixed queue in, read
// from the reservations of conservative backfill on a 32-GPU gap.
func queueOrder(w io.Writer, snap *scheduler.Snapshot) error {
	now := snap.Now
	fmt.Fprintln(w, "\npart 2: the order Step serves a mixed queue in")
	// Conservative backfill: a reservation for every blocked job, so
	// that every position of the queue shows.
	d, err := scheduler.New(scheduler.Config{Backfill: scheduler.Conservative}).Step(snap)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "224 GPUs busy all day, 32 free; queue submitted A1 B1 C1 A2 B2 C2 A3 B3 C3, each 32 GPUs for 1h")
	type slot struct {
		job   string
		start time.Time
	}
	var order []slot
	for _, p := range d.Placements {
		order = append(order, slot{p.Job, now})
	}
	for _, r := range d.Reservations {
		order = append(order, slot{r.Job, r.Start})
	}
	slices.SortFunc(order, func(a, b slot) int { return a.start.Compare(b.start) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "position\tjob\tstarts")
	for i, s := range order {
		when := "now"
		if !s.start.Equal(now) {
			when = "reserved " + s.start.Format("15:04")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", i+1, s.job, when)
	}
	for _, p := range d.Pending {
		fmt.Fprintf(tw, "-\t%s\t%s: %s\n", p.Job, p.Reason, p.Message)
	}
	return tw.Flush()
}

// simulate prints part 3: weeks of saturating demand driven hour by hour
// through Step, with usage kept in the ledger.
func simulate(w io.Writer, ledger *fairshare.Ledger) error {
	const perTeam = clusterGP / 8 // pending jobs kept per team: more than fit
	fmt.Fprintln(w, "\npart 3: six weeks of saturating demand, 8-GPU one-hour jobs, hourly Steps")
	s := scheduler.New(scheduler.Config{})
	c := cluster()
	var jobs []scheduler.Job
	seq := 0
	used := make([]map[string]float64, weeks)
	for h := range weeks * 168 {
		now := start.Add(time.Duration(h) * time.Hour)
		// Jobs that ran their hour end; charge their GPU-hours.
		kept := jobs[:0]
		pending := map[string]int{}
		for _, j := range jobs {
			if j.State == scheduler.Running && !j.Started.Add(time.Hour).After(now) {
				if err := ledger.Add(j.Team, float64(j.GPUs())*3600, now); err != nil {
					return err
				}
				used[(h-1)/168][j.Team] += float64(j.GPUs())
				continue
			}
			if j.State == scheduler.Pending {
				pending[j.Team]++
			}
			kept = append(kept, j)
		}
		jobs = kept
		for _, t := range teamNames {
			for ; pending[t] < perTeam; pending[t]++ {
				seq++
				jobs = append(jobs, scheduler.Job{ID: fmt.Sprintf("%s-%05d", t, seq), Team: t, Tier: scheduler.P1,
					Members: 1, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now})
			}
		}
		snap := &scheduler.Snapshot{Now: now, Cluster: c, Teams: teams(ledger, now), Jobs: slices.Clone(jobs)}
		d, err := s.Step(snap)
		if err != nil {
			return err
		}
		placed := map[string]topology.Allocation{}
		for _, p := range d.Placements {
			placed[p.Job] = p.Allocation
		}
		for i := range jobs {
			if a, ok := placed[jobs[i].ID]; ok {
				jobs[i].State, jobs[i].Started, jobs[i].Allocation = scheduler.Running, now, a
			}
		}
		if used[h/168] == nil {
			used[h/168] = map[string]float64{}
		}
	}
	// The last hour's jobs end at the end of the last week.
	end := start.Add(weeks * week)
	for _, j := range jobs {
		if j.State == scheduler.Running {
			if err := ledger.Add(j.Team, float64(j.GPUs())*3600, end); err != nil {
				return err
			}
			used[weeks-1][j.Team] += float64(j.GPUs())
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "week\tGPU-hours\tA (40%)\tB (35%)\tC (25%)\tmax gap")
	for k, u := range used {
		total := u["A"] + u["B"] + u["C"]
		gap := 0.0
		for _, t := range teamNames {
			gap = max(gap, abs(100*u[t]/total-shares[t]))
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f\n", k+1, total,
			100*u["A"]/total, 100*u["B"]/total, 100*u["C"]/total, gap)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nreport at the end of week 6:")
	snap := &scheduler.Snapshot{Now: end, Cluster: c, Teams: teams(ledger, end)}
	return fairshare.WriteReport(w, scheduler.Factors(snap).Report(nil, nil))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
