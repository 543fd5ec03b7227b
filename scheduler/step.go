package scheduler

import (
	"fmt"
	"hash/maphash"
	"slices"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
)

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
	// noMemo turns off the shortcuts of preemption (the memos of failed
	// victim searches and of jobs that waited, and deciding without a
	// search when waiting is as fast as any preemption) so that every job
	// that may preempt searches for victims itself: tests compare the two
	// to check that the shortcuts change no decision.
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
// FairShare.Algorithm is none of the constants yields an error naming
// the field (not a *ValidationError) and no decision.
//
// The pipeline: validate; build the free-capacity index from the nodes
// minus the GPUs held by running and evicting jobs; evict running jobs
// on down nodes and past their time limit; order the pending jobs; then,
// job by job, place it now if it fits without delaying a reservation,
// else give it a reservation if the backfill mode has one left for it,
// else record why it waits.
func (s *Scheduler) Step(snap *Snapshot) (*Decision, error) {
	st, err := s.step(snap, "")
	if err != nil {
		return nil, err
	}
	return st.decision(), nil
}

// builtinOrder reports whether o is nil or one of the package's own
// orders, which are known not to modify the snapshot.
func builtinOrder(o Orderer) bool {
	switch o.(type) {
	case nil, TierOrder, Multifactor, *Multifactor:
		return true
	}
	return false
}

// step runs the pipeline on snap and returns its state, for Step and
// Explain. When target names a job, the run records what the Step had
// decided when that job's turn came (see turn).
func (s *Scheduler) step(snap *Snapshot, target string) (*stepState, error) {
	if err := s.cfg.checkModes(); err != nil {
		return nil, err
	}
	c, err := validate(snap, s.cfg.tiers())
	if err != nil {
		return nil, err
	}
	custom := !builtinOrder(s.cfg.Order) || s.cfg.Admit != nil || s.cfg.Victims != nil || s.cfg.Pack != nil || s.cfg.Spread != nil || s.cfg.Reserve != nil || s.cfg.Domains != nil
	var seed maphash.Seed
	var before uint64
	if custom {
		seed = maphash.MakeSeed()
		before = fingerprint(seed, snap)
	}
	st, err := newStepState(&s.cfg, snap, c)
	if err != nil {
		return nil, err
	}
	st.target = target
	st.noMemo = s.noMemo
	err = func() (err error) {
		if custom {
			// A policy that changes the snapshot can leave it in a state
			// Step does not expect and make it panic before the check
			// below: that is the policy's broken contract, not a crash.
			defer func() {
				if p := recover(); p != nil {
					if fingerprint(seed, snap) == before {
						panic(p)
					}
					err = ErrPolicyModifiedSnapshot
				}
			}()
		}
		st.evict()
		return st.schedule()
	}()
	if err != nil {
		return nil, err
	}
	if custom && fingerprint(seed, snap) != before {
		return nil, ErrPolicyModifiedSnapshot
	}
	return st, nil
}

// schedule walks the pending jobs in order.
func (st *stepState) schedule() error {
	jobs, err := st.pendingJobs()
	if err != nil {
		return err
	}
	st.order = jobs
	maxResv := st.cfg.reservations()
	var blockedBy *Job // first blocked job, for strict order
	var strictMsg string
	var later []*Job
	for _, j := range jobs {
		if st.cfg.Backfill == NoBackfill && blockedBy != nil {
			if _, ok := st.admissible(j); !ok {
				continue // it waits for a reason of its own, recorded
			}
			if strictMsg == "" {
				strictMsg = fmt.Sprintf("waits behind higher-priority job %q (backfill is off)", blockedBy.ID)
			}
			st.wait(j, ReasonPriority, strictMsg, time.Time{})
			continue
		}
		if st.cfg.Reserve == nil && len(st.reserve) >= maxResv && st.cfg.BackfillOrder == ShortestFirst {
			later = append(later, j)
			continue
		}
		may := len(st.reserve) < maxResv
		if st.cfg.Reserve != nil {
			may = st.cfg.Reserve.Reserve(j, len(st.reserve))
		}
		if st.try(j, may) == blocked && blockedBy == nil {
			blockedBy = j
		}
	}
	if len(later) > 0 {
		// While evictions are under way, jobs that may preempt are tried
		// in priority order first: GPUs that evictions free go to the first
		// job that can use them (see awaitEvictions), not to the shortest.
		if st.evicting != nil {
			rest := later[:0]
			for _, j := range later {
				if st.preempts(j) {
					_ = st.try(j, false)
				} else {
					rest = append(rest, j)
				}
			}
			later = rest
		}
		slices.SortStableFunc(later, func(a, b *Job) int {
			return compareDur(dur(a.TimeLimit), dur(b.TimeLimit))
		})
		for _, j := range later {
			_ = st.try(j, false)
		}
	}
	return nil
}

func compareDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// outcome is what try did with a job.
type outcome uint8

// admissible runs the checks that concern j alone: a GPU type the
// cluster has, a shape it can ever hold, the team's quota. When one fails
// it records why j waits and reports false.
func (st *stepState) admissible(j *Job) (gang.Request, bool) {
	if j.ID == st.target && !st.turn.seen {
		st.turn = turn{seen: true, inUse: st.inUse[j.Team]}
	}
	req, ok := st.request(j)
	if !ok {
		st.wait(j, ReasonGPUType, fmt.Sprintf("no node has GPU type %q", j.GPUType), time.Time{})
		return req, false
	}
	if why := st.never(j, req); why != "" {
		st.wait(j, ReasonUnsatisfiable, why, time.Time{})
		return req, false
	}
	if why := st.overQuota(j); why != "" {
		st.wait(j, ReasonQuota, why, time.Time{})
		return req, false
	}
	return req, true
}

// try places, reserves or explains one job.
func (st *stepState) try(j *Job, mayReserve bool) outcome {
	req, ok := st.admissible(j)
	if !ok {
		return skipped
	}
	d := st.hold(j)
	key := shapeKey{class: req.Class, g: req.GPUsPerMember, req: req.Required, pre: req.Preferred, mode: int32(j.Placement), spread: req.SpreadLevel, blocks: st.blocks(d), resv: len(st.reserve)}
	if m, known := st.noFit[key]; !known || j.Members < m {
		var pl gang.Placement
		var out gang.Outcome
		if j.Placement == Spread && j.Group != "" {
			pl, out = st.placeApart(j, req, d)
		} else {
			pl, out = st.prof.PlaceNow(req, d, st.scorer(j))
		}
		if out == gang.Placed {
			st.placed(j, pl)
			return placed
		}
		st.noFit[key] = j.Members
	}
	if st.preempts(j) {
		if done := st.preempt(j, req, d, mayReserve); done {
			return blocked
		}
	}
	if mayReserve {
		by := st.horizon
		if by >= 0 {
			if start, ok := st.prof.EarliestBy(req, d, st.scorer(j), 0, by); ok {
				st.reserveAt(j, start.Placement, start.At, d)
				return blocked
			}
		}
		if by != backfill.Forever {
			st.explain(j, req, d, key)
			st.beyondHorizon(j)
			return blocked
		}
	}
	st.explain(j, req, d, key)
	return blocked
}

// beyondHorizon adds to the message of j, which waits for GPUs, that no
// start was found within the planning horizon: Config.Horizon, or the
// end of year 9999 when that comes first (see lastStartFor).
func (st *stepState) beyondHorizon(j *Job) {
	w := &st.waits[st.rank[st.index(j)]]
	if w.Reason != ReasonInsufficientGPUs && w.Reason != ReasonTopology {
		return
	}
	if st.cfg.Horizon > 0 && st.cfg.Horizon == st.horizon {
		w.Message += fmt.Sprintf("; no start within the %s planning horizon", formatDuration(st.cfg.Horizon))
	} else {
		w.Message += "; no start before the end of year 9999"
	}
}
