package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

type preemptKey struct {
	shape shapeKey
	tier  int
}

// waitKey identifies the jobs that preempt treats alike in one state of
// the Step: everything of a job that preempt reads (the run d, or
// Forever for a run past every reservation's start: see preempt) but
// whether it may reserve. That changes only how a claim is recorded (a
// reservation, or a wait when a ReservationPolicy declines), never
// whether preempt reports true: every claim is made when the start is
// claimable whatever mayReserve says, and where mayReserve makes
// asFastAnyway leave the claim to the search, that search claims the
// same start (victims found are not worth evicting for it, and without
// them awaitEvictions finds it).
type waitKey struct {
	preemptKey
	members int
	d       time.Duration
}

// noVictims is a victim search that failed: for members members whose
// run, with the largest grace, spans window.
type noVictims struct {
	members int
	window  time.Duration
}

// preempts reports whether j's tier may preempt any tier at all.
func (st *stepState) preempts(j *Job) bool {
	if st.cfg.DisablePreemption {
		return false
	}
	m := st.matrix
	for v := range m.Tiers() {
		if m.CanPreempt(j.Tier, v) {
			return true
		}
	}
	return false
}

// candidates lists the running jobs that may be preempted, built on first
// use after the evictions of this Step.
func (st *stepState) candidates() {
	if st.candJobs != nil {
		return
	}
	st.candJobs = []*Job{}
	evicted := make(map[string]bool, len(st.d.Evictions))
	for _, e := range st.d.Evictions {
		evicted[e.Job] = true
	}
	for _, h := range st.held {
		j := h.Job
		if j.State != Running || evicted[j.ID] {
			continue
		}
		// A job whose time limit comes before its checkpoint grace would
		// run out is not worth preempting: stopping it now frees its GPUs
		// at most one grace period before its limit does, and loses its
		// work.
		// (Past a limit that is not enforced, a job has no known end.)
		// So preempting one moves its release earlier, never later past
		// a reservation of its GPUs.
		if limitAt := st.limitAt(j); j.TimeLimit > 0 &&
			!limitAt.After(st.snap.Now.Add(j.CheckpointGrace)) && limitAt.After(st.snap.Now) {
			continue
		}
		// Nor is a job whose grace ends after the last start a decision
		// can write: its preemptor's reservation would start then.
		if j.CheckpointGrace > st.lastStart {
			continue
		}
		c := preempt.Candidate{ID: j.ID, Tier: j.Tier, Grace: j.CheckpointGrace,
			WorkLost: preempt.WorkSince(st.snap.Now, j.Started, time.Time{}),
			Ran:      preempt.WorkSince(st.snap.Now, j.Started, time.Time{})}
		c.Borrowed = st.borrowing(j.Team)
		c.Holds = append(c.Holds, h.holds...)
		st.cands = append(st.cands, c)
		st.candJobs = append(st.candJobs, j)
	}
	// Cheapest first, once: each victim search then starts from sorted
	// candidates.
	idx := make([]int, len(st.cands))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return preempt.Compare(&st.cands[a], &st.cands[b]) })
	cands, jobs := make([]preempt.Candidate, len(idx)), make([]*Job, len(idx))
	for k, i := range idx {
		cands[k], jobs[k] = st.cands[i], st.candJobs[i]
	}
	st.cands, st.candJobs = cands, jobs
	st.gone = make([]bool, len(cands))
}

// borrowing reports whether team holds more GPUs than its nominal quota
// (a zero quota limits nothing): its jobs then run on borrowed GPUs, the
// first reclaimed by preemption. GPUs reserved for the team's jobs in
// this Step count against its quota but are not held: a promise of more
// later does not put the jobs it runs now on borrowed GPUs.
func (st *stepState) borrowing(team string) bool {
	if len(st.quotas) == 0 {
		return false // the common case, asked once per candidate per search
	}
	q := st.quotas[team]
	return q != nil && fairshare.Quota{GPUs: q.GPUs, BorrowLimit: q.BorrowLimit}.Borrowed(st.inUse[team]-st.reserved[team]) > 0
}

// victimGrace is the largest checkpoint grace among the candidates a job
// of tier may still preempt: the latest its reservation can start.
// O(C log C) for C candidates on first use in a Step, then O(1) amortised:
// each tier's place in the candidates by grace passes each candidate at
// most once.
func (st *stepState) victimGrace(tier int) time.Duration {
	if tier < 0 || tier >= st.matrix.Tiers() {
		return 0
	}
	if st.graceAt == nil {
		st.byGrace = make([]int, len(st.cands))
		for i := range st.byGrace {
			st.byGrace[i] = i
		}
		slices.SortStableFunc(st.byGrace, func(a, b int) int { return cmp.Compare(st.cands[b].Grace, st.cands[a].Grace) })
		st.graceAt = make([]int, st.matrix.Tiers())
	}
	k := st.graceAt[tier]
	for k < len(st.byGrace) {
		if i := st.byGrace[k]; !st.gone[i] && st.matrix.CanPreempt(tier, st.cands[i].Tier) {
			break
		}
		k++ // gone, or never this tier's to preempt: for good either way
	}
	st.graceAt[tier] = k
	if k == len(st.byGrace) {
		return 0
	}
	return st.cands[st.byGrace[k]].Grace
}

// preempt tries to make room for j by evicting lower-tier jobs. It
// reports true when it has recorded j's outcome (a reservation on the
// freed GPUs, or a wait for evictions already under way).
//
// Its answer for j depends on the Step's state and on j's shape, tier,
// members and run (mayReserve changes only what it records: see
// waitKey); when it is false, preempt changed nothing. So a job alike,
// while nothing has changed since, gets false at once: in a long queue
// many jobs of one shape wait in a row. Runs are alike when both reach
// past the start of every reservation made: the profile, the victim
// search and the GPUs reserved for others within a window then see the
// same reservations for either.
func (st *stepState) preempt(j *Job, req gang.Request, d time.Duration, mayReserve bool) bool {
	st.candidates()
	pk := preemptKey{shape: shapeKey{class: req.Class, g: req.GPUsPerMember, req: req.Required, pre: req.Preferred, mode: int32(j.Placement), spread: req.SpreadLevel}, tier: j.Tier}
	wk := waitKey{preemptKey: pk, members: j.Members, d: d}
	if n := len(st.starts); n == 0 || d > st.starts[n-1] {
		// A run from t >= 0 of d, or of d plus a grace, meets every
		// reservation that has not ended by t: all such runs are alike.
		wk.d = backfill.Forever
	}
	if at, ok := st.waited[wk]; ok && at == st.changes() && !st.noMemo {
		return false
	}
	if !st.preemptOnce(j, req, d, mayReserve, pk) {
		st.waited[wk] = st.changes()
		return false
	}
	return true
}

// changes counts what the Step has changed so far: placements,
// reservations and evictions, the only changes to the GPUs, the profile
// and the teams' use of GPUs that preempt reads.
func (st *stepState) changes() int {
	return len(st.d.Placements) + len(st.d.Reservations) + len(st.d.Evictions)
}

// preemptOnce is preempt for one job.
//
// Preempting pays only when waiting is slower: when j can start by
// waiting no later than grace, the largest checkpoint grace of its
// victims, it waits (see [preempt.Worth]); a start on GPUs of jobs being
// evicted counts as fast until evictEnd too (see asFastBy). So j's start
// by waiting is sought first, and only up to the latest that bound can
// be (the largest grace of the candidates j may preempt, or evictEnd):
// past it, any victims found are worth evicting. A start on evicting GPUs
// by evictEnd is as fast as any preemption, whatever the victims; then,
// when the victims would not change what j is given, no victim search is
// made. Whether waiting is as fast is judged for each job on its own
// shape, members and run, on the Step as it is at its turn: carried over
// from an earlier job of the shape, it left a job unpreempted when the
// one before it had taken the GPUs it would have waited for.
func (st *stepState) preemptOnce(j *Job, req gang.Request, d time.Duration, mayReserve bool, pk preemptKey) bool {
	// The reservation made below runs from grace for d; GPUs reserved
	// for others within that window are not the victims' to give.
	most := st.victimGrace(j.Tier)
	window := addDur(d, most)
	// Only the default selector is known to find none for more members
	// or a longer window once it found none: a custom one may answer each
	// request its own way, so it is asked every time.
	if !st.noMemo && st.cfg.Victims == nil {
		for _, f := range st.noVictims[pk] {
			if j.Members >= f.members && window >= f.window {
				return st.awaitEvictions(j, req, d, mayReserve)
			}
		}
	}
	sc := st.scorer(j)
	var start backfill.Start
	canWait, sought := false, false
	if !st.noMemo {
		start, canWait = st.prof.EarliestBy(req, d, sc, 0, max(most, st.evictEnd))
		sought = true
		if canWait && start.At <= st.asFastBy(start) {
			if done, sure := st.asFastAnyway(j, start, d, mayReserve); sure {
				return done
			}
		}
	}
	m := st.matrix
	// The candidates this job may preempt, in buffers reused between
	// searches: a Step makes few preemptions but may search often.
	idx, sub := st.idxBuf[:0], st.subBuf[:0]
	defer func() { st.idxBuf, st.subBuf = idx[:0], sub[:0] }()
	for i := range st.cands {
		c := &st.cands[i]
		if st.gone[i] || !m.CanPreempt(j.Tier, c.Tier) {
			continue
		}
		cc := *c
		// Evictions earlier in the Step may have brought the team back
		// within its quota: its jobs then no longer run on borrowed GPUs.
		// Without quotas no team borrows, c.Borrowed is false already,
		// and the job (cold in the cache: one per candidate) is not read.
		if len(st.quotas) > 0 {
			cc.Borrowed = st.borrowing(st.candJobs[i].Team)
		}
		// Leave out GPUs reserved for others; copy the holds only then.
		// The job still loses the work of all its GPUs: Size keeps
		// their count for the cost order.
		for k, h := range c.Holds {
			if res := st.prof.Reserved(h.Node, 0, window); h.GPUs&res != 0 {
				cc.Size = c.NumGPUs()
				cc.Holds = slices.Clone(c.Holds[:k])
				for _, h := range c.Holds[k:] {
					if free := h.GPUs &^ st.prof.Reserved(h.Node, 0, window); free != 0 {
						cc.Holds = append(cc.Holds, preempt.Hold{Node: h.Node, GPUs: free})
					}
				}
				break
			}
		}
		idx = append(idx, i)
		sub = append(sub, cc)
	}
	var victims []int
	var pl gang.Placement
	ok := false
	if len(sub) > 0 {
		st.prof.WithReservations(window, func() {
			if st.cfg.Victims != nil {
				victims, pl, ok = st.customVictims(req, sc, sub)
			} else {
				victims, pl, ok = st.sel.Select(st.ix, req, sc, sub)
			}
		})
	}
	if ok && !st.validPreemption(req, sub, victims, pl, window) {
		ok = false // a custom selector answered nonsense: do not act on it
	}
	if ok {
		victims = usedVictims(sub, victims, pl) // a custom selector's spare victims stay
	}
	if !ok || len(victims) == 0 {
		// Keep only the failures no other implies: the list stays short.
		f := noVictims{members: j.Members, window: window}
		st.noVictims[pk] = append(slices.DeleteFunc(st.noVictims[pk], func(o noVictims) bool {
			return f.members <= o.members && f.window <= o.window
		}), f)
		return st.awaitEvictions(j, req, d, mayReserve)
	}
	grace := time.Duration(0)
	for _, v := range victims {
		grace = max(grace, sub[v].Grace)
	}
	// Preempt only when waiting would be worse: the start without
	// preemption, judged by time limits and the evictions already under
	// way, is later than the victims' grace (or, on GPUs being evicted,
	// than evictEnd). (A start sought only up to max(most, evictEnd) and
	// not found is later than that.)
	if !sought {
		start, canWait = st.prof.Earliest(req, d, sc, 0)
	}
	if !preempt.Worth(max(grace, st.asFastBy(start)), start.At, canWait) {
		// It has the right to these GPUs and waits only because that is
		// as fast: reserve them, or a lower tier would backfill into them
		// and be preempted when they are due.
		return st.claim(j, start, d, mayReserve, asFastMsg)
	}
	for _, v := range victims {
		i := idx[v]
		st.gone[i] = true
		vj := st.candJobs[i]
		st.d.Evictions = append(st.d.Evictions, Eviction{Job: vj.ID, Reason: EvictPreempted, By: j.ID, Grace: vj.CheckpointGrace, Requeue: true})
		for _, h := range st.cands[i].Holds {
			st.prof.MoveRelease(h.Node, h.GPUs, vj.CheckpointGrace)
		}
		st.evictEnd = max(st.evictEnd, vj.CheckpointGrace)
		st.inUse[vj.Team] -= vj.GPUs()
	}
	st.reserveAt(j, pl, grace, d)
	return true
}

// asFastBy is the moment until which j's start by waiting, start, counts as
// fast as any preemption on account of the evictions under way: the end
// of the last of them when start takes GPUs of jobs being evicted, else
// none (0). Step keeps no state, so a preemptor of an earlier Step is
// pending again while its victims checkpoint; waiting for their GPUs is
// then as fast, and preempting again would stop more jobs for nothing.
// Evictions elsewhere (a job checkpointing on a down node, say) do not
// make a start on other GPUs any faster. A start on evicting GPUs waits
// for the last eviction anywhere, not only for those whose GPUs it
// takes: Step cannot tell its own victims from others, and the narrower
// rule let a preemptor stop the same victim twice (see
// TestPreemptionOverSteps).
func (st *stepState) asFastBy(start backfill.Start) time.Duration {
	if evicting, _ := st.holdsBack(start.Placement); evicting {
		return st.evictEnd
	}
	return 0
}

// asFastMsg is why a job that may preempt waits for GPUs being freed
// instead.
const asFastMsg = "could preempt, but GPUs being freed start it as soon"

// asFastAnyway decides for j, which can start by waiting at start, on GPUs
// of jobs being evicted, no later than the evictions under way end
// (evictEnd), without a victim search when it can: no preemption would
// start j sooner, so with victims j would claim start (as fast as
// preempting), and without, awaitEvictions would decide. When the two
// come to the same, sure is true and done is what preempt reports; else
// the victims must be searched for.
func (st *stepState) asFastAnyway(j *Job, start backfill.Start, d time.Duration, mayReserve bool) (done, sure bool) {
	if !st.claimable(start) {
		return false, true // neither claims start; awaitEvictions finds no earlier start
	}
	// awaitEvictions finds start too when it comes by the time the jobs
	// being evicted (but for this Step's victims) are gone, and claims it
	// alike unless a ReservationPolicy declines, when only the message
	// would differ.
	if st.evicting != nil && start.At <= st.evictingEnd && (mayReserve || st.cfg.Reserve == nil) {
		return st.claim(j, start, d, mayReserve, asFastMsg), true
	}
	return false, false
}

// awaitEvictions gives j, which may preempt but found no victims worth
// evicting, a reservation when it can start by the time the last job
// being evicted (but for this Step's own victims, whose GPUs go to their
// preemptors) is gone, even when the backfill mode has none left. Step
// keeps no state, so the job that preempted in an earlier Step is known
// only as a job that may preempt and will start soon; the GPUs it waits
// for (those its victims freed, and what a job stopped at its limit or
// another release adds to them) are reserved for it, so a lower tier
// cannot backfill into them and be preempted again. A custom
// ReservationPolicy may decline; then j waits with reason
// awaiting-preemption. It reports whether it recorded j's outcome.
func (st *stepState) awaitEvictions(j *Job, req gang.Request, d time.Duration, mayReserve bool) bool {
	if st.evicting == nil {
		return false
	}
	// EarliestBy remembers its misses per shape: asking again for a
	// shape that cannot start by then is cheap.
	start, ok := st.prof.EarliestBy(req, d, st.scorer(j), 0, st.evictingEnd)
	if !ok {
		return false
	}
	return st.claim(j, start, d, mayReserve, "waits for GPUs being freed")
}

// holdsBack reports whether pl takes GPUs that jobs being evicted hold
// (evicting), and whether it takes those or GPUs free now (held): the
// first are what its victims may still hold, the second what they may
// have freed already, which a requeued victim would otherwise take back.
// A start on GPUs that only time limits free is left to the backfill
// mode.
func (st *stepState) holdsBack(pl gang.Placement) (evicting, held bool) {
	for _, sl := range pl.Slots {
		if sl.GPUs&st.evicting[sl.Node] != 0 {
			return true, true
		}
		held = held || sl.GPUs&st.ix.FreeSet(sl.Node) != 0
	}
	return false, held
}

// addEvicting notes that GPUs s of node n are held by a job being
// evicted (not one of this Step's preemption victims, whose GPUs go to
// their preemptor) and are free by end. The caller adds each GPU at most
// once.
func (st *stepState) addEvicting(n topology.NodeID, s topology.GPUSet, end time.Duration) {
	if st.ix.State(n) == topology.Ready {
		st.freeing += (s & st.ix.Healthy(n)).Len()
	}
	if st.evicting == nil {
		st.evicting = map[topology.NodeID]topology.GPUSet{}
	}
	st.evicting[n] |= s
	st.evictingEnd = max(st.evictingEnd, end)
}

// claim reserves start for j, which may preempt but waits for GPUs being
// freed, even beyond the backfill mode's reservations, when start holds back
// GPUs that victims hold or have freed (see holdsBack); when a custom
// ReservationPolicy declines, it records why j waits instead. A start
// that holds back nothing, or lies beyond the planning horizon (see
// claimable), is not claimed: claim reports false and leaves j to the
// backfill mode.
func (st *stepState) claim(j *Job, start backfill.Start, d time.Duration, mayReserve bool, why string) bool {
	if !st.claimable(start) {
		return false
	}
	if !mayReserve && st.cfg.Reserve != nil {
		at := st.at(start.At)
		st.wait(j, ReasonAwaitingPreemption, why+"; expected to start at "+formatTime(at, time.RFC3339Nano), at)
		return true
	}
	st.reserveAt(j, start.Placement, start.At, d)
	return true
}

// claimable reports whether claim would take start: a start within the
// planning horizon (Config.Horizon, and the end of year 9999) that holds
// back GPUs being freed or free now. Config.Horizon does not bound a
// start on GPUs of jobs being evicted by the time they are all gone: Step
// keeps no state, so that is how the Steps after a preemption see the
// preemptor's reservation on its victims' GPUs, which the horizon does
// not bound in the Step that evicts them either. Refused there, it let a
// requeued victim take back the GPUs it had just left, to be preempted
// again.
func (st *stepState) claimable(start backfill.Start) bool {
	evicting, held := st.holdsBack(start.Placement)
	by := st.horizon
	if evicting && start.At <= st.evictingEnd {
		by = st.lastStart
	}
	return held && start.At <= by
}

// customVictims asks Config.Victims for victims among sub. It hands over
// a copy, holds included, which the selector may reorder or change as it
// likes, and maps the indices it returns, into the copy as the selector
// left it, back to sub by job ID; an index out of range is no answer.
func (st *stepState) customVictims(req gang.Request, sc binpack.Scorer, sub []preempt.Candidate) ([]int, gang.Placement, bool) {
	given := slices.Clone(sub)
	for i := range given {
		given[i].Holds = slices.Clone(given[i].Holds)
	}
	victims, pl, ok := st.cfg.Victims.Select(st.ix, req, sc, given)
	if !ok {
		return nil, pl, false
	}
	at := make(map[string]int, len(sub))
	for i := range sub {
		at[sub[i].ID] = i
	}
	for k, v := range victims {
		if v < 0 || v >= len(given) {
			return nil, pl, false
		}
		i, found := at[given[v].ID]
		if !found {
			return nil, pl, false
		}
		victims[k] = i
	}
	return victims, pl, true
}

// validPreemption checks a victim selector's answer: distinct victims in
// range, and a whole placement on ready nodes of the job's class, within
// one domain of its required level, using only GPUs that are free now or
// held by the victims and that no reservation holds within window.
func (st *stepState) validPreemption(req gang.Request, cands []preempt.Candidate, victims []int, pl gang.Placement, window time.Duration) bool {
	freed := map[topology.NodeID]topology.GPUSet{}
	seen := map[int]bool{}
	for _, v := range victims {
		if v < 0 || v >= len(cands) || seen[v] {
			return false
		}
		seen[v] = true
		for _, h := range cands[v].Holds {
			freed[h.Node] |= h.GPUs
		}
	}
	members := 0
	used := map[topology.NodeID]topology.GPUSet{}
	for _, sl := range pl.Slots {
		if sl.Node < 0 || int(sl.Node) >= st.ix.NumNodes() || used[sl.Node]&sl.GPUs != 0 {
			return false
		}
		used[sl.Node] |= sl.GPUs
		if st.ix.State(sl.Node) != topology.Ready || !st.ix.InClass(sl.Node, req.Class) {
			return false
		}
		if req.Required != gang.NoLevel && st.ix.DomainOf(req.Required, sl.Node) != st.ix.DomainOf(req.Required, pl.Slots[0].Node) {
			return false // the gang must share one domain of its required level
		}
		// GPUs free now or freed by the victims, and reserved for no one
		// during the run.
		ok := (st.ix.FreeSet(sl.Node) | (freed[sl.Node] & st.ix.Healthy(sl.Node))) &^ st.prof.Reserved(sl.Node, 0, window)
		if sl.GPUs&^ok != 0 || sl.Members < 1 || sl.GPUs.Len() != sl.Members*req.GPUsPerMember {
			return false
		}
		members += sl.Members
	}
	return members == req.Members
}

// usedVictims returns, in order, the victims that hold GPUs of pl: the
// others free nothing j uses. It keeps the slice when it drops none.
func usedVictims(cands []preempt.Candidate, victims []int, pl gang.Placement) []int {
	uses := func(v int) bool {
		for _, h := range cands[v].Holds {
			for _, sl := range pl.Slots {
				if sl.Node == h.Node && sl.GPUs&h.GPUs != 0 {
					return true
				}
			}
		}
		return false
	}
	if !slices.ContainsFunc(victims, func(v int) bool { return !uses(v) }) {
		return victims
	}
	return slices.DeleteFunc(slices.Clone(victims), func(v int) bool { return !uses(v) })
}
