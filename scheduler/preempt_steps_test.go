package scheduler_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestPreemptionOverSteps drives Step through several host steps and
// checks the preemption rules of DESIGN invariant 4 on every decision:
// victims are of a tier the preemptor may preempt (never tier 0), the
// preemptor gets a reservation instead of a placement, and a preemptor
// whose victims are gone starts within a few steps unless a job ahead of
// it took or reserved the freed GPUs, and a preemptor never evicts the
// same victim twice unless a job ahead of it took or reserved GPUs in
// between (its plan then changes: Step keeps no state). What makes the
// last hold is that GPUs an eviction frees are reserved for the first job
// that can use them, so a requeued victim cannot backfill into them.
func TestPreemptionOverSteps(t *testing.T) {
	preemptionOverSteps(t, func(t *rapid.T) (*scheduler.Snapshot, scheduler.Config) {
		return gen.Snapshot(t), scheduler.Config{Order: scheduler.TierOrder{}}
	})
}

// TestPreemptionOverStepsWide is TestPreemptionOverSteps on the worlds
// and policies of preemptWorld, with jobs tried in priority order and
// backfill on (the property's notion of a job in its way assumes it),
// time limits enforced (a job past an ignored limit turns an estimate
// wrong), and no ReservationPolicy (one that declines lets a requeued
// victim take back its GPUs, as documented).
func TestPreemptionOverStepsWide(t *testing.T) {
	preemptionOverSteps(t, func(t *rapid.T) (*scheduler.Snapshot, scheduler.Config) {
		s, cfg := preemptWorld(t)
		cfg.Order, cfg.Reserve, cfg.IgnoreTimeLimits = scheduler.TierOrder{}, nil, false
		cfg.BackfillOrder = scheduler.ByPriority
		if cfg.Backfill == scheduler.NoBackfill {
			cfg.Backfill = scheduler.EASY
		}
		return s, cfg
	})
}

// preemptionOverSteps checks the property of TestPreemptionOverSteps on
// the worlds and policies draw gives; the policy must order jobs by
// TierOrder.
func preemptionOverSteps(t *testing.T, draw func(t *rapid.T) (*scheduler.Snapshot, scheduler.Config)) {
	preemptions, checked := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		// Several worlds per check: more preemptions per run.
		for range 5 {
			s, cfg := draw(t)
			m := cfg.Preemption
			if m == nil {
				m = preempt.Ordered(scheduler.DefaultTiers)
			}
			h := host.New(s.Cluster, slices.Clone(s.Jobs)...)
			h.Teams = s.Teams
			seen := map[[2]string]bool{}        // victim, preemptor
			ahead := map[string]bool{}          // preemptors overtaken since they preempted
			waiting := map[string][]string{}    // preemptor -> victims
			late := map[string]int{}            // preemptor -> steps since its victims are gone
			claimed := map[string]gpus{}        // preemptor -> its victims' GPUs and those reserved for it
			window := map[string][2]time.Time{} // preemptor -> its latest reserved run
			quota := map[string]bool{}          // teams with a quota
			for _, tm := range s.Teams {
				quota[tm.Name] = tm.Quota != nil
			}
			var hist history
			for step := range 8 {
				d, err := scheduler.New(cfg).Step(s)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				hist = append(hist, stepRecord{s, d})
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
				// Step keeps no state: a job ahead of a waiting preemptor in
				// priority order may take or reserve, during its reserved run,
				// the GPUs its victims free or it was promised, or take its
				// team's quota, and the preemptor may then have to preempt
				// again.
				overtakes := func(job, pid string, a topology.Allocation, from time.Time) bool {
					j, p := jobs[job], jobs[pid]
					if !before(j, p) {
						return false
					}
					if j.Team == p.Team && quota[j.Team] {
						return true
					}
					w, known := window[pid]
					if known && s.Now.After(w[0]) {
						// Its reserved start has passed: it would run from now.
						w = [2]time.Time{s.Now, runEnd(s.Now, p)}
					}
					return claimed[pid].overlaps(a) && (!known || from.Before(w[1]) && runEnd(from, j).After(w[0]))
				}
				// A borrowing preemptor may also be refused by its quota
				// while it waits: the idle GPUs its borrowing is judged
				// against are those idle now, and a job backfilled into
				// its claim, which ends before its start, holds some of
				// them (see Usage.IdleGPUs). Another job may then take
				// the GPUs it was promised.
				for _, w := range d.Pending {
					if _, ok := waiting[w.Job]; ok && w.Reason == scheduler.ReasonQuota {
						ahead[w.Job] = true
					}
				}
				for pid := range waiting {
					for _, pl := range d.Placements {
						if overtakes(pl.Job, pid, pl.Allocation, s.Now) {
							ahead[pid] = true
						}
					}
					for _, r := range d.Reservations {
						if overtakes(r.Job, pid, r.Allocation, r.Start) {
							ahead[pid] = true
						}
					}
				}
				preemptors := map[string]bool{}
				for _, e := range d.Evictions {
					if e.Reason != scheduler.EvictPreempted {
						continue
					}
					preemptions++
					v, p := jobs[e.Job], jobs[e.By]
					if p.State != scheduler.Pending {
						t.Fatalf("step %d: %s preempted by %q, which is not pending", step, e.Job, e.By)
					}
					vt, pt := v.Tier.Level(m.Tiers()), p.Tier.Level(m.Tiers())
					if vt == 0 || !m.CanPreempt(pt, vt) {
						t.Fatalf("step %d: tier %d job %s preempted by tier %d job %s", step, vt, v.ID, pt, p.ID)
					}
					if placed[p.ID] || !reserved[p.ID] {
						t.Fatalf("step %d: preemptor %s placed=%v reserved=%v; want a reservation only", step, p.ID, placed[p.ID], reserved[p.ID])
					}
					k := [2]string{v.ID, p.ID}
					if seen[k] && !ahead[p.ID] {
						t.Fatalf("step %d: %s preempted %s again, though no job ahead of it took or reserved GPUs in between%s", step, p.ID, v.ID, hist)
					}
					seen[k] = true
					if !preemptors[p.ID] {
						preemptors[p.ID] = true
						claimed[p.ID] = gpus{}
					}
					claimed[p.ID].add(v.Allocation)
					waiting[p.ID] = append(waiting[p.ID], v.ID)
				}
				// A new episode starts once all of this Step's victims are
				// counted: jobs ahead are tracked from the next Step on.
				for p := range preemptors {
					ahead[p] = false
				}
				for _, r := range d.Reservations {
					if c, ok := claimed[r.Job]; ok {
						c.add(r.Allocation)
						window[r.Job] = [2]time.Time{r.Start, runEnd(r.Start, jobs[r.Job])}
					}
				}
				for p, victims := range waiting {
					// A victim is gone once it no longer holds what it was
					// evicted from: requeued, finished, or started again.
					gone := true
					for _, v := range victims {
						if j, ok := jobs[v]; ok && j.State == scheduler.Evicting {
							gone = false
						}
					}
					inWay := ahead[p] || preemptedAgain(d, p)
					if placed[p] {
						if gone && !inWay {
							checked++ // it started once its victims were gone
						}
						// A later preemption by it is a new episode.
						delete(waiting, p)
						for k := range seen {
							if k[1] == p {
								delete(seen, k)
							}
						}
						continue
					}
					if !gone || inWay || jobs[p].State != scheduler.Pending {
						continue
					}
					// Other GPUs it needs may still be on their way (a job evicted
					// at its time limit in the same Step): it must hold a
					// reservation meanwhile and start within a few steps.
					checked++
					if !reserved[p] {
						t.Fatalf("step %d: the victims %v of %s are gone; it neither starts nor holds a reservation: %s%s", step, victims, p, why(d, p), hist)
					}
					if late[p]++; late[p] > 3 {
						t.Fatalf("step %d at %s: the victims %v of %s are gone but it has not started for %d steps: %s%s", step, s.Now.Format(time.RFC3339), victims, p, late[p], why(d, p), hist)
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
	if checked == 0 {
		t.Fatal("no preemptor saw its victims gone with no job ahead in its way: the start-soon check checked nothing")
	}
	t.Logf("%d preemptions; %d times a preemptor's victims were gone with no job ahead in its way", preemptions, checked)
}

// runEnd is when j, started at from, lets its GPUs go: its time limit
// plus its checkpoint grace, or never.
func runEnd(from time.Time, j scheduler.Job) time.Time {
	if j.TimeLimit <= 0 {
		return time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return from.Add(j.TimeLimit + j.CheckpointGrace)
}

// gpus is a set of GPUs by node and index.
type gpus map[string]bool

func (g gpus) add(a topology.Allocation) {
	for _, na := range a {
		for _, i := range na.GPUs {
			g[fmt.Sprintf("%s/%d", na.Node, i)] = true
		}
	}
}

func (g gpus) overlaps(a topology.Allocation) bool {
	for _, na := range a {
		for _, i := range na.GPUs {
			if g[fmt.Sprintf("%s/%d", na.Node, i)] {
				return true
			}
		}
	}
	return false
}

// before reports whether a comes before b in TierOrder.
func before(a, b scheduler.Job) bool {
	if at, bt := a.Tier.Level(scheduler.DefaultTiers), b.Tier.Level(scheduler.DefaultTiers); at != bt {
		return at < bt
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

// history is the Steps of one world so far, printed when a check fails.
type history []stepRecord

type stepRecord struct {
	s *scheduler.Snapshot
	d *scheduler.Decision
}

func (h history) String() string {
	var b strings.Builder
	for i, st := range h {
		fmt.Fprintf(&b, "\n--- step %d%s", i, dumpState(st.s, st.d))
	}
	return b.String()
}

func dumpState(s *scheduler.Snapshot, d *scheduler.Decision) string {
	dump := "\nat " + s.Now.Format(time.RFC3339)
	for _, j := range s.Jobs {
		dump += fmt.Sprintf("\n  %s %s team=%s sub=%s tier=%d %dx%d type=%q limit=%s grace=%s started=%s evicted=%s alloc=%s", j.ID, j.State, j.Team, j.Submitted.Format("15:04"), j.Tier, j.Members, j.GPUsPerMember, j.GPUType, j.TimeLimit, j.CheckpointGrace, j.Started.Format(time.RFC3339), j.EvictedAt.Format(time.RFC3339), j.Allocation)
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
