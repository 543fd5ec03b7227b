package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// preemptSnapshot builds the preemption-heavy workload of the design's
// performance section: nodes of 8 GPUs in leaves of 32 nodes and spines
// of 8 leaves, 90% of the nodes held by running jobs of tiers 1–3 with
// time limits (whole-node gangs of 1–8 nodes and pairs of 4-GPU pods),
// and pending jobs of tiers 0–3 over 20 teams that mix gangs of 1–512
// GPUs (some requiring one spine) with inference pods of 1–8 GPUs.
func preemptSnapshot(nodes, pending int) *Snapshot {
	rng := rand.New(rand.NewPCG(uint64(nodes), uint64(pending)+90))
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := &Snapshot{Now: now}
	s.Cluster.Levels = []string{"spine", "leaf"}
	for i := range nodes {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{
			Name: fmt.Sprintf("n%05d", i), GPUs: 8, GPUType: "H100",
			Domains: map[string]string{"spine": fmt.Sprintf("s%d", i/256), "leaf": fmt.Sprintf("l%d", i/32)},
		})
	}
	var teams []string
	for t := range 20 {
		name := fmt.Sprintf("team-%02d", t)
		teams = append(teams, name)
		s.Teams = append(s.Teams, Team{Name: name, Share: float64(1 + t%5), Usage: float64(rng.IntN(4e6))})
	}
	busy := nodes * 9 / 10
	id := 0
	for n := 0; n < busy; {
		j := Job{ID: fmt.Sprintf("r%07d", id), Team: teams[rng.IntN(len(teams))], Tier: TierN(1 + rng.IntN(3)), State: Running,
			Started: now.Add(-time.Duration(rng.IntN(600)) * time.Minute), TimeLimit: time.Duration(30+rng.IntN(571)) * time.Minute}
		if j.Started.Add(j.TimeLimit).Before(now.Add(time.Minute)) {
			j.Started = now.Add(-time.Minute)
		}
		id++
		if rng.IntN(2) == 0 {
			members := min(1+rng.IntN(8), busy-n)
			j.Members, j.GPUsPerMember = members, 8
			for k := range members {
				j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: s.Cluster.Nodes[n+k].Name, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}})
			}
			n += members
		} else {
			j.Members, j.GPUsPerMember = 1, 4
			j.Allocation = topology.Allocation{{Node: s.Cluster.Nodes[n].Name, GPUs: []int{0, 1, 2, 3}}}
			k := j
			k.ID, k.Tier = fmt.Sprintf("r%07d", id), TierN(1+rng.IntN(3))
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

// BenchmarkStepPreemptionHeavy measures a Step on 16,384 nodes, 90%
// held by running jobs of tiers 1–3, and 100,000 pending jobs of tiers
// 0–3 over 20 teams (DESIGN section 7: under 300 ms with the default
// policy); it reports the jobs evicted. "budget=default" is the default
// policy; "budget=off" lifts the disruption budget to every GPU of the
// cluster, so that every preemptor that can free room evicts in the one
// Step: the cost of preemption itself.
func BenchmarkStepPreemptionHeavy(b *testing.B) {
	snap := preemptSnapshot(16384, 100000)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"budget=default", Config{}},
		{"budget=off", Config{MaxEvictedGPUs: 16384 * 8}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := stepLoop(b, snap, tc.cfg)
			b.ReportMetric(float64(len(d.Evictions)), "evicted")
		})
	}
}
