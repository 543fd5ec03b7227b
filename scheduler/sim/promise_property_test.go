package sim_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
)

// promiseWorld draws a small workload of one tier and a backfill policy;
// with atZero every job arrives at 0 and runs exactly its limit.
func promiseWorld(rt *rapid.T, atZero bool) (int, int, []sim.Job, scheduler.Config) {
	nodes := rapid.IntRange(1, 4).Draw(rt, "nodes")
	per := rapid.IntRange(1, 4).Draw(rt, "gpusPerNode")
	var jobs []sim.Job
	for i := range rapid.IntRange(1, 14).Draw(rt, "jobs") {
		gpm := rapid.IntRange(1, per).Draw(rt, "gpusPerMember")
		run := rapid.IntRange(1, 15).Draw(rt, "run")
		slack, submit := 0, 0
		if !atZero {
			slack, submit = rapid.IntRange(0, 5).Draw(rt, "slack"), rapid.IntRange(0, 20).Draw(rt, "submit")
		}
		jobs = append(jobs, sim.Job{
			ID:            fmt.Sprintf("j%02d", i),
			Submit:        time.Duration(submit) * s,
			Run:           time.Duration(run) * s,
			Limit:         time.Duration(run+slack) * s,
			Members:       rapid.IntRange(1, nodes*(per/gpm)).Draw(rt, "members"),
			GPUsPerMember: gpm,
			Tier:          scheduler.P3,
		})
	}
	cfg := scheduler.Config{
		Backfill:     rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative, scheduler.NoBackfill}).Draw(rt, "backfill"),
		Reservations: rapid.IntRange(0, 3).Draw(rt, "reservations"),
		Order:        scheduler.TierOrder{},
	}
	if atZero {
		cfg.Backfill = scheduler.Conservative
	}
	return nodes, per, jobs, cfg
}

// TestPropertyPromisesCounted: a job's promise is the start of the first
// reservation a decision gave it before it first started, as the
// decisions show it, and Summary.Promised and PromisesKept count the
// jobs promised and those that started no later than promised.
func TestPropertyPromisesCounted(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes, per, jobs, cfg := promiseWorld(rt, false)
		first := map[string]time.Duration{}
		started := map[string]bool{}
		opt := sim.Options{Observe: func(snap *scheduler.Snapshot, d *scheduler.Decision) {
			for _, j := range snap.Jobs {
				if j.State != scheduler.Pending {
					started[j.ID] = true
				}
			}
			for _, r := range d.Reservations {
				if _, ok := first[r.Job]; !ok && !started[r.Job] {
					first[r.Job] = r.Start.Sub(sim.DefaultStart())
				}
			}
		}}
		res, err := sim.Run(sim.Uniform(nodes, per), jobs, cfg, opt)
		if err != nil {
			rt.Fatalf("run: %v", err)
		}
		promised, kept := 0, 0
		for _, r := range res.Jobs {
			p, ok := first[r.ID]
			if r.Promised != ok || (ok && r.Promise != p) {
				rt.Fatalf("job %s: promised %v at %s, want %v at %s", r.ID, r.Promised, r.Promise, ok, p)
			}
			if ok {
				promised++
				if r.Attempts > 0 && r.Start <= p {
					kept++
				}
			}
		}
		if res.Summary.Promised != promised || res.Summary.PromisesKept != kept {
			rt.Fatalf("summary: %d promised, %d kept; want %d, %d", res.Summary.Promised, res.Summary.PromisesKept, promised, kept)
		}
	})
}

// TestPropertyConservativePromisesKept: under conservative backfill,
// with every job submitted at once and running exactly its limit, every
// promise is kept (forecasts come true exactly in such a world).
func TestPropertyConservativePromisesKept(t *testing.T) {
	total := 0
	rapid.Check(t, func(rt *rapid.T) {
		nodes, per, jobs, cfg := promiseWorld(rt, true)
		res, err := sim.Run(sim.Uniform(nodes, per), jobs, cfg, sim.Options{})
		if err != nil {
			rt.Fatalf("run: %v", err)
		}
		total += res.Summary.Promised
		if res.Summary.PromisesKept != res.Summary.Promised {
			for _, r := range res.Jobs {
				if r.Promised && r.Start > r.Promise {
					rt.Fatalf("job %s started at %s, promised %s", r.ID, r.Start, r.Promise)
				}
			}
			rt.Fatalf("%d of %d promises kept", res.Summary.PromisesKept, res.Summary.Promised)
		}
	})
	if total == 0 {
		t.Fatal("no promise was made in any run")
	}
}

// TestTeamEntitled: a team's entitled fraction is its share over the
// shares of the teams jobs name, 1 for a team not listed.
func TestTeamEntitled(t *testing.T) {
	jobs := []sim.Job{
		{ID: "a", Team: "a", Run: 10 * s, Members: 1, GPUsPerMember: 1},
		{ID: "b", Team: "b", Run: 10 * s, Members: 1, GPUsPerMember: 1},
		{ID: "c", Team: "c", Run: 10 * s, Members: 1, GPUsPerMember: 1},
	}
	res, err := sim.Run(sim.Uniform(3, 1), jobs, scheduler.Config{Order: scheduler.TierOrder{}},
		sim.Options{Teams: []scheduler.Team{{Name: "a", Share: 2}, {Name: "b", Share: 1}, {Name: "z", Share: 5}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.5, 0.25, 0.25}
	for k, ts := range res.Summary.Teams {
		if ts.Entitled != want[k] {
			t.Errorf("team %s: entitled %v, want %v", ts.Team, ts.Entitled, want[k])
		}
	}
}
