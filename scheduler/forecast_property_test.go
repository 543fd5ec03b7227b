package scheduler_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestForecastAgreesWithDecision: over random snapshots and every
// backfill mode, a forecast leaves the decision and the snapshot as they
// were; it has one estimate per pending job, by ID; a job placed now is
// forecast now and a reserved job exactly its reservation's start; every
// other start is at or after now, or absent with a reason; and the
// forecast's own reservations, added to the decision's, still hold
// (invariant 5's check): no forecast is earlier than the decision's
// reservations allow, nor takes their GPUs; and they keep the jobs'
// shapes (invariant 2) and eligible nodes. And the forecast does not
// depend on the order of the snapshot's nodes, teams and jobs.
func TestForecastAgreesWithDecision(t *testing.T) {
	forModes(t, func(t *rapid.T, cfg scheduler.Config) {
		s := gen.Snapshot(t)
		if rapid.Bool().Draw(t, "eligible") {
			s = withEligible(t, s)
		}
		var before bytes.Buffer
		require.NoError(t, scheduler.EncodeSnapshot(&before, s))
		sch := scheduler.New(cfg)
		d := step(t, cfg, s)
		f, planned, err := scheduler.ForecastPlan(sch, s)
		if err != nil {
			t.Fatalf("Forecast: %v", err)
		}
		var after bytes.Buffer
		require.NoError(t, scheduler.EncodeSnapshot(&after, s))
		require.Equal(t, before.String(), after.String(), "Forecast modified the snapshot")
		require.Equal(t, d, step(t, cfg, s), "the decision changed after a forecast")
		if err := checkForecast(s, d, f); err != nil {
			t.Fatalf("%v\n%s", err, dump(s, d))
		}
		shuffled, err := sch.Forecast(gen.Shuffle(t, s))
		require.NoError(t, err)
		require.Equal(t, f, shuffled, "the forecast depends on the order of nodes, teams or jobs")
		both := *d
		both.Reservations = append(slices.Clone(d.Reservations), planned...)
		if err := checkAll(newWorld(s, &both, cfg), checkReservationsHold, checkGangs); err != nil {
			t.Fatalf("with the forecast's reservations: %v\n%s", err, dump(s, &both))
		}
		if err := checkEligible(s, &both); err != nil {
			t.Fatalf("with the forecast's reservations: %v\n%s", err, dump(s, &both))
		}
	})
}

// checkForecast checks f against the decision d of snapshot s (see
// TestForecastAgreesWithDecision).
func checkForecast(s *scheduler.Snapshot, d *scheduler.Decision, f scheduler.Forecast) error {
	var pending []string
	for _, j := range s.Jobs {
		if j.State == scheduler.Pending {
			pending = append(pending, j.ID)
		}
	}
	slices.Sort(pending)
	var got []string
	for _, e := range f.Jobs {
		got = append(got, e.Job)
	}
	if !slices.Equal(pending, got) {
		return fmt.Errorf("forecast for %v, pending %v", got, pending)
	}
	at := map[string]time.Time{}
	for _, p := range d.Placements {
		at[p.Job] = s.Now
	}
	for _, r := range d.Reservations {
		at[r.Job] = r.Start
	}
	for _, e := range f.Jobs {
		if want, ok := at[e.Job]; ok && !e.Start.Equal(want) {
			return fmt.Errorf("%s forecast %v, decided %v", e.Job, e.Start, want)
		}
		if e.Start.IsZero() && (e.Reason == "" || !strings.Contains(e.Reason, ": ")) {
			return fmt.Errorf("%s has no start and no reason: %q", e.Job, e.Reason)
		}
		if !e.Start.IsZero() && (e.Start.Before(s.Now) || e.Reason != "") {
			return fmt.Errorf("%s forecast %v (now %v), reason %q", e.Job, e.Start, s.Now, e.Reason)
		}
	}
	return nil
}

// TestForecastNeverLate: in a world where every job runs exactly its
// time limit and nothing arrives, a host that Steps with the plan (on
// every event and at NextWake) starts no job later than the forecast of
// the first Step, under conservative backfill; under EASY, no job the
// first decision placed or reserved (invariant 9 for the reserved).
// Under conservative backfill every job starts exactly at its forecast
// when the first Step moved no reservation by a repin: a kept promise
// moves only to an earlier start, and to other GPUs at the same start
// only when re-pinned, which the first Step has done where it could
// (TestForecastConservativeExact). A repin that moves a reservation made
// in an earlier turn may free GPUs on which a job reserved in between
// starts sooner, at the next Step. Under EASY a job the first decision
// did not reserve has no promise, and a job backfilled later can delay
// it past its forecast (TestForecastEASYLate).
func TestForecastNeverLate(t *testing.T) {
	for _, mode := range []scheduler.BackfillMode{scheduler.Conservative, scheduler.EASY} {
		t.Run(mode.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				c, jobs := exactWorld(t)
				order := rapid.SampledFrom([]scheduler.Orderer{nil, scheduler.TierOrder{}}).Draw(t, "order")
				cfg := scheduler.Config{Backfill: mode, Order: order, DisablePreemption: true}
				// A repin in the first Step may move a reservation made in
				// an earlier turn to other GPUs, which frees GPUs that a job
				// reserved in between could start on sooner; the next
				// Step's compression starts it earlier than forecast.
				moves, err := scheduler.RepinMoves(cfg, host.New(c, slices.Clone(jobs)...).Snapshot(gen.Now))
				if err != nil {
					t.Fatalf("RepinMoves: %v", err)
				}
				first, started, promised := replayExact(t, cfg, c, jobs)
				for id, at := range started {
					if (mode == scheduler.Conservative || promised[id]) && !first[id].IsZero() && at.After(first[id]) {
						t.Fatalf("%s started at +%v, forecast +%v", id, at.Sub(gen.Now), first[id].Sub(gen.Now))
					}
					if mode == scheduler.Conservative && moves == 0 && !at.Equal(first[id]) {
						t.Fatalf("%s started at +%v, forecast +%v: not exact", id, at.Sub(gen.Now), first[id].Sub(gen.Now))
					}
				}
			})
		})
	}
}

// exactWorld draws a cluster of 1 to 4 nodes and 2 to 14 jobs of two
// teams and two tiers, all known at gen.Now, with no checkpoint grace.
func exactWorld(t *rapid.T) (topology.Cluster, []scheduler.Job) {
	var c topology.Cluster
	g := rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")
	for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: g})
	}
	var jobs []scheduler.Job
	for i := range rapid.IntRange(2, 14).Draw(t, "jobs") {
		limit := time.Duration(rapid.IntRange(1, 24).Draw(t, "limit")) * 10 * time.Minute
		jobs = append(jobs, scheduler.Job{ID: fmt.Sprintf("j%02d", i), Team: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "team"),
			Tier: scheduler.TierN(rapid.IntRange(1, 2).Draw(t, "tier")), Members: rapid.IntRange(1, len(c.Nodes)).Draw(t, "members"),
			GPUsPerMember: rapid.IntRange(1, g).Draw(t, "gpm"), TimeLimit: limit, Submitted: gen.Now.Add(time.Duration(i) * time.Second)})
	}
	return c, jobs
}

// replayExact runs jobs on c from gen.Now, each for exactly its time
// limit, with a host that Steps on every event and at NextWake, carrying
// the plan. It returns the forecast of the first snapshot, when each job
// started, and which jobs the first decision placed or reserved.
func replayExact(t interface{ Fatalf(string, ...any) }, cfg scheduler.Config, c topology.Cluster, jobs []scheduler.Job) (first, started map[string]time.Time, promised map[string]bool) {
	s := scheduler.New(cfg)
	h := host.New(c, jobs...)
	for _, j := range jobs {
		h.Actual[j.ID] = j.TimeLimit
	}
	now := gen.Now
	f, err := s.Forecast(h.Snapshot(now))
	if err != nil {
		t.Fatalf("Forecast: %v", err)
	}
	first, started, promised = map[string]time.Time{}, map[string]time.Time{}, map[string]bool{}
	for _, e := range f.Jobs {
		first[e.Job] = e.Start
	}
	for k := range 500 {
		d, err := s.Step(h.Snapshot(now))
		if err != nil {
			t.Fatalf("at %v: %v", now, err)
		}
		for _, p := range d.Placements {
			started[p.Job] = now
			promised[p.Job] = promised[p.Job] || k == 0
		}
		for _, r := range d.Reservations {
			promised[r.Job] = promised[r.Job] || k == 0
		}
		h.Apply(now, d)
		now = h.Next(now, d, 48*time.Hour)
		h.Advance(now)
		if len(h.Jobs) == 0 {
			break
		}
	}
	return first, started, promised
}

// exactJob is a job of one team and tier, submitted at gen.Now plus i
// seconds.
func exactJob(i, members, gpus int, limit time.Duration) scheduler.Job {
	return scheduler.Job{ID: fmt.Sprintf("j%02d", i), Team: "a", Tier: scheduler.P1, Members: members, GPUsPerMember: gpus,
		TimeLimit: limit, Submitted: gen.Now.Add(time.Duration(i) * time.Second)}
}

// TestForecastConservativeExact: j09 is forecast at +20m, on GPUs beside
// j07's reservation at +20m. At +10m Step keeps j07's promise on its
// promised GPUs (re-choosing them, as EASY does, gave up GPUs that then
// started j09 at +10m, before its forecast), and j09 starts at +20m.
func TestForecastConservativeExact(t *testing.T) {
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8}, {Name: "n1", GPUs: 8}}}
	m := 10 * time.Minute
	jobs := []scheduler.Job{exactJob(0, 1, 1, m), exactJob(1, 1, 1, m), exactJob(2, 1, 1, m), exactJob(3, 2, 2, m),
		exactJob(4, 1, 1, 2*m), exactJob(5, 1, 1, m), exactJob(6, 2, 5, m), exactJob(7, 2, 3, 2*m),
		exactJob(8, 1, 1, m), exactJob(9, 2, 2, 2*m)}
	first, started, _ := replayExact(t, scheduler.Config{Backfill: scheduler.Conservative}, c, jobs)
	require.Equal(t, gen.Now.Add(2*m), first["j09"])
	require.Equal(t, gen.Now.Add(2*m), started["j09"])
	for id, at := range started {
		require.Equal(t, first[id], at, "%s started off its forecast", id)
	}
}

// TestForecastEASYLate: under EASY a job without a reservation can start
// after its forecast even when every job runs exactly its limit. j08 is
// forecast at +20m on n1; at +10m it holds no reservation, and j09, which
// comes after it, backfills onto n1 until +30m.
func TestForecastEASYLate(t *testing.T) {
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 2}, {Name: "n1", GPUs: 2}}}
	m := 10 * time.Minute
	var jobs []scheduler.Job
	for i := range 7 {
		jobs = append(jobs, exactJob(i, 1, 1, m))
	}
	jobs = append(jobs, exactJob(7, 1, 2, m), exactJob(8, 1, 2, m), exactJob(9, 1, 1, 2*m))
	first, started, _ := replayExact(t, scheduler.Config{Backfill: scheduler.EASY}, c, jobs)
	require.Equal(t, gen.Now.Add(2*m), first["j08"])
	require.Equal(t, gen.Now.Add(3*m), started["j08"])
}
