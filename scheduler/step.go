package scheduler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
)

// This file is the pipeline of a Step. The stages, each a function that
// lives beside what it needs:
//
//	Scheduler.step            check the policy's modes, validate (validate.go)
//	newStepState              free-capacity index: nodes minus running and evicting jobs (state.go)
//	stepState.evict           evict on down nodes and past time limits (state.go)
//	stepState.orderPending    order the pending jobs (Config.Order)
//	stepState.keepPromises    keep and compress the promises of Snapshot.Plan (promises.go)
//	stepState.schedule        each other job's turn, in order:
//	  stepState.try             one job's turn:
//	    admit                     checks of the job alone: GPU type, shape, quota (checks in waits.go)
//	    tryOneType                a gang that names no GPU type: the stages below, type by type (gputype.go)
//	    placeNowWithinShadows     start now by EASY's shadow-time rule (place.go)
//	    preempt                   evict lower tiers, or claim GPUs being freed (preemption.go)
//	    reserveWithinHorizon      a reservation, if the backfill mode has one left (reservations.go)
//	    whyWaits                  why it waits (waits.go)
//	  stepState.recordWait      record the reason of a job that waits
//	stepState.result          sort the decision by job ID (state.go)

// Scheduler turns snapshots into decisions. It keeps no state between
// calls: Step is a pure function of the Config and the Snapshot. Step,
// Explain and Validate only read the Scheduler and the snapshot, so
// several goroutines may call them at once on one Scheduler, even with
// one snapshot, when the configured policies are safe for that. The
// built-in policies are safe; a [preempt.Selector] set as Config.Victims
// is not (it keeps scratch space), while the function [preempt.Select]
// is.
type Scheduler struct {
	cfg Config
	// noMemo makes every Step remember nothing between jobs (stepMemo)
	// and take no shortcut past a victim search or past taking a kept
	// promise out to look for an earlier start (stuckInPlace): tests
	// compare the two to check that the shortcuts change no decision.
	noMemo bool
}

// New returns a scheduler with the given policy.
func New(cfg Config) *Scheduler { return &Scheduler{cfg: cfg} }

// Config returns the scheduler's policy.
func (s *Scheduler) Config() Config { return s.cfg }

// Step decides, for one snapshot, what starts where, what is evicted,
// what is reserved and why every other pending job waits. It does not
// modify snap. An invalid snapshot yields a *ValidationError and no
// decision; so does a nil one. A policy whose Backfill, BackfillOrder or
// FairShare.Algorithm is none of the constants, whose Tiers exceeds
// MaxTiers or whose Preemption matrix is invalid yields an error naming
// the field (not a *ValidationError) and no decision.
//
// The pipeline: validate; build the free-capacity index from the nodes
// minus the GPUs held by running and evicting jobs; evict running jobs
// on down nodes and past their time limit; order the pending jobs; then,
// job by job, place it now if it fits without delaying a reservation,
// else preempt for it if its tier may, else give it a reservation if the
// backfill mode has one left for it, else record why it waits.
func (s *Scheduler) Step(snap *Snapshot) (*Decision, error) {
	st, err := s.step(snap, "")
	if err != nil {
		return nil, err
	}
	return st.result(), nil
}

// step runs the pipeline on snap and returns its state, for Step and
// Explain. When target names a job, the state records what the Step had
// decided when that job's turn came (see turn).
func (s *Scheduler) step(snap *Snapshot, target string) (*stepState, error) {
	return s.stepThen(snap, target, nil)
}

// stepThen is step, then, when then is not nil, then on the state, inside
// the same check that custom policies leave the snapshot unchanged (for
// Forecast, which plans on after the Step).
func (s *Scheduler) stepThen(snap *Snapshot, target string, then func(*stepState)) (*stepState, error) {
	if err := s.cfg.checkModes(); err != nil {
		return nil, err
	}
	c, err := validate(snap, s.cfg.tiers())
	if err != nil {
		return nil, err
	}
	guard := newSnapshotGuard(&s.cfg, snap)
	st, err := newStepState(&s.cfg, snap, c, !s.noMemo)
	if err != nil {
		return nil, err
	}
	st.target = target
	err = guard.run(func() error {
		st.evict()
		if err := st.schedule(); err != nil {
			return err
		}
		if then != nil {
			then(st)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// schedule gives each pending job, in priority order, its turn (try) and
// records how the turn ended. EASY gives the first K jobs that wait for
// GPUs a reservation (Config.Reservations), conservative backfill every
// such job, and a ReservationPolicy whom it chooses; a job without one
// may still start now or preempt. With backfill off, every job after the
// first that waits for GPUs waits too (reason priority). With
// BackfillOrder ShortestFirst, the jobs after the reservations are tried
// last, shortest time limit first (backfillShortestFirst). A job that
// keeps a promise of the plan (keepPromises) has the preemption stage
// for its turn (preemptKept); once one moves onto its victims' GPUs, the
// kept promises ahead of it may start now on its old ones (startKeptNow)
// and, when some of those are free now, those behind it are improved
// again in their turns (improve).
func (st *stepState) schedule() error {
	if err := st.orderPending(); err != nil {
		return err
	}
	st.keepPromises()
	maxReservations := st.cfg.reservations()
	var blockedBy *Job // the first job that waits for GPUs, for strict order
	var behind status  // the wait of the jobs behind it
	var later []int32
	// revisit: a kept promise moved in its turn off GPUs free now, and
	// those behind it were improved before; startAhead: past the last
	// of those that moved again, so that one ahead of it may start now.
	revisit, startAhead := false, 0
	for at, slot := range st.queue {
		j := st.pending[slot]
		if p := st.promises[slot]; p != nil && (p.kept || p.taken) {
			if revisit && p.kept && st.improveLeftRoom(j, p) {
				startAhead = at
			}
			if old := p.pl; st.preemptKept(j, p) {
				// Its old GPUs are free again: a job ahead that keeps
				// a promise may start now on them, and, where some are
				// free now, one behind may start now or earlier.
				revisit = revisit || st.freeNow(old)
				for ahead := at; ahead > 0 && st.mayStartOn(old); {
					ahead = st.startKeptNow(st.queue[:ahead])
				}
			}
			if !p.taken && blockedBy == nil {
				blockedBy = j // reserved: it waits for GPUs
			}
			continue
		}
		if st.cfg.Backfill == NoBackfill && blockedBy != nil {
			if _, s := st.admit(j); s.decided() {
				st.recordWait(slot, s) // it waits for a reason of its own
				continue
			}
			if !behind.decided() {
				behind = waitFor(ReasonPriority, fmt.Sprintf("waits behind higher-priority job %q (backfill is off)", blockedBy.ID))
			}
			st.recordWait(slot, behind)
			continue
		}
		made := len(st.reservations.made) - st.retracted
		if st.cfg.Reserve == nil && made >= maxReservations && st.cfg.BackfillOrder == ShortestFirst {
			if !st.preempts(j) {
				later = append(later, slot)
				continue
			}
			// A job that may preempt has its turn in its place, without a
			// reservation: the disruption budget serves preemptors in
			// priority order, kept promises behind it included, and GPUs
			// that evictions free go to the first job that can use them
			// (see awaitEvictions), not to the shortest.
			st.recordWait(slot, st.try(j, false))
			continue
		}
		mayReserve := made < maxReservations
		if st.cfg.Reserve != nil {
			mayReserve = st.cfg.Reserve.Reserve(j, made)
		}
		s := st.try(j, mayReserve)
		st.recordWait(slot, s)
		if s.blocks() && blockedBy == nil {
			blockedBy = j
		}
	}
	for startAhead > 0 {
		startAhead = st.startKeptNow(st.queue[:startAhead])
	}
	st.backfillShortestFirst(later)
	return nil
}

// mayStartOn reports whether a reservation taken off pl may let a job
// start now that could not before: some GPU of pl is free now, or nodes
// limit CPU or memory (the reservation's share of its nodes' frees from
// its start, which a run from now on their other GPUs may need). A run
// from now needs every GPU it takes free now, and a reservation taken out
// frees nothing else, so otherwise no job gains a start now from it.
func (st *stepState) mayStartOn(pl gang.Placement) bool {
	return st.ix.Limited() || st.freeNow(pl)
}

// freeNow reports whether some GPU of pl is free now.
func (st *stepState) freeNow(pl gang.Placement) bool {
	for _, sl := range pl.Slots {
		if sl.GPUs&st.ix.FreeSet(sl.Node) != 0 {
			return true
		}
	}
	return false
}

// backfillShortestFirst gives the jobs after the reservations that may
// not preempt (their slots, in priority order) their turns, without a
// reservation, shortest time limit first (no limit last). Those that may
// preempt had their turns in their places (see schedule).
func (st *stepState) backfillShortestFirst(later []int32) {
	slices.SortStableFunc(later, func(a, b int32) int {
		return cmp.Compare(runLength(st.pending[a].TimeLimit), runLength(st.pending[b].TimeLimit))
	})
	for _, slot := range later {
		st.recordWait(slot, st.try(st.pending[slot], false))
	}
}

// try is one job's turn: each stage decides j or passes it on to the
// next, and the last says why it waits. A gang that names no GPU type
// goes through the stages type by type (tryOneType). mayReserve says whether j may be
// given a reservation by the backfill mode (a preempting job may claim
// one regardless: see claim).
func (st *stepState) try(j *Job, mayReserve bool) status {
	req, s := st.admit(j)
	if s.decided() {
		return s
	}
	if st.oneType(j, req) {
		return st.tryOneType(j, req, mayReserve)
	}
	d := st.hold(j)
	key := st.shapeOf(j, req, d)
	if s := st.placeNowWithinShadows(j, req, d, key); s.decided() {
		return s
	}
	if s := st.preempt(j, req, d, mayReserve); s.decided() {
		return s
	}
	if mayReserve {
		if s := st.reserveWithinHorizon(j, req, d); s.decided() {
			return s
		}
	}
	return st.budgetWait(j, st.whyWaits(j, req, d, key, mayReserve && st.horizon != backfill.Forever))
}

// admit runs the checks that concern j alone, in order: a GPU type the
// cluster has, a shape it can ever hold, the admission policy (quotas).
// The first that fails refuses j; otherwise the status is undecided. It
// returns j's gang request either way.
func (st *stepState) admit(j *Job) (gang.Request, status) {
	if j.ID == st.target && !st.turn.seen {
		st.turn = turn{seen: true, inUse: st.inUse[j.Team]}
	}
	req, ok := st.request(j)
	if s := knownType(j, ok); s.decided() {
		return req, s
	}
	if s := st.satisfiable(j, req); s.decided() {
		return req, s
	}
	if s := st.eligibleSatisfiable(j, req); s.decided() {
		return req, s
	}
	return req, st.admitted(j)
}

// orderPending lists the pending jobs by ID (st.pending) and their slots
// in the order of Config.Order (st.queue), and makes room for their
// waits. A custom Orderer must return a permutation of the jobs it is
// given (sorted by ID); else ErrPolicyOrder.
func (st *stepState) orderPending() error {
	byID := make([]*Job, 0, len(st.snap.Jobs))
	for i := range st.snap.Jobs {
		if st.snap.Jobs[i].State == Pending {
			byID = append(byID, &st.snap.Jobs[i])
		}
	}
	slices.SortFunc(byID, func(a, b *Job) int { return strings.Compare(a.ID, b.ID) })
	st.pending = byID
	st.waits = make([]Wait, len(byID))
	switch o := st.cfg.order().(type) {
	case Multifactor:
		st.queue = o.slots(st.snap, byID, st.tiers)
	case *Multifactor:
		st.queue = o.slots(st.snap, byID, st.tiers)
	case TierOrder:
		st.queue = make([]int32, len(byID))
		for i := range st.queue {
			st.queue[i] = int32(i)
		}
		slices.SortStableFunc(st.queue, func(a, b int32) int { return compareTierOrder(byID[a], byID[b], st.tiers) })
	default:
		queue, err := slotsInOrder(o, st.snap, byID)
		if err != nil {
			return err
		}
		st.queue = queue
	}
	return nil
}

// slots returns the indices of the jobs byID in m's order, an unset tier
// counting as the lowest of tiers.
func (m Multifactor) slots(s *Snapshot, byID []*Job, tiers int) []int32 {
	keys := m.orderKeys(s, byID, tiers)
	slots := make([]int32, len(keys))
	for k, key := range keys {
		slots[k] = key.i
	}
	return slots
}

// slotsInOrder orders the jobs byID with a custom Orderer and returns
// their indices in its order, checking that it returned a permutation.
func slotsInOrder(o Orderer, snap *Snapshot, byID []*Job) ([]int32, error) {
	jobs := slices.Clone(byID)
	o.Order(snap, jobs)
	if len(jobs) != len(byID) {
		return nil, ErrPolicyOrder
	}
	slotOf := make(map[*Job]int32, len(byID))
	for i, j := range byID {
		slotOf[j] = int32(i)
	}
	seen := make([]bool, len(byID))
	slots := make([]int32, len(jobs))
	for k, j := range jobs {
		slot, ok := slotOf[j]
		if !ok || seen[slot] {
			return nil, ErrPolicyOrder
		}
		seen[slot] = true
		slots[k] = slot
	}
	return slots, nil
}
