package scheduler_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/scheduler"
)

// TestPreemptionOverSteps drives Step through several host steps and
// checks the preemption rules of DESIGN invariant 4 on every decision:
// victims are of a tier the preemptor may preempt (never tier 0), the
// preemptor gets a reservation instead of a placement, and a preemptor
// whose victims are gone starts within a few steps unless a job ahead of
// it took or reserved the freed GPUs. Repeated victim-preemptor pairs are
// counted and must stay rare (see the end of the test).
func TestPreemptionOverSteps(t *testing.T) {
	m := preempt.Ordered(scheduler.DefaultTiers)
	preemptions, again := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		// Several worlds per check, so the rate of repeated pairs below is
		// measured over enough preemptions to be stable.
		for range 5 {
			s := gen.Snapshot(t)
			h := host.New(s.Cluster, s.Jobs...)
			h.Teams = s.Teams
			cfg := scheduler.Config{Order: scheduler.TierOrder{}}
			seen := map[[2]string]bool{}     // victim, preemptor
			ahead := map[string]bool{}       // preemptors overtaken since they preempted
			waiting := map[string][]string{} // preemptor -> victims
			late := map[string]int{}         // preemptor -> steps since its victims are gone
			for step := range 8 {
				d, err := scheduler.New(cfg).Step(s)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				jobs := map[string]scheduler.Job{}
				for _, j := range s.Jobs {
					jobs[j.ID] = j
				}
				placed := map[string]bool{}
				for _, p := range d.Placements {
					placed[p.Job] = true
				}
				reserved := map[string]bool{}
				for _, r := range d.Reservations {
					reserved[r.Job] = true
				}
				for _, e := range d.Evictions {
					if e.Reason != scheduler.EvictPreempted {
						continue
					}
					preemptions++
					v, p := jobs[e.Job], jobs[e.By]
					if p.State != scheduler.Pending {
						t.Fatalf("step %d: %s preempted by %q, which is not pending", step, e.Job, e.By)
					}
					if v.Tier == 0 || !m.CanPreempt(p.Tier, v.Tier) {
						t.Fatalf("step %d: tier %d job %s preempted by tier %d job %s", step, v.Tier, v.ID, p.Tier, p.ID)
					}
					if placed[p.ID] || !reserved[p.ID] {
						t.Fatalf("step %d: preemptor %s placed=%v reserved=%v; want a reservation only", step, p.ID, placed[p.ID], reserved[p.ID])
					}
					k := [2]string{v.ID, p.ID}
					if seen[k] && !ahead[p.ID] {
						again++
					}
					seen[k] = true
					ahead[p.ID] = false
					waiting[p.ID] = append(waiting[p.ID], v.ID)
				}
				// Step keeps no state: a job ahead of a waiting preemptor in
				// priority order may take the GPUs its victims free, and the
				// preemptor may then have to preempt again.
				for pid := range waiting {
					for _, pl := range d.Placements {
						if before(jobs[pl.Job], jobs[pid]) {
							ahead[pid] = true
						}
					}
					for _, r := range d.Reservations {
						if before(jobs[r.Job], jobs[pid]) {
							ahead[pid] = true
						}
					}
				}
				for p, victims := range waiting {
					if placed[p] {
						// It started: a later preemption by it is a new episode.
						delete(waiting, p)
						for k := range seen {
							if k[1] == p {
								delete(seen, k)
							}
						}
						continue
					}
					gone := true
					for _, v := range victims {
						if j, ok := jobs[v]; ok && j.State != scheduler.Pending {
							gone = false
						}
					}
					if !gone || preemptedAgain(d, p) || jobs[p].State != scheduler.Pending || ahead[p] {
						continue
					}
					// Other GPUs it needs may still be on their way (a job evicted
					// at its time limit in the same Step): it must hold a
					// reservation meanwhile and start within a few steps.
					if !reserved[p] {
						t.Fatalf("step %d: the victims %v of %s are gone; it neither starts nor holds a reservation: %s", step, victims, p, why(d, p))
					}
					if late[p]++; late[p] > 3 {
						dump := dumpState(s, d)
						t.Fatalf("step %d at %s: the victims %v of %s are gone but it has not started for %d steps: %s%s", step, s.Now.Format(time.RFC3339), victims, p, late[p], why(d, p), dump)
					}
				}
				h.Apply(s.Now, d)
				now := h.Next(s.Now, d, time.Hour)
				h.Advance(now)
				s = h.Snapshot(now)
			}
		}
	})
	if preemptions == 0 {
		t.Fatal("no snapshot produced a preemption: the property checked nothing")
	}
	// Step keeps no state between calls, so it cannot promise never to
	// pick the same victim twice: a requeued victim may backfill into
	// GPUs its preemptor no longer needs and be chosen again once the
	// preemptor's plan changes. Measured at 0–3.5% of preemptions over
	// 24 seeds (about 180 preemptions each); fail above 5%.
	if again*20 > preemptions {
		t.Fatalf("%d of %d preemptions repeated a victim-preemptor pair", again, preemptions)
	}
	t.Logf("%d preemptions checked, %d repeated a victim-preemptor pair", preemptions, again)
}

// before reports whether a comes before b in TierOrder.
func before(a, b scheduler.Job) bool {
	if a.Tier != b.Tier {
		return a.Tier < b.Tier
	}
	if !a.Submitted.Equal(b.Submitted) {
		return a.Submitted.Before(b.Submitted)
	}
	return a.ID < b.ID
}

// preemptedAgain reports whether p made new victims in d (it then waits
// for those as well).
func preemptedAgain(d *scheduler.Decision, p string) bool {
	return slices.ContainsFunc(d.Evictions, func(e scheduler.Eviction) bool { return e.By == p })
}

func why(d *scheduler.Decision, job string) string {
	for _, w := range d.Pending {
		if w.Job == job {
			return fmt.Sprintf("%s: %s", w.Reason, w.Message)
		}
	}
	for _, r := range d.Reservations {
		if r.Job == job {
			return "reserved at " + r.Start.Format(time.RFC3339)
		}
	}
	return "not in the decision"
}

func dumpState(s *scheduler.Snapshot, d *scheduler.Decision) string {
	dump := "\nat " + s.Now.Format(time.RFC3339)
	for _, j := range s.Jobs {
		dump += fmt.Sprintf("\n  %s %s tier=%d %dx%d type=%q limit=%s grace=%s started=%s evicted=%s alloc=%s", j.ID, j.State, j.Tier, j.Members, j.GPUsPerMember, j.GPUType, j.TimeLimit, j.CheckpointGrace, j.Started.Format(time.RFC3339), j.EvictedAt.Format(time.RFC3339), j.Allocation)
	}
	for _, p := range d.Placements {
		dump += fmt.Sprintf("\n  placed %s on %s", p.Job, p.Allocation)
	}
	for _, e := range d.Evictions {
		dump += fmt.Sprintf("\n  evicted %s %s by %s", e.Job, e.Reason, e.By)
	}
	for _, r := range d.Reservations {
		dump += fmt.Sprintf("\n  reserved %s at %s on %s", r.Job, r.Start.Format(time.RFC3339), r.Allocation)
	}
	for _, w := range d.Pending {
		dump += fmt.Sprintf("\n  pending %s %s: %s", w.Job, w.Reason, w.Message)
	}
	for _, n := range s.Cluster.Nodes {
		dump += fmt.Sprintf("\n  node %s %d %s %s unhealthy=%v", n.Name, n.GPUs, n.GPUType, n.State, n.Unhealthy)
	}
	return dump
}
