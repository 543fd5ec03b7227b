// Command custompolicy writes three scheduling policies from scratch
// against the public API and runs each beside the default policy on the
// same snapshot. Each policy sits in its own small file.
//
// Part 1, shortest job first inside a tier (sjf.go, an Orderer). Two nodes
// of 8 GPUs; a tier-0 inference service holds one. Four tier-1 jobs of 8
// GPUs wait for the other: a 24-hour sweep (the oldest), a notebook without
// a time limit, a 30-minute eval and a 2-hour benchmark. The default order
// (fair share, then age) starts the sweep and reserves the node for the
// notebook in 24 hours and 1 minute (the sweep's limit plus its 1-minute
// checkpoint grace); shortest-first starts the eval now and reserves the
// node for the benchmark in 31 minutes.
//
// Part 2, newest GPUs for big jobs (newestgpu.go, a binpack.Scorer). Two
// B200 and two V100 nodes of 8 GPUs; three 1-GPU inference pods and a
// training gang of 2×8 GPUs, none asking for a GPU type. The default Pack
// puts the pods on a B200 node (empty nodes tie, and the lowest name,
// b200-0, wins), so the gang, whose members all go on one GPU type, gets
// the two V100 nodes. The custom scorer packs the pods onto a V100 node
// and gives the gang both B200s.
//
// Part 3, a minimum runtime before preemption (minruntime.go, a
// VictimSelector). Two nodes of 8 GPUs run tier-3 jobs; a tier-1 job needs
// 8 GPUs. When one job started 2 minutes ago and the other 3 hours ago,
// the default preempts the newest (it loses the least work), the custom
// selector the 3-hour-old one. When both started within 10 minutes, the
// default still preempts one; the custom selector preempts nobody and the
// tier-1 job gets a reservation for when the first of them ends.
package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/internal/scenario"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

func main() { scenario.Main("custompolicy", run) }

var now = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// The custom policies; every other field keeps its default.
var (
	sjfConfig        = scheduler.Config{Order: scheduler.OrderFunc(shortestFirst)}
	newestGPUConfig  = scheduler.Config{Pack: newestGPU{Generations: []string{"V100", "A100", "H100", "B200"}, Big: 4}}
	minRuntimeConfig = scheduler.Config{Victims: minRuntime{Min: 10 * time.Minute}}
)

func run(w io.Writer) error {
	if err := part1(w); err != nil {
		return err
	}
	if err := part2(w); err != nil {
		return err
	}
	return part3(w)
}

// nodes returns n nodes of 8 GPUs of type typ, named prefix0, prefix1...
func nodes(prefix, typ string, n int) []topology.Node {
	var out []topology.Node
	for i := range n {
		out = append(out, topology.Node{Name: fmt.Sprintf("%s%d", prefix, i), GPUs: 8, GPUType: typ})
	}
	return out
}

// job is a pending 1×gpus job of team research submitted age ago.
func job(id string, tier, gpus int, limit, age time.Duration) scheduler.Job {
	return scheduler.Job{ID: id, Team: "research", Tier: scheduler.TierN(tier), Members: 1, GPUsPerMember: gpus,
		TimeLimit: limit, Submitted: now.Add(-age), CheckpointGrace: time.Minute}
}

// running turns j into a job started age ago on all GPUs of node.
func running(j scheduler.Job, node string, age time.Duration) scheduler.Job {
	j.State, j.Started = scheduler.Running, now.Add(-age)
	j.Submitted = j.Started.Add(-time.Minute)
	j.Allocation = topology.Allocation{{Node: node, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
	return j
}

// decide runs one Step of snap under the default policy and under custom.
func decide(snap *scheduler.Snapshot, custom scheduler.Config) (def, cus *scheduler.Decision, err error) {
	if def, err = scheduler.New(scheduler.Config{}).Step(snap); err != nil {
		return def, cus, err
	}
	cus, err = scheduler.New(custom).Step(snap)
	return def, cus, err
}

// outcome says what d does with job id.
func outcome(d *scheduler.Decision, id string) string {
	for _, p := range d.Placements {
		if p.Job == id {
			return "start on " + p.Allocation.String()
		}
	}
	for _, r := range d.Reservations {
		if r.Job == id {
			return fmt.Sprintf("reserved %s on %s", r.Start.Format("Jan 2 15:04"), r.Allocation)
		}
	}
	for _, e := range d.Evictions {
		if e.Job == id {
			return fmt.Sprintf("evicted (%s by %s)", e.Reason, e.By)
		}
	}
	for _, p := range d.Pending {
		if p.Job == id {
			return "waits (" + string(p.Reason) + ")"
		}
	}
	return "keeps running"
}

// limit formats a time limit, "none" for none.
func limit(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return short(d)
}

// short formats d without trailing zero units: 2h, 30m, 1h30m.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func table(w io.Writer, title string, header string, rows [][]any) error {
	fmt.Fprintf(w, "%s\n\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		for i, c := range r {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func sjfScenario() *scheduler.Snapshot {
	return &scheduler.Snapshot{Now: now, Cluster: topology.Cluster{Nodes: nodes("n", "H100", 2)}, Jobs: []scheduler.Job{
		running(job("serve", 0, 8, 0, 0), "n0", 48*time.Hour),
		job("sweep", 1, 8, 24*time.Hour, 3*time.Hour),
		job("notebook", 1, 8, 0, 2*time.Hour),
		job("eval", 1, 8, 30*time.Minute, time.Hour),
		job("bench", 1, 8, 2*time.Hour, 30*time.Minute),
	}}
}

// ranks returns the position (from 1) o gives each pending job of s.
func ranks(o scheduler.Orderer, s *scheduler.Snapshot) map[string]int {
	var jobs []*scheduler.Job
	for i := range s.Jobs {
		if s.Jobs[i].State == scheduler.Pending {
			jobs = append(jobs, &s.Jobs[i])
		}
	}
	// An Orderer receives the jobs sorted by ID, as Step passes them.
	slices.SortFunc(jobs, func(a, b *scheduler.Job) int { return strings.Compare(a.ID, b.ID) })
	o.Order(s, jobs)
	out := map[string]int{}
	for i, j := range jobs {
		out[j.ID] = i + 1
	}
	return out
}

func part1(w io.Writer) error {
	snap := sjfScenario()
	def, cus, err := decide(snap, sjfConfig)
	if err != nil {
		return err
	}
	dr, sr := ranks(scheduler.Multifactor{}, snap), ranks(sjfConfig.Order, snap)
	var rows [][]any
	for _, j := range snap.Jobs[1:] {
		rows = append(rows, []any{j.ID, j.Tier.Level(scheduler.DefaultTiers), limit(j.TimeLimit), short(now.Sub(j.Submitted)),
			dr[j.ID], outcome(def, j.ID), sr[j.ID], outcome(cus, j.ID)})
	}
	return table(w, "part 1: shortest job first inside a tier (node n0 runs tier-0 serve; now is Dec 2 09:00)",
		"job\ttier\tlimit\tage\tdefault rank\tdefault\tsjf rank\tsjf", rows)
}

func newestGPUScenario() *scheduler.Snapshot {
	snap := &scheduler.Snapshot{Now: now, Cluster: topology.Cluster{
		Nodes: append(nodes("b200-", "B200", 2), nodes("v100-", "V100", 2)...)}}
	for i := range 3 {
		pod := job(fmt.Sprintf("pod%d", i+1), 0, 1, 0, time.Duration(3-i)*time.Minute)
		pod.Kind, pod.Team = scheduler.Inference, "serving"
		snap.Jobs = append(snap.Jobs, pod)
	}
	train := job("train", 1, 8, 24*time.Hour, time.Minute)
	train.Members = 2
	snap.Jobs = append(snap.Jobs, train)
	return snap
}

func part2(w io.Writer) error {
	snap := newestGPUScenario()
	def, cus, err := decide(snap, newestGPUConfig)
	if err != nil {
		return err
	}
	var rows [][]any
	for _, j := range snap.Jobs {
		rows = append(rows, []any{j.ID, fmt.Sprintf("%d×%d", j.Members, j.GPUsPerMember), outcome(def, j.ID), outcome(cus, j.ID)})
	}
	return table(w, "part 2: newest GPUs for big jobs (2 B200 + 2 V100 nodes, all empty)",
		"job\tshape\tdefault (binpack.Pack)\tnewest-gpu", rows)
}

// minRuntimeScenario runs two tier-3 jobs started ages[0] and ages[1] ago
// on n0 and n1, and submits tier-1 job urgent for 8 GPUs.
func minRuntimeScenario(ages [2]time.Duration) *scheduler.Snapshot {
	return &scheduler.Snapshot{Now: now, Cluster: topology.Cluster{Nodes: nodes("n", "H100", 2)}, Jobs: []scheduler.Job{
		running(job("a", 3, 8, 12*time.Hour, 0), "n0", ages[0]),
		running(job("b", 3, 8, 12*time.Hour, 0), "n1", ages[1]),
		job("urgent", 1, 8, 4*time.Hour, 0),
	}}
}

var minRuntimeCases = [][2]time.Duration{
	{2 * time.Minute, 3 * time.Hour},
	{2 * time.Minute, 5 * time.Minute},
}

func part3(w io.Writer) error {
	var rows [][]any
	for _, ages := range minRuntimeCases {
		snap := minRuntimeScenario(ages)
		def, cus, err := decide(snap, minRuntimeConfig)
		if err != nil {
			return err
		}
		for _, j := range snap.Jobs {
			age := "pending"
			if j.State == scheduler.Running {
				age = "started " + short(now.Sub(j.Started)) + " ago"
			}
			rows = append(rows, []any{short(ages[0]) + " + " + short(ages[1]), j.ID, j.Tier.Level(scheduler.DefaultTiers), age, outcome(def, j.ID), outcome(cus, j.ID)})
		}
	}
	return table(w, "part 3: no preemption within 10m of a job's start (2 nodes × 8 GPUs, checkpoint grace 1m)",
		"case\tjob\ttier\tstate\tdefault (preempt.Select)\tmin-runtime 10m", rows)
}

// The custom types satisfy the extension points.
var (
	_ binpack.Scorer           = newestGPU{}
	_ scheduler.VictimSelector = minRuntime{}
)
