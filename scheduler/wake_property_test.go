package scheduler_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/scheduler"
)

// rendered is a decision as text with its instants taken out (each
// written "T"), and those instants in order, from fields and messages.
type rendered struct {
	text  string
	times []time.Time
}

var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

func render(d *scheduler.Decision) rendered {
	var r rendered
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		r.times = append(r.times, t)
		return "T"
	}
	msg := func(m string) string {
		return rfc3339.ReplaceAllStringFunc(m, func(s string) string {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return s
			}
			return at(t)
		})
	}
	var b strings.Builder
	for _, p := range d.Placements {
		fmt.Fprintf(&b, "place %s %v\n", p.Job, p.Allocation)
	}
	for _, e := range d.Evictions {
		fmt.Fprintf(&b, "evict %s %s by=%s grace=%v requeue=%v\n", e.Job, e.Reason, e.By, e.Grace, e.Requeue)
	}
	for _, x := range d.Reservations {
		fmt.Fprintf(&b, "reserve %s at %s %v\n", x.Job, at(x.Start), x.Allocation)
	}
	for _, w := range d.Pending {
		fmt.Fprintf(&b, "wait %s %s at %s: %s\n", w.Job, w.Reason, at(w.Start), msg(w.Message))
	}
	fmt.Fprintf(&b, "nextWake %s\n", at(d.NextWake))
	r.text = b.String()
	return r
}

// sameBut reports how a, decided at now, and b, the same snapshot
// decided at later, differ other than in time: the same text, and each
// instant either the same (it came with the snapshot) or as far from
// its now (it was counted from now). "" when they do not.
func sameBut(a *scheduler.Decision, now time.Time, b *scheduler.Decision, later time.Time) string {
	ra, rb := render(a), render(b)
	if ra.text != rb.text || len(ra.times) != len(rb.times) {
		return fmt.Sprintf("at now:\n%s\nlater:\n%s", ra.text, rb.text)
	}
	for k, t := range ra.times {
		u := rb.times[k]
		if !u.Equal(t) && u.Sub(later) != t.Sub(now) {
			return fmt.Sprintf("instant %d: %v at now, %v later\n%s", k, t, u, ra.text)
		}
	}
	return ""
}

// explains reports why something the contract of Decision.NextWake
// names may fall due at at, for s and its decision d under cfg: an
// instant that came with the snapshot (a time limit, the release after
// it, the last instant a job is worth preempting, a grace end, a
// minimum runtime passed, a reservation's start or end at one of those)
// is reached by now, or by now plus an instant counted from now (a run
// from now, a reservation counted from now, a victim's grace, a
// preemptor's run and window, the planning horizon). "" when none.
func explains(s *scheduler.Snapshot, cfg scheduler.Config, d *scheduler.Decision, at time.Time) string {
	abs := map[time.Time]string{}
	note := func(t time.Time, why string) {
		if t.After(s.Now) {
			abs[t.UTC()] = why
		}
	}
	jobs := map[string]scheduler.Job{}
	var graces []time.Duration
	for _, j := range s.Jobs {
		jobs[j.ID] = j
		switch j.State {
		case scheduler.Running:
			graces = append(graces, j.CheckpointGrace)
			if j.TimeLimit > 0 && !j.Started.IsZero() && j.Started.Add(j.TimeLimit).After(s.Now) {
				// (Past its limit, it is evicted now and gone a grace
				// from now: a relative instant, among the graces.)
				end := j.Started.Add(j.TimeLimit)
				note(end, "the time limit of "+j.ID)
				note(end.Add(-j.CheckpointGrace), j.ID+" no longer worth preempting")
				note(end.Add(j.CheckpointGrace), "the release of "+j.ID+" after its limit")
			}
			if cfg.MinRuntime > 0 && !j.Started.IsZero() {
				note(j.Started.Add(cfg.MinRuntime), "the minimum runtime of "+j.ID)
			}
		case scheduler.Evicting:
			if !j.EvictedAt.IsZero() {
				note(j.EvictedAt.Add(j.CheckpointGrace), "the grace end of "+j.ID)
			}
		}
	}
	hold := func(j scheduler.Job) time.Duration {
		if j.TimeLimit <= 0 {
			return 0
		}
		if cfg.IgnoreTimeLimits {
			return j.TimeLimit
		}
		return j.TimeLimit + j.CheckpointGrace
	}
	rel := map[time.Duration]string{0: "now", cfg.Horizon: "the horizon"}
	for _, j := range s.Jobs {
		if j.State == scheduler.Pending {
			rel[hold(j)] = "the run of " + j.ID
			for _, g := range graces {
				rel[hold(j)+g] = "the window of " + j.ID
				rel[g] = "a grace"
			}
		}
	}
	// In order of start: a reservation that starts when an absolute one
	// ends is absolute too.
	res := slices.Clone(d.Reservations)
	slices.SortStableFunc(res, func(a, b scheduler.Reservation) int { return a.Start.Compare(b.Start) })
	preemptors := map[string]bool{}
	for _, e := range d.Evictions {
		preemptors[e.By] = e.Reason == scheduler.EvictPreempted
	}
	for _, r := range res {
		// A preemptor's start is now + its victims' grace, whatever
		// instant it happens to meet. One that meets both an absolute
		// and a relative instant (a job placed now ends when another
		// job's limit comes) may be either: both are taken.
		if _, ok := abs[r.Start.UTC()]; ok && !preemptors[r.Job] {
			if h := hold(jobs[r.Job]); h > 0 {
				note(r.Start.Add(h), "the end of the reservation of "+r.Job)
			}
			if _, both := rel[r.Start.Sub(s.Now)]; !both {
				continue
			}
		}
		rel[r.Start.Sub(s.Now)] = "the start of the reservation of " + r.Job
		if h := hold(jobs[r.Job]); h > 0 {
			rel[r.Start.Sub(s.Now)+h] = "the end of the reservation of " + r.Job
		}
	}
	// A pending job's run from an absolute instant ends by a relative
	// reservation's start once now passes that instant plus the run less
	// it. (Taken for every reservation: one whose start meets an
	// absolute instant above by chance is relative to the Step.)
	for _, r := range res {
		for _, j := range s.Jobs {
			if h := hold(j); j.State == scheduler.Pending && h > 0 && r.Start.Sub(s.Now) > h {
				if _, ok := rel[r.Start.Sub(s.Now)-h]; !ok {
					rel[r.Start.Sub(s.Now)-h] = "the start of the reservation of " + r.Job + " less the run of " + j.ID
				}
			}
		}
	}
	// A preemptor's window is its run plus the grace of victims it may
	// take, counted from wherever it would start: sums of a relative
	// instant and a grace are relative instants too.
	var all []time.Duration
	for _, j := range s.Jobs {
		all = append(all, j.CheckpointGrace)
	}
	for r, why := range maps.Clone(rel) {
		for _, g := range all {
			if _, ok := rel[r+g]; !ok {
				rel[r+g] = why + " and a grace"
			}
		}
	}
	for r, rwhy := range rel {
		if why, ok := abs[at.Add(r).UTC()]; ok {
			return why + " reached by " + rwhy
		}
		// A tie at now, broken at the next instant.
		if why, ok := abs[s.Now.Add(r).UTC()]; ok && r > 0 && at.Equal(s.Now.Add(1)) {
			return why + " tied with " + rwhy
		}
	}
	return ""
}

// TestPropertyNextWake checks the contract of Decision.NextWake on
// preemption-heavy worlds (with evicting jobs, time limits, minimum
// runtimes and budgets): the same snapshot advanced to any instant
// strictly before NextWake gets the same decision, but for the instants
// that are now (which move with it), and the same NextWake; with no
// NextWake, any later instant does; and NextWake is an instant at which
// something the contract names falls due. The queue is in tier order:
// the drift of priorities with age does not count.
func TestPropertyNextWake(t *testing.T) {
	woke := 0
	rapid.Check(t, func(t *rapid.T) {
		// Several worlds per check: the instants that matter are rare.
		for range 20 {
			s, cfg := budgetWorld(t)
			cfg.Order = scheduler.TierOrder{}
			d, err := scheduler.New(cfg).Step(s)
			if err != nil {
				t.Fatal(err)
			}
			var later time.Time
			if d.NextWake.IsZero() {
				later = s.Now.Add(time.Duration(rapid.Int64Range(1, int64(48*time.Hour)).Draw(t, "after")))
			} else {
				woke++
				if !d.NextWake.After(s.Now) {
					t.Fatalf("nextWake %v not after now %v", d.NextWake, s.Now)
				}
				if explains(s, cfg, d, d.NextWake) == "" {
					t.Fatalf("nothing due at nextWake %v (config %+v)\n%s", d.NextWake, cfg, dumpState(s, d))
				}
				span := d.NextWake.Sub(s.Now)
				if span == 1 {
					continue // no instant lies between
				}
				later = s.Now.Add(time.Duration(rapid.Int64Range(1, int64(span)-1).Draw(t, "before")))
			}
			s2 := *s
			s2.Now = later
			d2, err := scheduler.New(cfg).Step(&s2)
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameBut(d, s.Now, d2, later); diff != "" {
				t.Fatalf("at %v, before nextWake %v, the decision changed: %s\n%s", later, d.NextWake, diff, dumpState(s, d))
			}
		}
	})
	if woke == 0 {
		t.Fatal("no decision had a nextWake")
	}
}
