package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/gpusched/gpusched/backfill"
)

// Decision.NextWake: the earliest instant after now at which the same
// snapshot, advanced to it with nothing else changed, could be decided
// otherwise.
//
// Some instants the Step compares with now alone: a running job's time
// limit (it is evicted, or has no known end, from then), the last
// instant at which a job is worth preempting (its limit less its
// grace), a minimum runtime passed (while a preemptor that may preempt
// the job is tried). The first of these is a candidate as it is.
//
// Others it compares with each other. Absolute ones come with the
// snapshot and stay where they are as the clock moves: the release of a
// running job's GPUs after its limit, an evicting job's grace end, and
// reservations that start at such a release. Relative ones
// are counted from now and move with it: now itself, the run of a job
// placed now or of one that waits behind reservations (which of them its
// run would delay), a reservation that starts or ends at one of those,
// each victim's grace and the windows of a preemptor, the planning
// horizon.
// Every comparison of two absolute or two relative instants comes out
// the same at any later now; one of a relative instant r with an
// absolute a can change only when now + r passes a. So the decision
// can change first at the least a - r over the pairs with a > r, and
// for each r only the first absolute instant after it needs to be
// looked at. With r = 0 that is the first absolute instant itself. A
// relative instant equal to an absolute one is a tie that the next
// instant (now + 1ns) breaks. A pending job's run h from an absolute
// instant a ends by a reservation that starts at relative r once now +
// r passes a + h: r - h is a relative instant too (wakeFits).
//
// Worked example: n2 frees at 00:02 (absolute); jobs placed now end at
// now + 11m, where a gang is reserved (relative). A waiting job of 10m
// cannot run from 00:02 at now = 00:00 (00:12 > 00:11), but from now =
// 00:01 on it can (00:12 <= 00:12): nextWake is 00:01, the first instant
// at which now + (11m - 10m) reaches 00:02.
//
// The queue's order drifts with age and decayed usage; that does not
// count. A preemptor's reservation (now + its victims' grace) is
// relative: stepped later, the same snapshot evicts the victims later.

// wake collects the instants from which nextWake is made.
type wake struct {
	now    time.Time
	direct time.Time       // the first instant compared with now alone
	abs    []time.Duration // absolute instants after now, as offsets
	rel    []time.Duration // relative instants after now, as offsets
	// mature holds, by the tier of a running job protected by
	// Config.MinRuntime, the earliest instant at which one becomes a
	// victim; tried, by tier, whether a job of that tier that may
	// preempt was tried.
	mature []time.Time
	tried  []bool
}

// at notes absolute instant t, when it lies after now.
func (w *wake) at(t time.Time) {
	if t.After(w.now) {
		w.abs = append(w.abs, t.Sub(w.now))
	}
}

// atNow notes instant t, compared with now alone, when it lies after
// now.
func (w *wake) atNow(t time.Time) {
	if t.After(w.now) && (w.direct.IsZero() || t.Before(w.direct)) {
		w.direct = t
	}
}

// from notes relative instant now+off.
func (w *wake) from(off time.Duration) {
	if off > 0 && off < backfill.Forever {
		w.rel = append(w.rel, off)
	}
}

// matured notes that a job of tier, protected by Config.MinRuntime,
// becomes a victim at t (zero: never).
func (w *wake) matured(tier int, t time.Time) {
	if tier < 0 || !t.After(w.now) {
		return
	}
	for len(w.mature) <= tier {
		w.mature = append(w.mature, time.Time{})
	}
	if w.mature[tier].IsZero() || t.Before(w.mature[tier]) {
		w.mature[tier] = t
	}
}

// preemptor notes that a job of tier that may preempt was tried.
func (w *wake) preemptor(tier int) {
	for len(w.tried) <= tier {
		w.tried = append(w.tried, false)
	}
	w.tried[tier] = true
}

// nextWake is Decision.NextWake for the decision d the Step made, from
// the instants noted during the Step and d's placements and
// reservations, both in job ID order. O((A + R) log A) for A absolute
// and R relative instants.
func (st *stepState) nextWake(d *Decision) time.Time {
	w := &st.wake
	// A job that matures counts when a preemptor tried may preempt it.
	for v, t := range w.mature {
		for p, tried := range w.tried {
			if tried && !t.IsZero() && st.matrix.CanPreempt(p, v) {
				w.atNow(t)
				break
			}
		}
	}
	slices.Sort(w.abs)
	w.abs = slices.Compact(w.abs)
	of := st.pendingOf(len(d.Reservations), func(i int) string { return d.Reservations[i].Job })
	absRes, relStarts := st.wakeReservations(d, of)
	st.wakeFits(d, of, relStarts)
	for _, j := range st.pendingOf(len(d.Placements), func(i int) string { return d.Placements[i].Job }) {
		if j != nil {
			w.from(st.hold(j))
		}
	}
	if st.cfg.Horizon > 0 {
		w.from(st.cfg.Horizon)
	}
	abs := w.abs
	if len(absRes) > 0 {
		abs = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(w.abs), absRes...))))
	}
	next := backfill.Forever
	first := func(r time.Duration) {
		k, found := slices.BinarySearch(abs, r)
		if found {
			// A tie, decided one way at now and the other way right
			// after: the next instant.
			next = min(next, 1)
			return
		}
		if k < len(abs) {
			next = min(next, abs[k]-r)
		}
	}
	first(0)
	for _, r := range w.rel {
		first(r)
	}
	if !w.direct.IsZero() {
		next = min(next, w.direct.Sub(st.snap.Now))
	}
	if next == backfill.Forever || next > st.lastStart {
		return time.Time{} // nothing due, or nothing a decision can write
	}
	return st.at(next)
}

// maxFitPairs bounds the pairs of a relative reservation start and a
// pending job's run that wakeFits notes.
const maxFitPairs = 1 << 14

// wakeFits notes when a pending job that is not placed could come to fit
// in front of a reservation that starts at a relative instant r: a run
// of h from an absolute instant a (a release) ends by it once now + r
// passes a + h, which is relative instant r - h compared with a. So r - h
// is noted for each distinct run h of the jobs d leaves waiting or
// reserved and each r of relStarts, at most maxFitPairs of them (the
// shortest runs first; past that, such a fit is found at the next event
// or wake). of holds the pending job of each of d's reservations. O(J + R + H log H + P) for J pending
// jobs, R reservations, H distinct runs and P pairs.
func (st *stepState) wakeFits(d *Decision, of []*Job, relStarts []time.Duration) {
	if len(relStarts) == 0 {
		return
	}
	seen := map[time.Duration]bool{}
	var holds []time.Duration
	add := func(j *Job) {
		if h := st.hold(j); h > 0 && h < backfill.Forever && !seen[h] {
			seen[h] = true
			holds = append(holds, h)
		}
	}
	for slot, w := range st.waits { // d.Pending is made after nextWake
		if w.Job != "" {
			add(st.pending[slot])
		}
	}
	for _, j := range of {
		if j != nil {
			add(j)
		}
	}
	slices.Sort(holds)
	slices.Sort(relStarts)
	relStarts = slices.Compact(relStarts)
	pairs := 0
	for _, h := range holds {
		for _, r := range relStarts {
			if pairs == maxFitPairs {
				return
			}
			pairs++
			st.wake.from(r - h)
		}
	}
}

// wakeReservations notes the relative instants of d's reservations and
// returns the absolute ones that are not noted yet (see nextWake), and
// the relative starts (for wakeFits). of holds the pending job of each
// of d's reservations.
func (st *stepState) wakeReservations(d *Decision, of []*Job) (absRes, relStarts []time.Duration) {
	w := &st.wake
	preemptors := map[string]bool{}
	for _, e := range d.Evictions {
		if e.Reason == EvictPreempted {
			preemptors[e.By] = true
		}
	}
	// A reservation that starts at an absolute instant (a release, or
	// the end of such a reservation) starts and ends at absolute
	// instants; one that starts at a relative one, at relative ones.
	// In order of start, so that a reservation after another is judged
	// on what that one is.
	isAbs := make(map[time.Duration]bool, len(w.abs))
	for _, a := range w.abs {
		isAbs[a] = true
	}
	// Reservations with the same start may come in any order: a
	// reservation can make only its end absolute, which for one of them
	// is past their start or, for a run of 0, is their start.
	type entry struct {
		start time.Duration
		i     int
	}
	order := make([]entry, len(d.Reservations))
	for i, r := range d.Reservations {
		order[i] = entry{st.offset(r.Start), i}
	}
	slices.SortFunc(order, func(a, b entry) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.i, b.i)) })
	for _, e := range order {
		r, start, run := &d.Reservations[e.i], e.start, backfill.Forever
		if j := of[e.i]; j != nil {
			run = st.hold(j)
		}
		end := addDur(start, run)
		if isAbs[start] && !preemptors[r.Job] {
			if end < backfill.Forever && !isAbs[end] {
				isAbs[end] = true
				absRes = append(absRes, end)
			}
			continue
		}
		w.from(start)
		w.from(end)
		relStarts = append(relStarts, start)
	}
	return absRes, relStarts
}

// pendingOf returns the pending job of each of n job IDs, id(0) to
// id(n-1), nil for one that is not pending. The IDs are in ID order, as
// st.pending is: one walk over both, O(n + pending jobs).
func (st *stepState) pendingOf(n int, id func(i int) string) []*Job {
	of := make([]*Job, n)
	k := 0
	for i := range n {
		for k < len(st.pending) && st.pending[k].ID < id(i) {
			k++
		}
		if k < len(st.pending) && st.pending[k].ID == id(i) {
			of[i] = st.pending[k]
		}
	}
	return of
}
