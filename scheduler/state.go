package scheduler

import (
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// stepState is what one Step knows and has decided so far. The pipeline
// (step.go) fills it job by job; what it remembers only to answer faster
// is in memo, and the preemption candidates are in pool.
type stepState struct {
	cfg     *Config
	snap    *Snapshot
	ix      *topology.Index   // free GPUs now: nodes minus held and placed
	profile *backfill.Profile // free GPUs over time: ix, releases, reservations
	matrix  preempt.Matrix    // the preemption matrix in force
	tiers   int               // the policy's number of tiers (Config.Tiers resolved)
	levels  map[string]int    // topology level name to its index

	// decided collects the placements, evictions and reservations made;
	// waits holds the wait of each pending job that neither starts nor
	// holds a reservation, by its slot (place in ID order).
	decided Decision
	waits   []Wait

	held []heldJob // running and evicting jobs, by ID
	// pending lists the pending jobs by ID: a job's index there is its
	// slot, where its wait is recorded; queue is their slots in priority
	// order.
	pending []*Job
	queue   []int32

	// quotas by team, and GPUs each team holds or was promised: running
	// jobs not being evicted, this Step's placements and reservations;
	// reserved is the part of inUse that this Step's reservations promise.
	quotas map[string]*Quota
	inUse  map[string]int
	// inUseRes is, per team, the CPU and memory of the jobs inUse counts
	// (for CPU and memory quotas); nil until a job asks for some.
	inUseRes map[string][2]int64
	reserved map[string]int

	// groups counts, per service group, its members on each node.
	groups map[string]*groupPlaces
	// eligible is the jobs' lists of eligible nodes, resolved (eligible.go).
	eligible eligibility

	// reservations is the ledger of this Step's reservations.
	reservations reservations
	// promises holds, by slot, the plan's entries for pending jobs (nil
	// without a plan); retracted counts the kept reservations taken back
	// when their job moved earlier (see promises.go).
	promises  map[int32]*promise
	retracted int
	// repinFailed lists the repins in jobs' turns that failed since the
	// last that succeeded (see repinTurn); repinFailures counts the
	// repins that failed (see maxRepinFailures).
	repinFailed   []failedRepin
	repinFailures int
	repinMoves    int // reservations that repins moved to other GPUs
	// walked, when not nil (in tests), counts the entries that the walks
	// of a Step with a plan look at: reservations in a node's list
	// (collectHolders) and victim candidates (spare).
	walked *int

	// evictionsEnd is the latest offset at which a job being evicted
	// (this Step's victims included) is gone.
	evictionsEnd time.Duration
	// evicting holds, by node, the GPUs of jobs being evicted other than
	// this Step's preemption victims (those the snapshot shows evicting,
	// and those this Step evicts at their time limit or on a down node),
	// and evictingEnd the latest offset at which one of those is gone:
	// the window in which awaitEvictions reserves for waiting preemptors.
	evicting    map[topology.NodeID]topology.GPUSet
	evictingEnd time.Duration
	// promised holds the GPUs of evicting that a reservation has taken;
	// freeing counts the healthy GPUs of ready nodes in evicting that no
	// reservation has taken: idle once their jobs are gone.
	promised map[topology.NodeID]topology.GPUSet
	freeing  int

	// pool holds the preemption candidates, built on first use.
	pool candidatePool
	// budget is the account of the disruption budget (budget.go).
	budget budget
	// wake is what nextWake is made of (wake.go).
	wake wake

	// lastStart is the offset of the last start a decision can write (see
	// lastStartFor), -1 when now is past it; horizon is the latest start
	// reservations are planned to: Config.Horizon when set and earlier,
	// else lastStart. Both are Forever when no bound applies.
	lastStart time.Duration
	horizon   time.Duration

	// target is the job Explain asks about, and turn what the Step had
	// decided when its turn came.
	target string
	turn   turn

	// memo is nil when memoization is off (Scheduler.noMemo).
	memo *stepMemo
	// typesFor caches, per gang shape, the GPU types whose ready nodes
	// could hold it (see typesThatHold); nil until a gang needs it.
	typesFor map[oneTypeKey]oneTypeFit
}

// turn is what a Step had decided when the target job's turn came: the
// GPUs the job's team held, and the reservations it could delay.
type turn struct {
	seen  bool
	inUse int
	// delays names the reservations a behind-reservation job could
	// delay, as its message does (see delays).
	delays []string
}

// newStepState starts a Step on snap, which validate checked, learning c:
// it takes the GPUs of running and evicting jobs out of c's index.
func newStepState(cfg *Config, snap *Snapshot, c checked, memoize bool) (*stepState, error) {
	ix := c.ix
	st := &stepState{cfg: cfg, snap: snap, ix: ix, levels: map[string]int{},
		quotas: map[string]*Quota{}, inUse: map[string]int{},
		groups: map[string]*groupPlaces{},
		matrix: cfg.matrix(), tiers: cfg.tiers(), lastStart: lastStartFor(snap.Now), wake: wake{now: snap.Now}}
	if memoize {
		st.memo = newStepMemo()
	}
	st.horizon = st.lastStart
	if cfg.Horizon > 0 && cfg.Horizon < st.horizon {
		st.horizon = cfg.Horizon
	}
	for i := range snap.Teams {
		if q := snap.Teams[i].Quota; q != nil {
			st.quotas[snap.Teams[i].Name] = q
		}
	}
	for i, l := range snap.Cluster.Levels {
		st.levels[l] = i
	}
	st.held = st.heldJobs(c.nodes)
	for _, h := range st.held {
		j := h.Job
		if j.State == Running {
			st.addInUse(j, 1) // evicting jobs are leaving
		}
	}
	// Hold running allocations with one TakeSet per node, and their CPU
	// and memory.
	for n, s := range c.held {
		if s != 0 {
			if err := ix.TakeSet(topology.NodeID(n), s); err != nil {
				return nil, &ValidationError{Field: "jobs", Msg: err.Error()}
			}
		}
	}
	if ix.Limited() {
		for _, h := range st.held {
			for _, hold := range h.holds {
				ix.AddUse(hold.Node, hold.CPUMillis, hold.MemoryMiB)
			}
		}
	}
	st.profile = backfill.NewProfile(ix)
	return st, nil
}

// heldJob is a running or evicting job and the node and GPUs of each
// entry of its allocation, read once when the Step starts: policies run
// later, and a policy that changes the snapshot must not change what the
// Step holds (Step reports the change when the policies are done).
type heldJob struct {
	*Job
	holds []preempt.Hold
}

// heldJobs returns the running and evicting jobs, by ID, given the node
// of every allocation entry of every job in snapshot order.
func (st *stepState) heldJobs(nodes []topology.NodeID) []heldJob {
	var out []heldJob
	holds := make([]preempt.Hold, len(nodes))
	at := 0
	for i := range st.snap.Jobs {
		j := &st.snap.Jobs[i]
		k := len(j.Allocation)
		for e, a := range j.Allocation {
			holds[at+e] = preempt.Hold{Node: nodes[at+e], GPUs: topology.SetOf(a.GPUs...)}
			if j.CPUMillis > 0 || j.MemoryMiB > 0 {
				// The members on the node: its GPUs over the member's, a
				// part member counted whole.
				m := int64(1)
				if g := j.GPUsPerMember; g > 0 {
					m = int64(max((len(a.GPUs)+g-1)/g, 1))
				}
				holds[at+e].CPUMillis, holds[at+e].MemoryMiB = m*int64(j.CPUMillis), m*int64(j.MemoryMiB)
			}
		}
		if j.State != Pending {
			out = append(out, heldJob{Job: j, holds: holds[at : at+k : at+k]})
		}
		at += k
	}
	slices.SortFunc(out, func(a, b heldJob) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// evict evicts running jobs on down nodes and past their time limit,
// tells the profile when every held GPU frees up, and counts the places
// of the service groups' running jobs that stay.
func (st *stepState) evict() {
	for _, h := range st.held {
		j := h.Job
		end, leaving := st.release(h)
		if leaving {
			st.evictionsEnd = max(st.evictionsEnd, end)
			if j.State == Running {
				st.addInUse(j, -1)
			}
		}
		for _, hold := range h.holds {
			st.profile.AddReleaseUse(hold.Node, hold.GPUs, end, hold.CPUMillis, hold.MemoryMiB)
			if leaving {
				st.addEvicting(hold.Node, hold.GPUs, end)
			} else if j.Group != "" {
				// A replica that stays keeps its place in the group; one
				// evicted now is leaving, as evicting ones are.
				st.addGroup(j.Group, hold.Node, hold.GPUs.Len()/j.GPUsPerMember)
			}
		}
	}
}

// release decides when h's GPUs free up (an offset; Forever when no end is
// known) and whether h is leaving: evicted before, or evicted now, which
// it records:
//
//	state     condition                               evicts now   frees at
//	evicting  no EvictedAt                            -            0
//	evicting  EvictedAt                               -            EvictedAt + grace
//	running   on a down node                          node-down    0
//	running   past its limit, limits enforced         time-limit   now + grace
//	running   past its limit, limits ignored          -            Forever
//	running   before its limit                        -            limit + grace at limit
//	running   no limit                                -            Forever
func (st *stepState) release(h heldJob) (end time.Duration, leaving bool) {
	j := h.Job
	if j.State == Evicting {
		if j.EvictedAt.IsZero() {
			return 0, true
		}
		st.wake.at(j.EvictedAt.Add(j.CheckpointGrace))
		return st.offset(j.EvictedAt.Add(j.CheckpointGrace)), true
	}
	if st.onDownNode(h) {
		st.decided.Evictions = append(st.decided.Evictions, Eviction{Job: j.ID, Reason: EvictNodeDown, Requeue: true})
		return 0, true
	}
	if j.TimeLimit <= 0 {
		return backfill.Forever, false
	}
	limitAt := st.limitAt(j)
	if limitAt.After(st.snap.Now) {
		if !j.Started.IsZero() {
			// Evicted, or without a known end, from then.
			st.wake.atNow(limitAt)
			st.wake.at(limitAt.Add(st.graceAtLimit(j)))
		}
		return st.offset(limitAt.Add(st.graceAtLimit(j))), false
	}
	if st.cfg.IgnoreTimeLimits {
		return backfill.Forever, false // past a limit not enforced: no known end
	}
	st.decided.Evictions = append(st.decided.Evictions, Eviction{Job: j.ID, Reason: EvictTimeLimit, Grace: j.CheckpointGrace})
	st.wake.from(j.CheckpointGrace) // stepped later, the same snapshot evicts it later
	return st.offset(st.snap.Now.Add(j.CheckpointGrace)), true
}

// onDownNode reports whether any of h's GPUs is on a down node.
func (st *stepState) onDownNode(h heldJob) bool {
	for _, hold := range h.holds {
		if st.ix.State(hold.Node) == topology.Down {
			return true
		}
	}
	return false
}

// result is the Step's decision, every list sorted by job ID. It is the
// state's last word: called once, it hands over the waits.
func (st *stepState) result() *Decision {
	d := st.decided
	slices.SortFunc(d.Placements, func(a, b Placement) int { return strings.Compare(a.Job, b.Job) })
	slices.SortFunc(d.Evictions, func(a, b Eviction) int { return strings.Compare(a.Job, b.Job) })
	if st.retracted > 0 {
		d.Reservations = slices.DeleteFunc(d.Reservations, func(r Reservation) bool { return r.Job == "" })
	}
	slices.SortFunc(d.Reservations, func(a, b Reservation) int { return strings.Compare(a.Job, b.Job) })
	d.NextWake = st.nextWake(&d)
	st.explainMoves(&d)
	// The waits of jobs that neither start nor hold a reservation, in
	// ID order, compacted where they are. When few jobs wait, they are
	// copied out so that the decision does not keep the whole array
	// alive.
	k := 0
	for _, w := range st.waits {
		if w.Job != "" {
			st.waits[k] = w
			k++
		}
	}
	if k < len(st.waits)/2 {
		d.Pending = slices.Clone(st.waits[:k])
	} else {
		clear(st.waits[k:])
		d.Pending = st.waits[:k:k]
	}
	st.waits = nil
	return &d
}

// Time: the profile counts in offsets from now.

// offset converts an absolute time to an offset from now for the profile;
// times at or before now become 0. Held GPUs released at 0 (a job being
// evicted whose grace is over) are usable for a reservation from now, but
// no job is placed on them now: the profile keeps them held in its index.
func (st *stepState) offset(t time.Time) time.Duration {
	return max(t.Sub(st.snap.Now), 0)
}

// at converts a profile offset to a time; offsets are exact, so a start
// never comes before the GPUs it needs are free.
func (st *stepState) at(off time.Duration) time.Time {
	return st.snap.Now.Add(off)
}

// lastStartFor is the offset from now of the last time a decision can
// write: RFC 3339 has four-digit years, so the end of year 9999 in UTC,
// or in now's time zone when that comes first (east of UTC). It is -1
// when now is already past it (a snapshot made in Go may say so), and
// Forever when it lies further ahead than a time.Duration reaches (about
// 292 years). A start, or an estimated start, past it is beyond the
// planning horizon.
func lastStartFor(now time.Time) time.Duration {
	end := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	if local := time.Date(9999, 12, 31, 23, 59, 59, 999999999, now.Location()); local.Before(end) {
		end = local
	}
	if now.After(end) {
		return -1
	}
	return end.Sub(now) // saturates at Forever
}

// runLength is a time limit as a length of run: Forever for none (0).
func runLength(limit time.Duration) time.Duration {
	if limit <= 0 {
		return backfill.Forever
	}
	return limit
}

// hold is how long j holds its GPUs once started: its time limit, plus,
// when limits are enforced, the checkpoint grace of the eviction at the
// limit; Forever without a limit. The profile frees a running job's GPUs,
// and keeps a job placed now clear of reservations, for that long.
func (st *stepState) hold(j *Job) time.Duration {
	return addDur(runLength(j.TimeLimit), st.graceAtLimit(j))
}

// graceAtLimit is the grace of j's eviction at its time limit: its
// checkpoint grace when limits are enforced, else 0.
func (st *stepState) graceAtLimit(j *Job) time.Duration {
	if st.cfg.IgnoreTimeLimits {
		return 0
	}
	return j.CheckpointGrace
}

// limitAt is when running job j reaches its time limit: started plus
// the limit, or now plus the limit when the host did not say when it
// started.
func (st *stepState) limitAt(j *Job) time.Time {
	if j.Started.IsZero() {
		return st.snap.Now.Add(j.TimeLimit)
	}
	return j.Started.Add(j.TimeLimit)
}

// addDur is a + b, saturating at Forever; either being Forever gives
// Forever.
func addDur(a, b time.Duration) time.Duration {
	if a == backfill.Forever || b == backfill.Forever || a > backfill.Forever-b {
		return backfill.Forever
	}
	return a + b
}

// addInUse counts job j (sign 1) or stops counting it (sign -1) in its
// team's use: its GPUs and, when it asks for some, its CPU and memory.
func (st *stepState) addInUse(j *Job, sign int) {
	st.inUse[j.Team] += sign * j.GPUs()
	if j.CPUMillis == 0 && j.MemoryMiB == 0 {
		return
	}
	if st.inUseRes == nil {
		st.inUseRes = map[string][2]int64{}
	}
	r := st.inUseRes[j.Team]
	m := int64(sign) * int64(j.Members)
	st.inUseRes[j.Team] = [2]int64{r[0] + m*int64(j.CPUMillis), r[1] + m*int64(j.MemoryMiB)}
}
