package scheduler_test

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

var policyNow = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// policyCluster is n nodes of 8 H100 GPUs named n00, n01...
func policyCluster(n int) topology.Cluster { return topology.Uniform(n, 8, "H100") }

// polPending is a pending gang of members × 8 GPUs submitted age ago.
func polPending(id, team string, tier, members int, limit, age time.Duration) scheduler.Job {
	return scheduler.Job{ID: id, Team: team, Tier: scheduler.TierN(tier), Members: members, GPUsPerMember: 8,
		TimeLimit: limit, Submitted: policyNow.Add(-age)}
}

// polRunning is a tier-3 job started age ago on all GPUs of the nodes.
func polRunning(id string, age time.Duration, nodes ...string) scheduler.Job {
	j := polPending(id, "batch", 3, len(nodes), 12*time.Hour, age+time.Minute)
	j.State, j.Started, j.CheckpointGrace = scheduler.Running, policyNow.Add(-age), time.Minute
	for _, n := range nodes {
		j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: n, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
	}
	return j
}

// polPrint prints d list by list, each in job ID order.
func polPrint(d *scheduler.Decision) {
	for _, p := range d.Placements {
		fmt.Printf("start %s on %s\n", p.Job, p.Allocation)
	}
	for _, e := range d.Evictions {
		fmt.Printf("evict %s (%s by %s)\n", e.Job, e.Reason, e.By)
	}
	for _, r := range d.Reservations {
		fmt.Printf("reserve %s at %s on %s\n", r.Job, r.Start.Format("15:04"), r.Allocation)
	}
	for _, w := range d.Pending {
		fmt.Printf("%s waits: %s\n", w.Job, w.Reason)
	}
}

// polIDs lists the IDs of jobs, in their order.
func polIDs(jobs []*scheduler.Job) string {
	var s []string
	for _, j := range jobs {
		s = append(s, j.ID)
	}
	return strings.Join(s, " ")
}

// polPendingPtrs returns pointers to the pending jobs of s, sorted by ID, as
// Step hands them to an Orderer.
func polPendingPtrs(s *scheduler.Snapshot) []*scheduler.Job {
	var out []*scheduler.Job
	for i := range s.Jobs {
		if s.Jobs[i].State == scheduler.Pending {
			out = append(out, &s.Jobs[i])
		}
	}
	slices.SortFunc(out, func(a, b *scheduler.Job) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// A custom order: the biggest job first inside a tier. An Orderer only
// permutes the slice; it must not modify the jobs. On one node of 8 GPUs
// the 8-GPU job starts first, though the two 4-GPU jobs are older.
func ExampleOrderFunc() {
	biggestFirst := scheduler.OrderFunc(func(_ *scheduler.Snapshot, jobs []*scheduler.Job) {
		slices.SortStableFunc(jobs, func(a, b *scheduler.Job) int {
			return cmp.Or(cmp.Compare(a.Tier.Level(scheduler.DefaultTiers), b.Tier.Level(scheduler.DefaultTiers)), cmp.Compare(b.GPUs(), a.GPUs()), strings.Compare(a.ID, b.ID))
		})
	})
	small := func(id string, age time.Duration) scheduler.Job {
		j := polPending(id, "research", 1, 1, time.Hour, age)
		j.GPUsPerMember = 4
		return j
	}
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: policyCluster(1), Jobs: []scheduler.Job{
		polPending("big", "research", 1, 1, time.Hour, time.Minute),
		small("small-1", 2*time.Hour),
		small("small-2", time.Hour),
	}}
	d, err := scheduler.New(scheduler.Config{Order: biggestFirst}).Step(snap)
	if err != nil {
		fmt.Println(err)
		return
	}
	polPrint(d)
	// Output:
	// start big on n00[0-7]
	// reserve small-1 at 10:00 on n00[0-3]
	// small-2 waits: insufficient-gpus
}

// An admission rule: team interns may not run jobs over 64 GPUs. Other
// jobs go on to the default, the teams' quotas. A refused job waits with
// reason quota and the message, and blocks nobody.
func ExampleAdmitFunc() {
	admit := scheduler.AdmitFunc(func(s *scheduler.Snapshot, j *scheduler.Job, u scheduler.Usage) (bool, string) {
		if j.Team == "interns" && j.GPUs() > 64 {
			return false, fmt.Sprintf("interns may not run jobs over 64 GPUs (%d requested)", j.GPUs())
		}
		return scheduler.QuotaAdmitter{}.Admit(s, j, u)
	})
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: policyCluster(16), Jobs: []scheduler.Job{
		polPending("intern-big", "interns", 2, 9, time.Hour, 3*time.Hour),
		polPending("intern-ok", "interns", 2, 4, time.Hour, 2*time.Hour),
		polPending("research", "research", 2, 12, time.Hour, time.Hour),
	}}
	d, err := scheduler.New(scheduler.Config{Admit: admit}).Step(snap)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range d.Placements {
		fmt.Printf("start %s on %d GPUs\n", p.Job, p.Allocation.Count())
	}
	for _, w := range d.Pending {
		fmt.Printf("%s waits: %s: %s\n", w.Job, w.Reason, w.Message)
	}
	// Output:
	// start intern-ok on 32 GPUs
	// start research on 96 GPUs
	// intern-big waits: quota: interns may not run jobs over 64 GPUs (72 requested)
}

// A victim selector wrapping preempt.Select: preempt at most one job per
// preemptor, otherwise wait. A tier-1 gang of 2×8 needs both nodes, each
// running a tier-3 job: the default evicts both and reserves the nodes
// for when their one-minute checkpoint grace is over; this selector
// evicts neither, and the gang is reserved for 20:01, when the later of
// the two has reached its time limit and checkpointed for its minute of
// grace.
func ExampleVictimFunc() {
	atMostOne := scheduler.VictimFunc(func(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool) {
		victims, pl, ok := preempt.Select(ix, r, s, cands)
		if len(victims) > 1 {
			return nil, gang.Placement{}, false
		}
		return victims, pl, ok
	})
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: policyCluster(2), Jobs: []scheduler.Job{
		polRunning("batch-a", time.Hour, "n00"),
		polRunning("batch-b", 2*time.Hour, "n01"),
		polPending("train", "research", 1, 2, 4*time.Hour, 0),
	}}
	for _, cfg := range []scheduler.Config{{}, {Victims: atMostOne}} {
		d, err := scheduler.New(cfg).Step(snap)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("custom:", cfg.Victims != nil)
		polPrint(d)
	}
	// Output:
	// custom: false
	// evict batch-a (preempted by train)
	// evict batch-b (preempted by train)
	// reserve train at 09:01 on n00[0-7] n01[0-7]
	// custom: true
	// reserve train at 20:01 on n00[0-7] n01[0-7]
}

// Multifactor with weights of its own: age only, fair share switched
// off (Explicit makes the zero weights mean zero). Team heavy has used
// the cluster a lot; its job is the older one. The default weights put
// light's job first; age-only weights put the older job first.
func ExampleMultifactor() {
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: policyCluster(4),
		Teams: []scheduler.Team{{Name: "heavy", Share: 1, Usage: 1e9}, {Name: "light", Share: 1}},
		Jobs: []scheduler.Job{
			polPending("heavy-job", "heavy", 1, 1, time.Hour, 6*time.Hour),
			polPending("light-job", "light", 1, 1, time.Hour, time.Hour),
			polPending("prod", "heavy", 0, 1, time.Hour, 0),
		}}
	for _, m := range []scheduler.Multifactor{
		{},
		{Weights: fairshare.Weights{Age: 100, Explicit: true}},
	} {
		jobs := polPendingPtrs(snap)
		m.Order(snap, jobs)
		fmt.Println(polIDs(jobs))
	}
	// Output:
	// prod light-job heavy-job
	// prod heavy-job light-job
}

// The zero Config is the default policy; a policy file sets the rest.
// Custom policies (Order, Admit, Pack, Victims...) are Go values and are
// set on the decoded Config.
func ExampleConfig() {
	var zero scheduler.Config
	fmt.Println("zero:", zero.Backfill, zero.BackfillOrder, "reservations", zero.Reservations, "enforce limits", !zero.IgnoreTimeLimits)

	cfg, err := scheduler.DecodeConfig(strings.NewReader(`{
		"backfill": "easy",
		"reservations": 2,
		"backfillOrder": "shortest",
		"fairshare": {"weights": {"fairshare": 500, "age": 200}, "ageMax": "72h"}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	w := cfg.FairShare.Weights
	fmt.Println("file:", cfg.Backfill, cfg.BackfillOrder, "reservations", cfg.Reservations, "enforce limits", !cfg.IgnoreTimeLimits)
	fmt.Println("weights:", w.FairShare, w.Age, w.Size, w.AgeMax)

	_, err = scheduler.DecodeConfig(strings.NewReader(`{"backfill": "eager"}`))
	fmt.Println(err != nil)
	// Output:
	// zero: easy priority reservations 0 enforce limits true
	// file: easy shortest reservations 2 enforce limits true
	// weights: 500 200 0 72h0m0s
	// true
}

// Composition: shortest job first inside each tier, with the default
// deciding ties. Multifactor orders first; a stable sort by tier and
// requested time keeps its order among jobs of equal limits. Here the
// two 1-hour jobs keep the fair-share order (light's before heavy's), and
// both go ahead of the older 8-hour job.
func ExampleMultifactor_sjfInsideTier() {
	requested := func(j *scheduler.Job) time.Duration {
		if j.TimeLimit <= 0 {
			return math.MaxInt64 // no limit: last
		}
		return j.TimeLimit
	}
	sjf := scheduler.OrderFunc(func(s *scheduler.Snapshot, jobs []*scheduler.Job) {
		scheduler.Multifactor{}.Order(s, jobs)
		slices.SortStableFunc(jobs, func(a, b *scheduler.Job) int {
			return cmp.Or(cmp.Compare(a.Tier.Level(scheduler.DefaultTiers), b.Tier.Level(scheduler.DefaultTiers)), cmp.Compare(requested(a), requested(b)))
		})
	})
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: policyCluster(4),
		Teams: []scheduler.Team{{Name: "heavy", Share: 1, Usage: 1e9}, {Name: "light", Share: 1}},
		Jobs: []scheduler.Job{
			polPending("heavy-1h", "heavy", 1, 1, time.Hour, 3*time.Hour),
			polPending("light-1h", "light", 1, 1, time.Hour, time.Hour),
			polPending("light-8h", "light", 1, 1, 8*time.Hour, 5*time.Hour),
			polPending("serve", "heavy", 0, 1, 0, 0),
		}}
	jobs := polPendingPtrs(snap)
	sjf.Order(snap, jobs)
	fmt.Println(polIDs(jobs))
	// Output:
	// serve light-1h heavy-1h light-8h
}

// A ReservationPolicy that protects only big gangs: the small blocked job
// gets no reservation even though it is first in line, so the big one
// gets the promise: at 20:01, when the running job has reached its time
// limit and checkpointed for its minute of grace.
func ExampleReserveFunc() {
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: policyCluster(4), Jobs: []scheduler.Job{
		polRunning("busy", time.Hour, "n00", "n01", "n02", "n03"),
		polPending("small", "t", 1, 1, time.Hour, 2*time.Minute),
		polPending("big", "t", 1, 4, time.Hour, time.Minute),
	}}
	bigOnly := scheduler.ReserveFunc(func(j *scheduler.Job, made int) bool { return j.GPUs() >= 32 })
	d, _ := scheduler.New(scheduler.Config{Order: scheduler.TierOrder{}, Reserve: bigOnly, DisablePreemption: true}).Step(snap)
	polPrint(d)
	// Output:
	// reserve big at 20:01 on n00[0-7] n01[0-7] n02[0-7] n03[0-7]
	// small waits: insufficient-gpus
}

// A DomainChooser that sends gangs to the emptiest leaf (worst fit), to
// keep every leaf partly free, instead of the default best fit.
func ExampleConfig_domains() {
	c := topology.Cluster{Levels: []string{"leaf"}}
	for i := range 4 {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%02d", i), GPUs: 8,
			Domains: map[string]string{"leaf": fmt.Sprintf("l%d", i/2)}})
	}
	run := polRunning("r", time.Hour, "n00")
	job := polPending("g", "t", 1, 1, time.Hour, time.Minute)
	job.Topology.Required = "leaf"
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: c, Jobs: []scheduler.Job{run, job}}

	emptiest := gang.ChooserFunc(func(ix *topology.Index, level int, r gang.Request, fits []topology.DomainID) topology.DomainID {
		best := fits[0]
		for _, d := range fits {
			if ix.FreeGPUs(level, d, r.Class) > ix.FreeGPUs(level, best, r.Class) {
				best = d
			}
		}
		return best
	})
	for _, cfg := range []scheduler.Config{{}, {Domains: emptiest}} {
		d, _ := scheduler.New(cfg).Step(snap)
		polPrint(d)
	}
	// Output:
	// start g on n01[0-7]
	// start g on n02[0-7]
}

// A node scorer for Config.Pack: small pods go to the older A100 node and
// whole-node members to the H100s, so that the H100s stay whole for
// gangs. The default packs the pods onto the first H100 node (nodes tie,
// and the lowest name wins); the gang, whose members all go on one GPU
// type, then finds one whole H100 and the A100, and waits.
// A function scorer is asked member by member; it is not a
// binpack.Consolidator, so it may split a gang over more nodes than
// binpack.Pack would (see there).
func ExampleConfig_pack() {
	c := topology.Cluster{Nodes: []topology.Node{
		{Name: "n0", GPUs: 8, GPUType: "H100"},
		{Name: "n1", GPUs: 8, GPUType: "H100"},
		{Name: "n2", GPUs: 8, GPUType: "A100"},
	}}
	pod := func(id string) scheduler.Job {
		j := polPending(id, "web", 1, 1, 0, time.Hour)
		j.GPUsPerMember, j.Kind = 1, scheduler.Inference
		return j
	}
	snap := &scheduler.Snapshot{Now: policyNow, Cluster: c, Jobs: []scheduler.Job{
		pod("pod-1"), pod("pod-2"), polPending("train", "research", 2, 2, 4*time.Hour, 0),
	}}
	oldForSmall := binpack.ScorerFunc(func(c binpack.Candidate) int64 {
		score := binpack.Pack{}.Score(c) // the fullest node that fits...
		if (c.GPUType == "A100") == (c.Request < 8) {
			score += 100 // ...of the right generation
		}
		return score
	})
	for _, cfg := range []scheduler.Config{{}, {Pack: oldForSmall}} {
		d, err := scheduler.New(cfg).Step(snap)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("custom:", cfg.Pack != nil)
		polPrint(d)
	}
	// Output:
	// custom: false
	// start pod-1 on n0[0]
	// start pod-2 on n0[1]
	// train waits: insufficient-gpus
	// custom: true
	// start pod-1 on n2[0]
	// start pod-2 on n2[1]
	// start train on n0[0-7] n1[0-7]
}
