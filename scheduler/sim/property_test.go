package sim_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
)

// TestPropertySimulation replays random small workloads on small uniform
// clusters and checks, over the whole run, that every job finishes
// exactly once, that no GPU is ever held by two jobs at once, and that
// without backfill jobs start in priority (submit, then ID) order.
func TestPropertySimulation(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 4).Draw(rt, "nodes")
		per := rapid.IntRange(1, 4).Draw(rt, "gpusPerNode")
		mode := rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative, scheduler.NoBackfill}).Draw(rt, "backfill")
		order := rapid.SampledFrom([]scheduler.BackfillOrder{scheduler.ByPriority, scheduler.ShortestFirst}).Draw(rt, "order")
		n := rapid.IntRange(1, 14).Draw(rt, "jobs")
		jobs := make([]sim.Job, n)
		for i := range jobs {
			gpm := rapid.IntRange(1, per).Draw(rt, "gpusPerMember")
			members := rapid.IntRange(1, nodes*(per/gpm)).Draw(rt, "members")
			run := rapid.IntRange(1, 15).Draw(rt, "run")
			limit := run
			if rapid.Bool().Draw(rt, "otherLimit") {
				limit = rapid.IntRange(1, 20).Draw(rt, "limit")
			}
			jobs[i] = sim.Job{
				ID: fmt.Sprintf("j%02d", i), Submit: time.Duration(rapid.IntRange(0, 20).Draw(rt, "submit")) * s,
				Members: members, GPUsPerMember: gpm, Run: time.Duration(run) * s, Limit: time.Duration(limit) * s,
				CheckpointGrace: time.Duration(rapid.IntRange(0, 2).Draw(rt, "grace")) * s, Tier: scheduler.P3,
			}
		}
		cfg := scheduler.Config{Backfill: mode, BackfillOrder: order, Order: scheduler.TierOrder{}}
		res, err := sim.Run(sim.Uniform(nodes, per), jobs, cfg, sim.Options{RecordRuns: true})
		if err != nil {
			rt.Fatalf("run: %v", err)
		}
		type hold struct {
			from, to time.Duration
			job      string
		}
		byGPU := map[string][]hold{}
		for i, r := range res.Jobs {
			j := jobs[i]
			if r.Outcome == sim.Unfinished || r.Attempts != 1 || len(r.Runs) != 1 {
				rt.Fatalf("job %s: outcome %s, %d attempts, %d runs; want one finished attempt", r.ID, r.Outcome, r.Attempts, len(r.Runs))
			}
			a := r.Runs[0]
			if a.Start < j.Submit || a.End != r.Finish || a.Start != r.Start {
				rt.Fatalf("job %s: submit %s, run %+v, finish %s", r.ID, j.Submit, a, r.Finish)
			}
			want := j.Run
			if j.Limit < j.Run {
				want = j.Limit
				if r.Outcome != sim.Killed || a.Evicted-a.Start != j.Limit || r.Finish != a.Evicted+j.CheckpointGrace {
					rt.Fatalf("job %s should be killed at its limit: %+v %+v", r.ID, r, a)
				}
			} else if r.Outcome != sim.Completed || r.Finish-r.Start != j.Run {
				rt.Fatalf("job %s should complete: %+v", r.ID, r)
			}
			if r.Run != want {
				rt.Fatalf("job %s: run %s, want %s", r.ID, r.Run, want)
			}
			if got := a.Allocation.Count(); got != j.Members*j.GPUsPerMember {
				rt.Fatalf("job %s holds %d GPUs, want %d", r.ID, got, j.Members*j.GPUsPerMember)
			}
			for _, ng := range a.Allocation {
				for _, g := range ng.GPUs {
					k := fmt.Sprintf("%s/%d", ng.Node, g)
					byGPU[k] = append(byGPU[k], hold{a.Start, a.End, r.ID})
				}
			}
		}
		for k, hs := range byGPU {
			slices.SortFunc(hs, func(a, b hold) int { return cmp.Compare(a.from, b.from) })
			for i := 1; i < len(hs); i++ {
				if hs[i].from < hs[i-1].to {
					rt.Fatalf("GPU %s held by %s [%s,%s) and %s [%s,%s)", k, hs[i-1].job, hs[i-1].from, hs[i-1].to, hs[i].job, hs[i].from, hs[i].to)
				}
			}
		}
		if mode == scheduler.NoBackfill {
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			slices.SortFunc(idx, func(a, b int) int {
				return cmp.Or(cmp.Compare(jobs[a].Submit, jobs[b].Submit), cmp.Compare(jobs[a].ID, jobs[b].ID))
			})
			for k := 1; k < n; k++ {
				p, q := res.Jobs[idx[k-1]], res.Jobs[idx[k]]
				if q.Start < p.Start {
					rt.Fatalf("without backfill %s (submit %s) started at %s, before %s (submit %s) at %s", q.ID, jobs[idx[k]].Submit, q.Start, p.ID, jobs[idx[k-1]].Submit, p.Start)
				}
			}
		}
	})
}
