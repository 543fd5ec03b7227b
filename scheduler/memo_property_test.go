package scheduler_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// The shortcuts of preemption in a Step (memos of searches that found no
// victims and of jobs that waited, and no search when waiting is as fast
// as any preemption) must change no decision. Each property compares
// Step with a Step that searches for victims for every job that may
// preempt.
func TestPreemptionMemoChangesNothing(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { sameWithoutMemo(t, m.cfg, gen.Snapshot(t)) })
		})
	}
}

// TestPreemptionMemoChangesNothingCrowded draws where the memos matter:
// a small full cluster, running jobs of every tier near their limits and
// with checkpoint graces, some being evicted, and a queue of a few
// shapes, mostly of tiers that may preempt, so that jobs of one shape
// and tier follow one another, some packed and some spread.
func TestPreemptionMemoChangesNothingCrowded(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { sameWithoutMemo(t, m.cfg, crowded(t)) })
		})
	}
}

func sameWithoutMemo(t *rapid.T, cfg scheduler.Config, s *scheduler.Snapshot) {
	cfg.Order = rapid.SampledFrom([]scheduler.Orderer{nil, scheduler.TierOrder{}}).Draw(t, "order")
	switch rapid.IntRange(0, 3).Draw(t, "reservePolicy") {
	case 0:
		// A ReservationPolicy that declines some: preemptors then wait
		// with reason awaiting-preemption instead of a claim.
		least := rapid.SampledFrom([]int{2, 8, 16}).Draw(t, "reserveMinGPUs")
		cfg.Reserve = scheduler.ReserveFunc(func(j *scheduler.Job, _ int) bool { return j.GPUs() >= least })
	case 1:
		// One that declines jobs at random: jobs alike, one after the
		// other, then differ in whether they may reserve.
		may := map[string]bool{}
		for _, j := range s.Jobs {
			may[j.ID] = rapid.Bool().Draw(t, "mayReserve")
		}
		cfg.Reserve = scheduler.ReserveFunc(func(j *scheduler.Job, _ int) bool { return may[j.ID] })
	}
	d, err := scheduler.New(cfg).Step(s)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	ref, err := scheduler.NewWithoutMemo(cfg).Step(s)
	if err != nil {
		t.Fatalf("Step without memo: %v", err)
	}
	if !reflect.DeepEqual(d, ref) {
		t.Fatalf("the preemption memo changed the decision:\nwith memo    %s\nwithout memo %s\n%s", show(d), show(ref), dump(s, d))
	}
}

// crowded draws a snapshot of 1–6 nodes of 8 GPUs in racks of 1–3,
// nearly full.
func crowded(t *rapid.T) *scheduler.Snapshot {
	now := gen.Now
	s := &scheduler.Snapshot{Now: now}
	s.Cluster.Levels = []string{"rack"}
	nodes := rapid.IntRange(1, 6).Draw(t, "nodes")
	perRack := rapid.IntRange(1, 3).Draw(t, "perRack")
	for i := range nodes {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8,
			Domains: map[string]string{"rack": fmt.Sprintf("r%d", i/perRack)}})
	}
	id := 0
	for i := range nodes {
		for lo := 0; lo < 8; {
			g := rapid.SampledFrom([]int{2, 4, 8}).Draw(t, "rgpus")
			g = min(g, 8-lo)
			if rapid.IntRange(0, 5).Draw(t, "hole") == 0 {
				lo += g // left free
				continue
			}
			gpus := make([]int, g)
			for k := range gpus {
				gpus[k] = lo + k
			}
			lo += g
			j := scheduler.Job{ID: fmt.Sprintf("r%02d", id), Tier: scheduler.TierN(rapid.IntRange(0, 3).Draw(t, "rtier")), State: scheduler.Running,
				Members: 1, GPUsPerMember: g, Submitted: now.Add(-10 * time.Hour),
				Started:         now.Add(-time.Duration(rapid.IntRange(1, 120).Draw(t, "rago")) * time.Minute),
				CheckpointGrace: time.Duration(rapid.SampledFrom([]int{0, 2, 5, 10}).Draw(t, "rgrace")) * time.Minute,
				Allocation:      topology.Allocation{{Node: s.Cluster.Nodes[i].Name, GPUs: gpus}}}
			id++
			if rapid.IntRange(0, 2).Draw(t, "rlimited") > 0 {
				j.TimeLimit = now.Sub(j.Started) + time.Duration(rapid.IntRange(-1, 20).Draw(t, "rleft"))*time.Minute
			} else {
				j.Kind = scheduler.Inference
			}
			if rapid.IntRange(0, 7).Draw(t, "evicting") == 0 {
				j.State = scheduler.Evicting
				j.EvictedAt = now.Add(-time.Duration(rapid.IntRange(0, 5).Draw(t, "evago")) * time.Minute)
			}
			s.Jobs = append(s.Jobs, j)
		}
	}
	type shape struct {
		members, gpus int
		limit         time.Duration
	}
	var shapes []shape
	for range rapid.IntRange(1, 3).Draw(t, "shapes") {
		sh := shape{members: rapid.IntRange(1, 2).Draw(t, "members"), gpus: rapid.SampledFrom([]int{2, 4, 8}).Draw(t, "gpus")}
		if rapid.Bool().Draw(t, "limited") {
			sh.limit = time.Duration(rapid.IntRange(1, 12).Draw(t, "limit")) * 10 * time.Minute
		}
		shapes = append(shapes, sh)
	}
	for i := range rapid.IntRange(1, 8).Draw(t, "pending") {
		sh := rapid.SampledFrom(shapes).Draw(t, "shape")
		j := scheduler.Job{ID: fmt.Sprintf("p%02d", i), Tier: scheduler.TierN(rapid.SampledFrom([]int{0, 0, 1, 2, 3}).Draw(t, "tier")),
			Members: sh.members, GPUsPerMember: sh.gpus, TimeLimit: sh.limit,
			Submitted: now.Add(-time.Duration(rapid.IntRange(0, 60).Draw(t, "submit")) * time.Minute)}
		if rapid.IntRange(0, 3).Draw(t, "more") == 0 {
			j.Members++
		}
		if rapid.IntRange(0, 3).Draw(t, "longer") == 0 {
			j.TimeLimit = time.Duration(rapid.IntRange(1, 12).Draw(t, "olimit")) * 10 * time.Minute
		}
		if j.TimeLimit == 0 {
			j.Kind = scheduler.Inference
		}
		if rapid.IntRange(0, 2).Draw(t, "spread") == 0 {
			j.Placement = scheduler.Spread
			if rapid.Bool().Draw(t, "overRacks") {
				j.SpreadLevel = "rack"
			}
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

func show(d *scheduler.Decision) string {
	out := ""
	for _, e := range d.Evictions {
		out += fmt.Sprintf("\n  evict %s %s by=%s", e.Job, e.Reason, e.By)
	}
	for _, r := range d.Reservations {
		out += fmt.Sprintf("\n  reserve %s at %s %s", r.Job, r.Start.Sub(gen.Now), r.Allocation)
	}
	for _, p := range d.Placements {
		out += fmt.Sprintf("\n  place %s %s", p.Job, p.Allocation)
	}
	for _, w := range d.Pending {
		out += fmt.Sprintf("\n  wait %s %s: %s", w.Job, w.Reason, w.Message)
	}
	return out
}
