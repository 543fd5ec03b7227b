package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// benchSnapshot builds the synthetic workload of the design's performance
// section: nodes of 8 GPUs in leaves of 32 nodes and spines of 8 leaves,
// about 70% of the GPUs held by running jobs with time limits, and
// pending jobs that mix gangs of 1–512 GPUs (whole 8-GPU members, some
// requiring one spine) with inference pods of 1–8 GPUs, over four tiers
// and three teams.
func benchSnapshot(nodes, pending int) *Snapshot {
	rng := rand.New(rand.NewPCG(uint64(nodes), uint64(pending)))
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := &Snapshot{Now: now}
	s.Cluster.Levels = []string{"spine", "leaf"}
	for i := range nodes {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{
			Name: fmt.Sprintf("n%05d", i), GPUs: 8, GPUType: "H100",
			Domains: map[string]string{"spine": fmt.Sprintf("s%d", i/256), "leaf": fmt.Sprintf("l%d", i/32)},
		})
	}
	teams := []string{"team-a", "team-b", "team-c"}
	s.Teams = []Team{{Name: "team-a", Share: 40, Usage: 3e6}, {Name: "team-b", Share: 35, Usage: 1e6}, {Name: "team-c", Share: 25, Usage: 1e6}}
	// Running jobs: fill 70% of the nodes, node by node, with a mix of
	// whole-node members and pods.
	id := 0
	for n := 0; n < nodes*7/10; {
		j := Job{ID: fmt.Sprintf("r%07d", id), Team: teams[id%3], Tier: TierN(id % 4), State: Running,
			Started: now.Add(-time.Duration(rng.IntN(600)) * time.Minute), TimeLimit: time.Duration(30+rng.IntN(571)) * time.Minute}
		if j.Started.Add(j.TimeLimit).Before(now.Add(time.Minute)) {
			j.Started = now.Add(-time.Minute)
		}
		id++
		if rng.IntN(2) == 0 {
			members := min(1+rng.IntN(8), nodes*7/10-n)
			j.Members, j.GPUsPerMember = members, 8
			for k := range members {
				j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: s.Cluster.Nodes[n+k].Name, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
			}
			n += members
		} else {
			// Two pods of 4 on one node.
			j.Members, j.GPUsPerMember = 1, 4
			j.Allocation = topology.Allocation{{Node: s.Cluster.Nodes[n].Name, GPUs: []int{0, 1, 2, 3}}}
			k := j
			k.ID = fmt.Sprintf("r%07d", id)
			id++
			k.Allocation = topology.Allocation{{Node: s.Cluster.Nodes[n].Name, GPUs: []int{4, 5, 6, 7}}}
			s.Jobs = append(s.Jobs, k)
			n++
		}
		s.Jobs = append(s.Jobs, j)
	}
	for i := range pending {
		s.Jobs = append(s.Jobs, benchPendingJob(rng, i, teams, now))
	}
	return s
}

// benchPendingJob draws pending job i of the benchmark workloads: of one
// of teams, tiers 0–3, submitted in the last 10,000 s; half inference
// pods of 1/2/4/8 GPUs (drawn 4:2:1:1, no time limit), half gangs of
// 1–512 GPUs with limits of 30–600 minutes (whole 8-GPU members from 8
// up, a quarter of those bound to one spine).
func benchPendingJob(rng *rand.Rand, i int, teams []string, now time.Time) Job {
	pods := [...]int{1, 1, 1, 1, 2, 2, 4, 8}
	j := Job{ID: fmt.Sprintf("p%07d", i), Team: teams[rng.IntN(len(teams))], Tier: TierN(rng.IntN(4)),
		Submitted: now.Add(-time.Duration(rng.IntN(10000)) * time.Second),
		TimeLimit: time.Duration(30+rng.IntN(571)) * time.Minute}
	if rng.IntN(2) == 0 {
		j.Kind, j.Members, j.GPUsPerMember, j.TimeLimit = Inference, 1, pods[rng.IntN(len(pods))], 0
	} else if gpus := 1 << rng.IntN(10); gpus >= 8 {
		j.Members, j.GPUsPerMember = gpus/8, 8
		if rng.IntN(4) == 0 {
			j.Topology.Required = "spine"
		}
	} else {
		j.Members, j.GPUsPerMember = 1, gpus
	}
	return j
}

var benchSizes = []struct{ nodes, pending int }{
	{256, 1000}, {256, 10000}, {2048, 10000}, {2048, 100000}, {16384, 10000}, {16384, 100000},
}

func benchStep(b *testing.B, cfg Config) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", sz.nodes, sz.pending), func(b *testing.B) {
			stepLoop(b, benchSnapshot(sz.nodes, sz.pending), cfg)
		})
	}
}

// stepLoop runs Step on snap as benchmark b and reports the jobs the
// last Step placed and reserved.
func stepLoop(b *testing.B, snap *Snapshot, cfg Config) *Decision {
	s := New(cfg)
	b.ReportAllocs()
	var d *Decision
	for b.Loop() {
		var err error
		if d, err = s.Step(snap); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(d.Placements)), "placed")
	b.ReportMetric(float64(len(d.Reservations)), "reserved")
	return d
}

// BenchmarkStep measures a full Step with the default policy (EASY).
func BenchmarkStep(b *testing.B) { benchStep(b, Config{}) }

// withBenchResources sets CPU and memory on every node and job of a
// benchmark snapshot: nodes of 128 CPUs and 1 TiB, jobs asking per GPU
// 8, 12 or 16 CPUs and 64, 96 or 128 GiB (drawn per job), so that a node
// full of the hungriest jobs has none to spare and CPU or memory, not
// GPUs, sometimes decides where a member fits.
func withBenchResources(s *Snapshot) *Snapshot {
	rng := rand.New(rand.NewPCG(uint64(len(s.Cluster.Nodes)), 7))
	for i := range s.Cluster.Nodes {
		s.Cluster.Nodes[i].CPUMillis, s.Cluster.Nodes[i].MemoryMiB = 128000, 1<<20
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.CPUMillis = j.GPUsPerMember * (8 + 4*rng.IntN(3)) * 1000
		j.MemoryMiB = j.GPUsPerMember * (64 + 32*rng.IntN(3)) * 1024
	}
	return s
}

// BenchmarkStepResources is BenchmarkStep with CPU and memory set on
// every node and job (withBenchResources).
func BenchmarkStepResources(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", sz.nodes, sz.pending), func(b *testing.B) {
			stepLoop(b, withBenchResources(benchSnapshot(sz.nodes, sz.pending)), Config{})
		})
	}
}

// BenchmarkStepConservative measures a full Step with conservative
// backfill: a reservation for every blocked job.
func BenchmarkStepConservative(b *testing.B) { benchStep(b, Config{Backfill: Conservative}) }

// BenchmarkStepConservativeHorizon measures conservative backfill with
// reservations planned one day ahead.
func BenchmarkStepConservativeHorizon(b *testing.B) {
	benchStep(b, Config{Backfill: Conservative, Horizon: 24 * time.Hour})
}

// BenchmarkStepNone measures strict priority order.
func BenchmarkStepNone(b *testing.B) { benchStep(b, Config{Backfill: NoBackfill}) }

// BenchmarkStepNoPreemption measures EASY with preemption turned off, to
// show what preemption costs on top.
func BenchmarkStepNoPreemption(b *testing.B) { benchStep(b, Config{DisablePreemption: true}) }

// BenchmarkMultifactorOrder orders the 100,000 pending jobs of the
// 16,384-node benchmark snapshot, as each Step does.
func BenchmarkMultifactorOrder(b *testing.B) {
	snap := benchSnapshot(16384, 100000)
	var pending []*Job
	for i := range snap.Jobs {
		if snap.Jobs[i].State == Pending {
			pending = append(pending, &snap.Jobs[i])
		}
	}
	jobs := make([]*Job, len(pending))
	b.ReportAllocs()
	for b.Loop() {
		copy(jobs, pending)
		Multifactor{}.Order(snap, jobs)
	}
}

// BenchmarkStepWithPlan measures the Step after a first one, when
// nothing happened in between: the host applied the first decision (its
// placements run, its victims are evicting) and passes its reservations
// back as the plan: under EASY the protected jobs' and preemptors'
// promises, under conservative one for every blocked job. Each promise
// is checked, kept and compressed. BenchmarkStepAfterStep is the same
// Step without the plan, for comparison.
func BenchmarkStepWithPlan(b *testing.B) { benchNextStep(b, true) }

// BenchmarkStepAfterStep is BenchmarkStepWithPlan without the plan: the
// second Step plans from scratch.
func BenchmarkStepAfterStep(b *testing.B) { benchNextStep(b, false) }

func benchNextStep(b *testing.B, withPlan bool) {
	for _, mode := range []BackfillMode{EASY, Conservative} {
		for _, sz := range benchSizes {
			b.Run(fmt.Sprintf("%v/nodes=%d/pending=%d", mode, sz.nodes, sz.pending), func(b *testing.B) {
				cfg := Config{Backfill: mode}
				snap := benchSnapshot(sz.nodes, sz.pending)
				d, err := New(cfg).Step(snap)
				if err != nil {
					b.Fatal(err)
				}
				next := applied(snap, d)
				if withPlan {
					next.Plan = d.Reservations
				}
				stepLoop(b, next, cfg)
			})
		}
	}
}

// applied is snap after a host applied d at snap.Now: placed jobs run,
// evicted ones are evicting.
func applied(snap *Snapshot, d *Decision) *Snapshot {
	next := *snap
	next.Jobs = slices.Clone(snap.Jobs)
	at := map[string]int{}
	for i := range next.Jobs {
		at[next.Jobs[i].ID] = i
	}
	for _, p := range d.Placements {
		j := &next.Jobs[at[p.Job]]
		j.State, j.Started, j.Allocation = Running, snap.Now, p.Allocation
	}
	for _, e := range d.Evictions {
		j := &next.Jobs[at[e.Job]]
		j.State, j.EvictedAt = Evicting, snap.Now
	}
	return &next
}
