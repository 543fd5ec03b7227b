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

// TestPropertyReservationsHonoured replays random workloads of one tier
// (no preemption), first come first served (priorities do not change with
// time), with no node events and time limits that no job overruns, some
// with slack and checkpoint graces, some exact. The reservation of the
// first blocked job in that order is a promise the run keeps: the job
// starts no later than the reserved time, which does not lie in the past.
// Only the first: Step plans anew each time, and may put the first job's
// reservation on other GPUs than before, which can push a later job's
// reservation back even when every job runs exactly its limit.
func TestPropertyReservationsHonoured(t *testing.T) {
	checked := 0 // promises checked, over all runs
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 4).Draw(rt, "nodes")
		per := rapid.IntRange(1, 4).Draw(rt, "gpusPerNode")
		exact := rapid.Bool().Draw(rt, "exact")
		var jobs []sim.Job
		for i := range rapid.IntRange(1, 14).Draw(rt, "jobs") {
			gpm := rapid.IntRange(1, per).Draw(rt, "gpusPerMember")
			run := rapid.IntRange(1, 15).Draw(rt, "run")
			slack, grace := 0, 0
			if !exact {
				slack, grace = rapid.IntRange(0, 5).Draw(rt, "slack"), rapid.IntRange(0, 2).Draw(rt, "grace")
			}
			jobs = append(jobs, sim.Job{
				ID:              fmt.Sprintf("j%02d", i),
				Submit:          time.Duration(rapid.IntRange(0, 20).Draw(rt, "submit")) * s,
				Run:             time.Duration(run) * s,
				Limit:           time.Duration(run+slack) * s,
				Members:         rapid.IntRange(1, nodes*(per/gpm)).Draw(rt, "members"),
				GPUsPerMember:   gpm,
				Tier:            scheduler.P3,
				Kind:            rapid.SampledFrom([]scheduler.Kind{scheduler.Training, scheduler.Inference}).Draw(rt, "kind"),
				CheckpointGrace: time.Duration(grace) * s,
			})
		}
		cfg := scheduler.Config{
			Backfill:      rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative, scheduler.NoBackfill}).Draw(rt, "backfill"),
			BackfillOrder: rapid.SampledFrom([]scheduler.BackfillOrder{scheduler.ByPriority, scheduler.ShortestFirst}).Draw(rt, "order"),
			Reservations:  rapid.IntRange(0, 3).Draw(rt, "reservations"),
			Order:         scheduler.TierOrder{},
		}
		type promise struct {
			at, start time.Duration
		}
		promised := map[string][]promise{}
		opt := sim.Options{Observe: func(snap *scheduler.Snapshot, d *scheduler.Decision) {
			if len(d.Reservations) == 0 {
				return
			}
			submitted := map[string]time.Time{}
			for _, j := range snap.Jobs {
				submitted[j.ID] = j.Submitted
			}
			first := slices.MinFunc(d.Reservations, func(a, b scheduler.Reservation) int {
				return cmp.Or(submitted[a.Job].Compare(submitted[b.Job]), cmp.Compare(a.Job, b.Job))
			})
			promised[first.Job] = append(promised[first.Job], promise{snap.Now.Sub(sim.DefaultStart()), first.Start.Sub(sim.DefaultStart())})
		}}
		res, err := sim.Run(sim.Uniform(nodes, per), jobs, cfg, opt)
		if err != nil {
			rt.Fatalf("run: %v", err)
		}
		for _, r := range res.Jobs {
			if r.Outcome != sim.Completed || r.Attempts != 1 {
				rt.Fatalf("job %s: %s after %d attempts", r.ID, r.Outcome, r.Attempts)
			}
			for _, p := range promised[r.ID] {
				if p.start < p.at || r.Start > p.start {
					rt.Fatalf("job %s was promised at %s a start at %s, and started at %s", r.ID, p.at, p.start, r.Start)
				}
				checked++
			}
		}
	})
	if checked == 0 {
		t.Fatal("no run made a reservation: the property checked nothing")
	}
}
