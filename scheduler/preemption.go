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

// Preemption in a Step, in the order a job meets it (preempt):
//
//  1. Only a job whose tier may preempt some tier tries; the candidates
//     are the running jobs worth stopping that have run Config.MinRuntime
//     (candidatePool), cheapest first.
//  2. If waiting is as fast as any preemption could be, the job claims
//     the start it waits for (claim) and no victims are sought.
//  3. Else a selector searches for victims among the candidates its tier
//     may preempt, on GPUs no other reservation needs within the window
//     (the job's run plus the largest grace).
//  4. Victims found are evicted only when waiting is slower than their
//     grace (preempt.Worth); the job is reserved the freed GPUs from then.
//     Otherwise it claims the start it would wait for. Victims beyond the
//     Step's disruption budget are not evicted (budget.go): the job, and
//     every preemptor after it, goes on as in 5.
//  5. Without victims, a job that can start on GPUs being freed by the
//     time the evictions under way end is reserved those (awaitEvictions).
//
// A job that none of these decides goes on to the backfill mode. Step 4
// for a job J whose only victim V has a checkpoint grace of 10m, no
// evictions under way and J's shape fitting V's GPUs:
//
//	J could start by waiting at  decision
//	now+5m (a job's limit)       V stays: waiting is as fast (claim, or the backfill mode)
//	now+10m                      V stays: waiting is as fast (claim, or the backfill mode)
//	now+1h                       V evicted; J reserved on V's GPUs at now+10m
//	never (no time limits)       V evicted; J reserved on V's GPUs at now+10m

// asFastMsg is why a job that may preempt waits for GPUs being freed
// instead.
const asFastMsg = "could preempt, but GPUs being freed start it as soon"

// candidatePool is the running jobs a Step may preempt, and the scratch
// space of its victim searches: a Step makes few preemptions but may
// search often.
type candidatePool struct {
	built bool
	cands []preempt.Candidate // cheapest first (preempt.Compare)
	jobs  []*Job              // the job of each candidate
	gone  []bool              // by candidate: chosen as a victim
	// spared is, by candidate, whether the search under way leaves it
	// out (see spare; nil until one is), sparedIdx the candidates marked.
	spared    []bool
	sparedIdx []int
	// nodeFrom and byNode list the candidates by the node of their first
	// hold, built on first use (onNode): those of node n are
	// byNode[nodeFrom[n]:nodeFrom[n+1]].
	nodeFrom, byNode []int32
	// byGrace lists the candidates by grace, longest first; graceFrom
	// holds, per preemptor tier, the place in it of the first candidate
	// that tier may still preempt. Candidates only leave (as victims),
	// so each place only moves forward.
	byGrace   []int
	graceFrom []int
	// searchIdx and searchCands are a search's candidates (indices in
	// cands, and their copies as the selector sees them), victims what
	// it found (indices in cands: valid until the next search); selector
	// is the default victim selector, whose scratch serves every search.
	searchIdx   []int
	searchCands []preempt.Candidate
	victims     []int
	selector    preempt.Selector
}

// onNode returns the candidates whose first hold is on node n (indices
// in cands, ascending). The first call lists them all by node: O(C + N)
// for C candidates on N nodes; each call after is O(1).
func (pool *candidatePool) onNode(n topology.NodeID, nodes int) []int32 {
	if pool.nodeFrom == nil {
		pool.nodeFrom = make([]int32, nodes+1)
		for i := range pool.cands {
			if len(pool.cands[i].Holds) > 0 { // (one without frees nothing)
				pool.nodeFrom[pool.cands[i].Holds[0].Node+1]++
			}
		}
		for k := range nodes {
			pool.nodeFrom[k+1] += pool.nodeFrom[k]
		}
		pool.byNode = make([]int32, pool.nodeFrom[nodes])
		next := slices.Clone(pool.nodeFrom[:nodes])
		for i := range pool.cands {
			if len(pool.cands[i].Holds) == 0 {
				continue
			}
			n := pool.cands[i].Holds[0].Node
			pool.byNode[next[n]] = int32(i)
			next[n]++
		}
	}
	return pool.byNode[pool.nodeFrom[n]:pool.nodeFrom[n+1]]
}

// tier is j's tier under the policy in force: an unset tier is the
// lowest.
func (st *stepState) tier(j *Job) int { return j.Tier.Level(st.tiers) }

// preempts reports whether j's tier may preempt any tier at all.
func (st *stepState) preempts(j *Job) bool {
	if st.cfg.DisablePreemption {
		return false
	}
	m := st.matrix
	for v := range m.Tiers() {
		if m.CanPreempt(st.tier(j), v) {
			return true
		}
	}
	return false
}

// preempt is the stage that makes room for j by evicting lower-tier jobs,
// or claims GPUs being freed for it. It decides j (a reservation on the
// freed GPUs, or a wait for evictions already under way) or leaves it
// undecided, having changed nothing.
//
// Its answer for j depends on the Step's state and on j's shape, tier,
// members and run (mayReserve changes only how it records a claim: see
// waitKey). So a job alike, while nothing has changed since, is left
// undecided at once: in a long queue many jobs of one shape wait in a
// row. Runs are alike when both reach past the start of every
// reservation made: the profile, the victim search and the GPUs reserved
// for others within a window then see the same reservations for either.
func (st *stepState) preempt(j *Job, req gang.Request, d time.Duration, mayReserve bool) status {
	if !st.preempts(j) {
		return status{}
	}
	st.wake.preemptor(st.tier(j))
	st.buildCandidates()
	// The relative instants that the stages below compare with absolute
	// ones (for nextWake): j's run, its window, the victims' grace.
	grace := st.victimGrace(st.tier(j))
	st.wake.from(d)
	st.wake.from(grace)
	st.wake.from(addDur(d, grace))
	key := st.preemptKeyOf(j, req)
	alike := waitKey{preemptKey: key, members: j.Members, hold: d}
	if starts := st.reservations.starts; len(starts) == 0 || d > starts[len(starts)-1] {
		// A run from t >= 0 of d, or of d plus a grace, meets every
		// reservation that has not ended by t: all such runs are alike.
		alike.hold = backfill.Forever
	}
	if st.memo.waitedIn(alike, st.changes()) {
		return status{}
	}
	s := st.preemptOnce(j, req, d, mayReserve, key)
	if !s.decided() {
		st.memo.noteWaited(alike, st.changes())
	}
	return s
}

// preemptKeyOf is the key of j's victim searches: jobs of one key find
// the same victims.
func (st *stepState) preemptKeyOf(j *Job, req gang.Request) preemptKey {
	return preemptKey{shape: shapeKey{class: req.Class, gpusPerMember: req.GPUsPerMember, cpu: req.CPUMillis, mem: req.MemoryMiB, required: req.Required, preferred: req.Preferred,
		mode: int32(j.Placement), spread: req.SpreadLevel, eligible: st.eligibleID(j)}, tier: st.tier(j)}
}

// changes counts what the Step has changed so far: placements,
// reservations and evictions, the only changes to the GPUs, the profile
// and the teams' use of GPUs that preempt reads.
func (st *stepState) changes() int {
	return len(st.decided.Placements) + len(st.decided.Reservations) + len(st.decided.Evictions)
}

// preemptOnce is preempt for one job, unremembered.
//
// Preempting pays only when waiting is slower: when j can start by
// waiting no later than grace, the largest checkpoint grace of its
// victims, it waits (see [preempt.Worth]); a start on GPUs of jobs being
// evicted counts as fast until evictionsEnd too (see asFastBy). So j's
// start by waiting is sought first, and only up to the latest that bound
// can be (longestGrace, of the candidates j may preempt, or
// evictionsEnd): past it, any victims found are worth evicting. A start
// on evicting GPUs by evictionsEnd is as fast as any preemption, whatever
// the victims; then, when the victims would not change what j is given,
// no victim search is made. Whether waiting is as fast is judged for
// each job on its own shape, members and run, on the Step as it is at
// its turn.
func (st *stepState) preemptOnce(j *Job, req gang.Request, d time.Duration, mayReserve bool, key preemptKey) status {
	// The reservation made below runs from the victims' grace for d;
	// GPUs reserved for others within that window are not the victims'
	// to give.
	longestGrace := st.victimGrace(st.tier(j))
	window := addDur(d, longestGrace)
	// Only the default selector is known to find none for more members
	// or a longer window once it found none: a custom one may answer each
	// request its own way, so it is asked every time.
	if st.cfg.Victims == nil && st.memo.searchFails(key, j.Members, window) {
		return st.awaitEvictions(j, req, d, mayReserve)
	}
	scorer := st.scorer(j)
	var byWaiting backfill.Start
	canWait, sought := false, false
	if st.memo != nil {
		byWaiting, canWait = st.earliestBy(j, req, d, 0, max(longestGrace, st.evictionsEnd))
		sought = true
		if canWait && byWaiting.At <= st.asFastBy(byWaiting) {
			if s, sure := st.asFastAnyway(j, byWaiting, d, mayReserve); sure {
				return s
			}
		}
	}
	if st.budget.spent {
		// No victims for anyone after a preemptor the budget refused
		// (try says so when the job waits).
		return st.awaitEvictions(j, req, d, mayReserve)
	}
	victims, pl, found := st.searchVictims(j, req, scorer, window)
	if !found {
		st.memo.noteSearchFailed(key, failedSearch{members: j.Members, window: window})
		return st.awaitEvictions(j, req, d, mayReserve)
	}
	grace := time.Duration(0)
	for _, v := range victims {
		grace = max(grace, st.pool.cands[v].Grace)
	}
	// Preempt only when waiting would be worse: the start without
	// preemption, judged by time limits and the evictions already under
	// way, is later than the victims' grace (or, on GPUs being evicted,
	// than evictionsEnd). (A start sought only up to max(longestGrace,
	// evictionsEnd) and not found is later than that.)
	if !sought {
		byWaiting, canWait = st.earliestBy(j, req, d, 0, backfill.Forever)
	}
	if !preempt.Worth(max(grace, st.asFastBy(byWaiting)), byWaiting.At, canWait) {
		// It has the right to these GPUs and waits only because that is
		// as fast: reserve them, or a lower tier would backfill into them
		// and be preempted when they are due.
		return st.claim(j, byWaiting, d, mayReserve, asFastMsg)
	}
	st.wake.from(grace)
	if !st.withinBudget(victims) {
		return st.awaitEvictions(j, req, d, mayReserve)
	}
	st.evictVictims(j, victims)
	st.reserveAt(j, pl, grace, d)
	st.reservations.made[len(st.reservations.made)-1].claim = true
	return status{code: reserved}
}

// buildCandidates lists, on first use (after the evictions at time
// limits and on down nodes), the running jobs worth preempting, cheapest
// first: each victim search then starts from sorted candidates.
func (st *stepState) buildCandidates() {
	pool := &st.pool
	if pool.built {
		return
	}
	pool.built = true
	evicted := make(map[string]bool, len(st.decided.Evictions))
	for _, e := range st.decided.Evictions {
		evicted[e.Job] = true
	}
	var cands []preempt.Candidate
	var jobs []*Job
	for _, h := range st.held {
		j := h.Job
		if j.State == Running && j.TimeLimit > 0 && !j.Started.IsZero() && !evicted[j.ID] {
			st.wake.atNow(st.limitAt(j).Add(-j.CheckpointGrace)) // no longer worth preempting
		}
		if j.State != Running || evicted[j.ID] || !st.worthPreempting(j) {
			continue
		}
		if st.tooYoung(j) {
			st.wake.matured(st.tier(j), st.matures(j))
			continue
		}
		c := preempt.Candidate{ID: j.ID, Tier: st.tier(j), Grace: j.CheckpointGrace,
			WorkLost: preempt.WorkSince(st.snap.Now, j.Started, time.Time{}),
			Ran:      preempt.WorkSince(st.snap.Now, j.Started, time.Time{})}
		c.Borrowed = st.borrowing(j.Team)
		c.Holds = append(c.Holds, h.holds...)
		cands = append(cands, c)
		jobs = append(jobs, j)
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return preempt.Compare(&cands[a], &cands[b]) })
	pool.cands, pool.jobs = make([]preempt.Candidate, len(order)), make([]*Job, len(order))
	for k, i := range order {
		pool.cands[k], pool.jobs[k] = cands[i], jobs[i]
	}
	pool.gone = make([]bool, len(order))
}

// worthPreempting reports whether running job j is worth stopping. Not
// a job whose time limit comes before its checkpoint grace would run
// out: stopping it now frees its GPUs at most one grace period before its
// limit does, and loses its work (past a limit that is not enforced, a
// job has no known end). So preempting one moves its release earlier,
// never later past a reservation of its GPUs. Nor a job whose grace ends
// after the last start a decision can write: its preemptor's reservation
// would start then.
func (st *stepState) worthPreempting(j *Job) bool {
	if limitAt := st.limitAt(j); j.TimeLimit > 0 &&
		!limitAt.After(st.snap.Now.Add(j.CheckpointGrace)) && limitAt.After(st.snap.Now) {
		return false
	}
	return j.CheckpointGrace <= st.lastStart
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
	pool := &st.pool
	if pool.graceFrom == nil {
		pool.byGrace = make([]int, len(pool.cands))
		for i := range pool.byGrace {
			pool.byGrace[i] = i
		}
		slices.SortStableFunc(pool.byGrace, func(a, b int) int { return cmp.Compare(pool.cands[b].Grace, pool.cands[a].Grace) })
		pool.graceFrom = make([]int, st.matrix.Tiers())
	}
	k := pool.graceFrom[tier]
	for k < len(pool.byGrace) {
		if i := pool.byGrace[k]; !pool.gone[i] && st.matrix.CanPreempt(tier, pool.cands[i].Tier) {
			break
		}
		k++ // gone, or never this tier's to preempt: for good either way
	}
	pool.graceFrom[tier] = k
	if k == len(pool.byGrace) {
		return 0
	}
	return pool.cands[pool.byGrace[k]].Grace
}

// searchVictims asks the victim selector (Config.Victims, or the default)
// for victims among the candidates j's tier may preempt, with the GPUs
// reserved for others within window left out, and returns them (indices
// in the pool, valid until the next search) with the placement they make
// room for. It reports false
// when the selector finds none, answers with an invalid placement, or
// names only victims that free nothing the placement uses.
func (st *stepState) searchVictims(j *Job, req gang.Request, scorer binpack.Scorer, window time.Duration) ([]int, gang.Placement, bool) {
	pool := &st.pool
	idx, sub := st.searchable(st.tier(j), window, pool.searchIdx[:0], pool.searchCands[:0])
	defer func() { pool.searchIdx, pool.searchCands = idx[:0], sub[:0] }()
	var victims []int
	var pl gang.Placement
	ok := false
	if len(sub) > 0 {
		st.profile.WithReservations(window, func() {
			if st.cfg.Victims != nil {
				victims, pl, ok = st.customVictims(req, scorer, sub)
			} else {
				victims, pl, ok = pool.selector.Select(st.ix, req, scorer, sub)
			}
		})
	}
	if !ok || !st.validPreemption(req, sub, victims, pl, window) {
		return nil, pl, false // none, or a custom selector answered nonsense: do not act on it
	}
	victims = usedVictims(sub, victims, pl) // a custom selector's spare victims stay
	if len(victims) == 0 {
		return nil, pl, false
	}
	inPool := pool.victims[:0]
	for _, v := range victims {
		inPool = append(inPool, idx[v])
	}
	pool.victims = inPool
	return inPool, pl, true
}

// searchable appends to idx and sub the candidates a job of tier may
// still preempt, as a search sees them: each with its team's borrowing
// as it stands, and without the GPUs reserved for others within window.
func (st *stepState) searchable(tier int, window time.Duration, idx []int, sub []preempt.Candidate) ([]int, []preempt.Candidate) {
	pool := &st.pool
	for i := range pool.cands {
		c := &pool.cands[i]
		if pool.gone[i] || pool.spared != nil && pool.spared[i] || !st.matrix.CanPreempt(tier, c.Tier) {
			continue
		}
		seen := *c
		// Evictions earlier in the Step may have brought the team back
		// within its quota: its jobs then no longer run on borrowed GPUs.
		// Without quotas no team borrows, c.Borrowed is false already,
		// and the job (cold in the cache: one per candidate) is not read.
		if len(st.quotas) > 0 {
			seen.Borrowed = st.borrowing(pool.jobs[i].Team)
		}
		// Leave out GPUs reserved for others; copy the holds only then.
		// The job still loses the work of all its GPUs: Size keeps
		// their count for the cost order.
		for k, h := range c.Holds {
			if res := st.profile.Reserved(h.Node, 0, window); h.GPUs&res != 0 {
				seen.Size = c.NumGPUs()
				seen.Holds = slices.Clone(c.Holds[:k])
				for _, h := range c.Holds[k:] {
					if free := h.GPUs &^ st.profile.Reserved(h.Node, 0, window); free != 0 || h.CPUMillis != 0 || h.MemoryMiB != 0 {
						seen.Holds = append(seen.Holds, preempt.Hold{Node: h.Node, GPUs: free, CPUMillis: h.CPUMillis, MemoryMiB: h.MemoryMiB})
					}
				}
				break
			}
		}
		idx = append(idx, i)
		sub = append(sub, seen)
	}
	return idx, sub
}

// evictVictims evicts the pool's candidates victims for j: their GPUs
// free up after their grace, and their teams no longer hold them. Each
// grace end is a relative instant (for nextWake): other jobs may be
// reserved at it, and it may tie with an absolute one.
func (st *stepState) evictVictims(j *Job, victims []int) {
	pool := &st.pool
	for _, i := range victims {
		pool.gone[i] = true
		v := pool.jobs[i]
		st.decided.Evictions = append(st.decided.Evictions, Eviction{Job: v.ID, Reason: EvictPreempted, By: j.ID, Grace: v.CheckpointGrace, Requeue: true})
		st.wake.from(v.CheckpointGrace)
		for _, h := range pool.cands[i].Holds {
			st.profile.MoveRelease(h.Node, h.GPUs, v.CheckpointGrace)
		}
		st.evictionsEnd = max(st.evictionsEnd, v.CheckpointGrace)
		st.addInUse(v, -1)
	}
}

// asFastBy is the moment until which j's start by waiting, start, counts
// as fast as any preemption on account of the evictions under way: the
// end of the last of them when start takes GPUs of jobs being evicted,
// else none (0). Step keeps no state, so a preemptor of an earlier Step
// is pending again while its victims checkpoint; waiting for their GPUs
// is then as fast, and preempting again would stop more jobs for
// nothing. Evictions elsewhere (a job checkpointing on a down node, say)
// do not make a start on other GPUs any faster. A start on evicting GPUs
// waits for the last eviction anywhere, not only for those whose GPUs it
// takes: Step cannot tell its own victims from others', and a preemptor
// must not stop the same victim twice.
func (st *stepState) asFastBy(start backfill.Start) time.Duration {
	if evicting, _ := st.holdsBack(start.Placement); evicting {
		return st.evictionsEnd
	}
	return 0
}

// asFastAnyway decides for j, which can start by waiting at start, on
// GPUs of jobs being evicted, no later than the evictions under way end
// (evictionsEnd), without a victim search when it can: no preemption
// would start j sooner, so with victims j would claim start (as fast as
// preempting), and without, awaitEvictions would decide. When the two
// come to the same, sure is true and s is what preempt decides; else the
// victims must be searched for.
func (st *stepState) asFastAnyway(j *Job, start backfill.Start, d time.Duration, mayReserve bool) (s status, sure bool) {
	if !st.claimable(start) {
		return status{}, true // neither claims start; awaitEvictions finds no earlier one
	}
	// awaitEvictions finds start too when it comes by the time the jobs
	// being evicted (but for this Step's victims) are gone, and claims it
	// alike unless a ReservationPolicy declines, when only the message
	// would differ.
	if st.evicting != nil && start.At <= st.evictingEnd && (mayReserve || st.cfg.Reserve == nil) {
		return st.claim(j, start, d, mayReserve, asFastMsg), true
	}
	return status{}, false
}

// awaitEvictions decides j, which may preempt but found no victims worth
// evicting, when it can start by the time the last job being evicted (but
// for this Step's own victims, whose GPUs go to their preemptors) is
// gone: it claims that start, even when the backfill mode has no
// reservation left. Step keeps no state, so the job that preempted in an
// earlier Step is known only as a job that may preempt and will start
// soon; the GPUs it waits for (those its victims freed, and what a job
// stopped at its limit or another release adds to them) are reserved
// for it, so a lower tier cannot backfill into them and be preempted
// again. A custom ReservationPolicy may decline; then j waits with
// reason awaiting-preemption.
func (st *stepState) awaitEvictions(j *Job, req gang.Request, d time.Duration, mayReserve bool) status {
	if st.evicting == nil {
		return status{}
	}
	// EarliestBy remembers its misses per shape: asking again for a
	// shape that cannot start by then is cheap.
	start, ok := st.earliestBy(j, req, d, 0, st.evictingEnd)
	if !ok {
		return status{}
	}
	return st.claim(j, start, d, mayReserve, "waits for GPUs being freed")
}

// claim reserves start for j, which may preempt but waits for GPUs being
// freed, even beyond the backfill mode's reservations, when start holds
// back GPUs that victims hold or have freed (see holdsBack); when a
// custom ReservationPolicy declines, j waits with reason
// awaiting-preemption, why and the estimated start. A start that holds
// back nothing, or lies beyond the planning horizon (see claimable), is
// not claimed: j is left undecided, to the backfill mode.
func (st *stepState) claim(j *Job, start backfill.Start, d time.Duration, mayReserve bool, why string) status {
	if !st.claimable(start) {
		return status{}
	}
	if !mayReserve && st.cfg.Reserve != nil {
		at := st.at(start.At)
		s := waitFor(ReasonAwaitingPreemption, why+"; expected to start at "+formatTime(at, time.RFC3339Nano))
		s.start = at
		return s
	}
	st.reserveAt(j, start.Placement, start.At, d)
	st.reservations.made[len(st.reservations.made)-1].claim = true
	return status{code: reserved}
}

// claimable reports whether claim would take start: a start within the
// planning horizon (Config.Horizon, and the end of year 9999) that holds
// back GPUs being freed or free now. Config.Horizon does not bound a
// start on GPUs of jobs being evicted by the time they are all gone: Step
// keeps no state, so that is how the Steps after a preemption see the
// preemptor's reservation on its victims' GPUs, which the horizon does
// not bound in the Step that evicts them either; were it bounded, a
// requeued victim could take back the GPUs it just left, to be preempted
// again.
func (st *stepState) claimable(start backfill.Start) bool {
	evicting, held := st.holdsBack(start.Placement)
	by := st.horizon
	if evicting && start.At <= st.evictingEnd {
		by = st.lastStart
	}
	return held && start.At <= by
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

// customVictims asks Config.Victims for victims among sub. It hands over
// a copy, holds included, which the selector may reorder or change as it
// likes, and maps the indices it returns, into the copy as the selector
// left it, back to sub by job ID; an index out of range is no answer.
func (st *stepState) customVictims(req gang.Request, scorer binpack.Scorer, sub []preempt.Candidate) ([]int, gang.Placement, bool) {
	given := slices.Clone(sub)
	for i := range given {
		given[i].Holds = slices.Clone(given[i].Holds)
	}
	victims, pl, ok := st.cfg.Victims.Select(st.ix, req, scorer, given)
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
// range, and a whole placement on ready nodes of the job's class that
// the request does not avoid (its eligible nodes), within
// one domain of its required level, using only GPUs that are free now or
// held by the victims and that no reservation holds within window.
func (st *stepState) validPreemption(req gang.Request, cands []preempt.Candidate, victims []int, pl gang.Placement, window time.Duration) bool {
	freed := map[topology.NodeID]topology.GPUSet{}
	type use struct{ cpu, mem int64 }
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
	slotUse := map[topology.NodeID]use{}
	members := 0
	used := map[topology.NodeID]topology.GPUSet{}
	for _, sl := range pl.Slots {
		if sl.Node < 0 || int(sl.Node) >= st.ix.NumNodes() || used[sl.Node]&sl.GPUs != 0 {
			return false
		}
		used[sl.Node] |= sl.GPUs
		if st.ix.State(sl.Node) != topology.Ready || !st.ix.InClass(sl.Node, req.Class) || req.Avoid != nil && req.Avoid(sl.Node) {
			return false
		}
		if req.Required != gang.NoLevel && st.ix.DomainOf(req.Required, sl.Node) != st.ix.DomainOf(req.Required, pl.Slots[0].Node) {
			return false // the gang must share one domain of its required level
		}
		// GPUs free now or freed by the victims, and reserved for no one
		// during the run.
		ok := (st.ix.FreeSet(sl.Node) | (freed[sl.Node] & st.ix.Healthy(sl.Node))) &^ st.profile.Reserved(sl.Node, 0, window)
		if sl.GPUs&^ok != 0 || sl.Members < 1 || sl.GPUs.Len() != sl.Members*req.GPUsPerMember {
			return false
		}
		members += sl.Members
		u := slotUse[sl.Node]
		slotUse[sl.Node] = use{u.cpu + int64(sl.Members)*req.CPUMillis, u.mem + int64(sl.Members)*req.MemoryMiB}
	}
	// CPU and memory: what the node uses, less what the victims free,
	// plus the placement's, within its capacity.
	// (The selector may free a victim's CPU and memory over the whole
	// run, where they count only until its release; this is exact.)
	for n, u := range slotUse {
		cpu, mem := st.profile.UseOnWithout(n, window, freed[n])
		if !roomLeft(st.ix.CPUCapacity(n), cpu, u.cpu) || !roomLeft(st.ix.MemoryCapacity(n), mem, u.mem) {
			return false
		}
	}
	return members == req.Members
}

// usedVictims returns, in order, the victims that hold GPUs of pl: the
// others free nothing j uses. It keeps the slice when it drops none.
func usedVictims(cands []preempt.Candidate, victims []int, pl gang.Placement) []int {
	uses := func(v int) bool {
		for _, h := range cands[v].Holds {
			for _, sl := range pl.Slots {
				if sl.Node == h.Node && (sl.GPUs&h.GPUs != 0 || sl.CPUMillis > 0 && h.CPUMillis > 0 || sl.MemoryMiB > 0 && h.MemoryMiB > 0) {
					return true // its GPUs, or CPU or memory the placement needs on the node
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

// roomLeft reports whether want fits a node of the given capacity
// (topology.Unlimited: none) that uses used.
func roomLeft(capacity, used, want int64) bool {
	return want == 0 || capacity == topology.Unlimited || used+want <= capacity
}
