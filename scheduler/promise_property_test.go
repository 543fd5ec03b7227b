package scheduler_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// ignorePlan plants the bug invariant 9 guards against: the host drops
// the plan, and Step plans from scratch every time.
var ignorePlan = false

// TestInvariantPromises is DESIGN invariant 9 over random worlds: a host
// loop in which nothing happens but jobs ending (and, in the second
// world, ending early), with each decision's reservations carried into
// the next snapshot as plan. No promised start ever moves later, under
// conservative backfill and under EASY (whose protected jobs keep their
// promise until they start).
func TestInvariantPromises(t *testing.T) {
	for _, mode := range []scheduler.BackfillMode{scheduler.Conservative, scheduler.EASY} {
		for _, early := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/early=%v", mode, early), func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) { promisesHold(t, mode, early, false, false) })
			})
		}
	}
}

// TestKeptPromiseShortcutsChangeNothing: over the host loops of
// TestInvariantPromises, a Step that proves a kept promise cannot move
// without taking it out (and the other shortcuts) decides exactly as one
// that takes out every promise the count does not pin.
func TestKeptPromiseShortcutsChangeNothing(t *testing.T) {
	for _, mode := range []scheduler.BackfillMode{scheduler.Conservative, scheduler.EASY} {
		t.Run(mode.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { promisesHold(t, mode, true, rapid.Bool().Draw(t, "res"), true) })
		})
	}
}

// promisesHold runs one world of TestInvariantPromises; with res, nodes
// limit CPU and jobs ask for some; with ref, each decision must equal
// the reference Step's (scheduler.NewWithoutMemo).
func promisesHold(t *rapid.T, mode scheduler.BackfillMode, early, res, ref bool) {
	var c topology.Cluster
	g := rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")
	for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: g})
		if res {
			c.Nodes[i].CPUMillis = rapid.SampledFrom([]int{8000, 16000}).Draw(t, "cpuCap")
		}
	}
	now := gen.Now
	var jobs []scheduler.Job
	actual := map[string]time.Duration{}
	for i := range rapid.IntRange(2, 14).Draw(t, "jobs") {
		id := fmt.Sprintf("j%02d", i)
		limit := time.Duration(rapid.IntRange(1, 24).Draw(t, "limit")) * 10 * time.Minute
		jobs = append(jobs, scheduler.Job{ID: id, Team: "t", Tier: scheduler.P1, Members: rapid.IntRange(1, len(c.Nodes)).Draw(t, "members"),
			GPUsPerMember: rapid.IntRange(1, g).Draw(t, "gpm"), TimeLimit: limit, Submitted: now.Add(time.Duration(i) * time.Second)})
		if res {
			jobs[len(jobs)-1].CPUMillis = rapid.SampledFrom([]int{0, 1000, 4000, 8000}).Draw(t, "cpu")
		}
		actual[id] = limit
		if early {
			actual[id] = time.Duration(rapid.IntRange(1, int(limit/time.Minute)).Draw(t, "run")) * time.Minute
		}
	}
	order := rapid.SampledFrom([]scheduler.Orderer{nil, scheduler.TierOrder{}}).Draw(t, "order")
	cfg := scheduler.Config{Backfill: mode, Order: order}
	s := scheduler.New(cfg)
	h := host.New(c, jobs...)
	h.Actual = actual
	promised := promiseBook{}
	for range 200 {
		snap := h.Snapshot(now)
		if ignorePlan {
			snap.Plan = nil
		}
		d, err := s.Step(snap)
		if err != nil {
			t.Fatalf("at %v: %v", now, err)
		}
		promised.check(t, now, d, nil)
		if ref {
			want, err := scheduler.NewWithoutMemo(cfg).Step(snap)
			if err != nil {
				t.Fatalf("at %v, reference: %v", now, err)
			}
			if !reflect.DeepEqual(d, want) {
				t.Fatalf("at %v the shortcuts changed the decision:\nwith      %s\nreference %s\n%s", now, show(d), show(want), dump(snap, d))
			}
		}
		h.Apply(now, d)
		next := h.Next(now, d, 48*time.Hour)
		if !next.After(now) && len(h.Jobs) == 0 {
			return
		}
		now = next
		h.Advance(now)
		if len(h.Jobs) == 0 {
			return
		}
	}
}

// TestInvariantsWithPlan: invariants 1, 2, 3 and 5 hold for a Step whose
// snapshot carries a plan: the reservations of a Step on the same
// snapshot, or on the snapshot with every pending job's plan entry moved
// an hour later (a plan the Step may improve on).
func TestInvariantsWithPlan(t *testing.T) {
	forModes(t, func(t *rapid.T, cfg scheduler.Config) {
		s := gen.Snapshot(t)
		d := step(t, cfg, s)
		planned := *s
		planned.Plan = d.Reservations
		if rapid.Bool().Draw(t, "later") {
			planned.Plan = nil
			for _, r := range d.Reservations {
				r.Start = r.Start.Add(time.Hour)
				planned.Plan = append(planned.Plan, r)
			}
		}
		d2 := step(t, cfg, &planned)
		w := newWorld(&planned, d2, cfg)
		if err := checkAll(w, checkNoDoubleAllocation, checkGangs, checkNoJobLost, checkReservationsHold); err != nil {
			t.Fatalf("%v\n%s", err, dump(&planned, d2))
		}
	})
}
