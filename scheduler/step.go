package scheduler

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
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
	r, err := s.step(snap, "")
	if err != nil {
		return nil, err
	}
	return r.decision(), nil
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
func (s *Scheduler) step(snap *Snapshot, target string) (*run, error) {
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
	r, err := newRun(&s.cfg, snap, c)
	if err != nil {
		return nil, err
	}
	r.target = target
	r.noMemo = s.noMemo
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
		r.evict()
		return r.schedule()
	}()
	if err != nil {
		return nil, err
	}
	if custom && fingerprint(seed, snap) != before {
		return nil, ErrPolicyModifiedSnapshot
	}
	return r, nil
}

// run is the state of one Step.
type run struct {
	cfg     *Config
	snap    *Snapshot
	ix      *topology.Index
	prof    *backfill.Profile
	d       Decision
	levels  map[string]int
	reserve []resvInfo
	starts  []time.Duration // reservation starts, sorted
	live    []int32         // reservations that may hold GPUs free now: see delays
	// byClass holds, per GPU class, the reservations on its nodes (their
	// indices in reserve) and their starts, sorted: the reservations a
	// job of that class could delay.
	byClass map[topology.Class]*classResv
	// target is the job Explain asks about, and turn what the Step had
	// decided when its turn came.
	target string
	turn   turn
	// memo of shapes known not to fit now, by shape and blocking class.
	noFit map[shapeKey]int
	// quotas by team, and GPUs each team holds or was promised: running
	// jobs not being evicted, this Step's placements and reservations;
	// reserved is the part of inUse that this Step's reservations promise.
	quotas   map[string]*Quota
	inUse    map[string]int
	reserved map[string]int
	// most members of a shape that fit the empty cluster.
	most map[shapeKey]int
	// memo of shapes known not to fit now even ignoring reservations.
	noFitAtAll map[shapeKey]int
	// preemption candidates (running jobs by ID) and those already
	// chosen.
	cands    []preempt.Candidate
	candJobs []*Job
	held     []heldJob // running and evicting jobs, by ID
	idxBuf   []int
	subBuf   []preempt.Candidate
	gone     []bool // by candidate
	// byGrace lists the candidates by grace, longest first; graceAt
	// holds, per preemptor tier, the place in it of the first candidate
	// that tier may still preempt. Candidates only leave (as victims),
	// so each place only moves forward.
	byGrace []int
	graceAt []int
	// noVictims remembers, per shape and tier, the searches that found
	// no victims: a job with at least as many members and at least as long
	// a window (so that at least the same GPUs are reserved for others)
	// finds none either, with the default selector (a custom one is asked
	// every time: see preemptOnce).
	noVictims map[preemptKey][]noVictims
	// waited remembers, per shape, tier, members and run, the state (see
	// changes) in which preempt last reported false for such a job, which
	// it does without changing anything: a job alike, in the same state,
	// fares the same.
	waited map[waitKey]int
	noMemo bool // tests only: search for every job (see Scheduler)
	// sel is the default victim selector, whose scratch space serves
	// every search of the Step.
	sel preempt.Selector
	// delayMsg caches the behind-reservation message that names the
	// delayed reservations.
	delayMsg map[delayKey]string
	// matrix is the preemption matrix in force.
	matrix preempt.Matrix
	// order is the pending jobs in priority order.
	order []*Job
	// groups counts, per service group, its members on each node.
	groups map[string]map[topology.NodeID]int
	// evictEnd is the latest offset at which a job being evicted is gone;
	// freeing counts the healthy GPUs of ready nodes in evicting that no
	// reservation has taken: idle once their jobs are gone.
	evictEnd time.Duration
	freeing  int
	// evicting holds, by node, the GPUs of jobs being evicted other than
	// this Step's preemption victims (those the snapshot shows evicting,
	// and those this Step evicts at their time limit or on a down node),
	// and evictingEnd the latest offset at which one of those is gone:
	// the window in which awaitEvictions reserves for waiting preemptors.
	evicting    map[topology.NodeID]topology.GPUSet
	evictingEnd time.Duration
	// promised holds the GPUs of evicting that a reservation has taken.
	promised map[topology.NodeID]topology.GPUSet
	// pending jobs' places in ID order, and their waits in that order.
	rank  []int32 // by snapshot index: place in ID order, -1 if not pending
	waits []Wait
	// messages already formatted, by what they say.
	msgs map[msgKey]string
	// lastStart is the offset of the last start a decision can write (see
	// lastStartFor), -1 when now is past it; horizon is the latest start
	// reservations are planned to: Config.Horizon when set and earlier,
	// else lastStart. Both are Forever when no bound applies.
	lastStart time.Duration
	horizon   time.Duration
}

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

type msgKey struct {
	why              Reason
	m, g, free, room int
	typ, required    string
}

type resvInfo struct {
	job   string
	start time.Duration
	end   time.Duration
	slots []gang.Slot // the GPUs reserved
}

// classResv is the reservations on the nodes of one GPU class.
type classResv struct {
	reserve []int32         // indices in run.reserve, in the order made
	starts  []time.Duration // their starts, sorted
	live    []int32         // those that may hold GPUs free now: see delays
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

// delayKey identifies the behind-reservation messages that are alike:
// the job's class and GPUs per member (a job can delay only the
// reservations that hold free GPUs on a node with room for a member: see
// delays), (for that class) how many reservations start within its run
// out of how many were made, and how many jobs were placed (which leaves
// the same GPUs free).
type delayKey struct {
	class               topology.Class
	g                   int32 // not int: the key has no padding (see shapeKey)
	blocks, all, placed int
}

// shapeKey identifies jobs that fit or fail alike. blocks and resv pin
// down the reservations a job must respect: with resv reservations made
// so far, the blocks of them that start within its run are the blocks
// earliest-starting ones, the same set for every job with equal counts.
//
// The keys of the Step's memos have no padding between or after their
// fields: a map then hashes a key as one block of memory, where padding
// makes it hash each run of fields apart, which several lookups per
// pending job come to feel.
type shapeKey struct {
	class  topology.Class
	mode   int32 // the job's PlacementMode: the GPUs of a start, so whether preempt claims it, depend on it
	g      int
	req    int
	pre    int
	spread int // the request's SpreadLevel: it too chooses a start's GPUs (for the preemption memos; whether a job fits does not depend on it)
	blocks int
	resv   int
}

// newRun starts a Step on snap, which validate checked, learning c.
func newRun(cfg *Config, snap *Snapshot, c checked) (*run, error) {
	ix := c.ix
	r := &run{cfg: cfg, snap: snap, ix: ix, levels: map[string]int{}, noFit: map[shapeKey]int{},
		quotas: map[string]*Quota{}, inUse: map[string]int{}, most: map[shapeKey]int{}, noFitAtAll: map[shapeKey]int{},
		msgs: map[msgKey]string{}, noVictims: map[preemptKey][]noVictims{}, waited: map[waitKey]int{},
		groups: map[string]map[topology.NodeID]int{}, delayMsg: map[delayKey]string{},
		matrix: cfg.matrix(), lastStart: lastStartFor(snap.Now)}
	r.horizon = r.lastStart
	if cfg.Horizon > 0 && cfg.Horizon < r.horizon {
		r.horizon = cfg.Horizon
	}
	for i := range snap.Teams {
		if q := snap.Teams[i].Quota; q != nil {
			r.quotas[snap.Teams[i].Name] = q
		}
	}
	for i, l := range snap.Cluster.Levels {
		r.levels[l] = i
	}
	r.held = r.heldJobs(c.nodes)
	for _, h := range r.held {
		j := h.Job
		if j.State == Running {
			r.inUse[j.Team] += j.GPUs() // evicting jobs are leaving
		}
	}
	// Hold running allocations with one TakeSet per node.
	for n, s := range c.held {
		if s != 0 {
			if err := ix.TakeSet(topology.NodeID(n), s); err != nil {
				return nil, &ValidationError{Field: "jobs", Msg: err.Error()}
			}
		}
	}
	r.prof = backfill.NewProfile(ix)
	return r, nil
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
// of every allocation entry of every job in snapshot order; newRun keeps
// them in r.held.
func (r *run) heldJobs(nodes []topology.NodeID) []heldJob {
	var out []heldJob
	holds := make([]preempt.Hold, len(nodes))
	at := 0
	for i := range r.snap.Jobs {
		j := &r.snap.Jobs[i]
		k := len(j.Allocation)
		for e, a := range j.Allocation {
			holds[at+e] = preempt.Hold{Node: nodes[at+e], GPUs: topology.SetOf(a.GPUs...)}
		}
		if j.State != Pending {
			out = append(out, heldJob{Job: j, holds: holds[at : at+k : at+k]})
		}
		at += k
	}
	slices.SortFunc(out, func(a, b heldJob) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// offset converts an absolute time to an offset from now for the profile;
// times at or before now become 0. Held GPUs released at 0 (a job being
// evicted whose grace is over) are usable for a reservation from now, but
// no job is placed on them now: the profile keeps them held in its index.
func (r *run) offset(t time.Time) time.Duration {
	return max(t.Sub(r.snap.Now), 0)
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

func dur(limit time.Duration) time.Duration {
	if limit <= 0 {
		return backfill.Forever
	}
	return limit
}

// hold is how long j holds its GPUs once started: its time limit, plus,
// when limits are enforced, the checkpoint grace of the eviction at the
// limit; Forever without a limit. The profile frees a running job's GPUs,
// and keeps a job placed now clear of reservations, for that long.
func (r *run) hold(j *Job) time.Duration {
	return addDur(dur(j.TimeLimit), r.graceAtLimit(j))
}

// graceAtLimit is the grace of j's eviction at its time limit: its
// checkpoint grace when limits are enforced, else 0.
func (r *run) graceAtLimit(j *Job) time.Duration {
	if r.cfg.IgnoreTimeLimits {
		return 0
	}
	return j.CheckpointGrace
}

// evict evicts running jobs on down nodes and past their time limit,
// tells the profile when every held GPU frees up, and counts the places
// of the service groups' running jobs that stay.
func (r *run) evict() {
	for _, h := range r.held {
		j := h.Job
		end := backfill.Forever
		switch j.State {
		case Evicting:
			end = r.offset(j.EvictedAt.Add(j.CheckpointGrace))
			if j.EvictedAt.IsZero() {
				end = 0
			}
		case Running:
			if down := r.downNode(h); down != "" {
				r.d.Evictions = append(r.d.Evictions, Eviction{Job: j.ID, Reason: EvictNodeDown, Requeue: true})
				end = 0
				break
			}
			if j.TimeLimit > 0 {
				limitAt := r.limitAt(j)
				if !limitAt.After(r.snap.Now) && !r.cfg.IgnoreTimeLimits { // a job with no start is not past it
					r.d.Evictions = append(r.d.Evictions, Eviction{Job: j.ID, Reason: EvictTimeLimit, Grace: j.CheckpointGrace})
					end = r.offset(r.snap.Now.Add(j.CheckpointGrace))
					break
				}
				if !limitAt.After(r.snap.Now) {
					break // past a limit not enforced: no known end
				}
				end = r.offset(limitAt.Add(r.graceAtLimit(j)))
			}
		}
		leaving := j.State == Evicting || len(r.d.Evictions) > 0 && r.d.Evictions[len(r.d.Evictions)-1].Job == j.ID
		if leaving {
			r.evictEnd = max(r.evictEnd, end)
			if j.State == Running {
				r.inUse[j.Team] -= j.GPUs()
			}
		}
		for _, hd := range h.holds {
			r.prof.AddRelease(hd.Node, hd.GPUs, end)
			if leaving {
				r.addEvicting(hd.Node, hd.GPUs, end)
			} else if j.Group != "" {
				// A replica that stays keeps its place in the group; one
				// evicted now is leaving, as evicting ones are.
				r.addGroup(j.Group, hd.Node, hd.GPUs.Len()/j.GPUsPerMember)
			}
		}
	}
}

func (r *run) downNode(h heldJob) string {
	for _, hd := range h.holds {
		if r.ix.State(hd.Node) == topology.Down {
			return r.ix.Name(hd.Node)
		}
	}
	return ""
}

// pendingJobs returns pointers to the pending jobs in scheduling order.
func (r *run) pendingJobs() ([]*Job, error) {
	jobs := make([]*Job, 0, len(r.snap.Jobs))
	for i := range r.snap.Jobs {
		if r.snap.Jobs[i].State == Pending {
			jobs = append(jobs, &r.snap.Jobs[i])
		}
	}
	slices.SortFunc(jobs, func(a, b *Job) int { return strings.Compare(a.ID, b.ID) })
	r.rank = make([]int32, len(r.snap.Jobs))
	for i := range r.rank {
		r.rank[i] = -1
	}
	for i, j := range jobs {
		r.rank[r.index(j)] = int32(i)
	}
	r.waits = make([]Wait, len(jobs))
	n := len(jobs)
	r.cfg.order().Order(r.snap, jobs)
	if len(jobs) != n {
		return nil, ErrPolicyOrder
	}
	seen := make([]bool, n)
	for _, j := range jobs {
		i := r.index(j)
		if i < 0 || r.rank[i] < 0 || seen[r.rank[i]] {
			return nil, ErrPolicyOrder
		}
		seen[r.rank[i]] = true
	}
	return jobs, nil
}

func (r *run) request(j *Job) (gang.Request, bool) {
	req := gang.NewRequest(j.Members, j.GPUsPerMember)
	c, ok := r.ix.Class(j.GPUType)
	req.Class = c
	if j.Topology.Required != "" {
		if l, has := r.levels[j.Topology.Required]; has {
			req.Required = l
		}
	}
	if j.Topology.Preferred != "" {
		if l, has := r.levels[j.Topology.Preferred]; has {
			req.Preferred = l
		}
	}
	req.Chooser = r.cfg.Domains
	if j.Placement == Spread {
		req.Distinct = true
		if l, has := r.levels[j.SpreadLevel]; has && j.SpreadLevel != "" {
			req.SpreadLevel = l
		}
	}
	return req, ok
}

func (r *run) scorer(j *Job) binpack.Scorer {
	if j.Placement == Spread {
		if r.cfg.Spread != nil {
			return r.cfg.Spread
		}
		return binpack.Spread{}
	}
	return r.cfg.Pack
}

// schedule walks the pending jobs in order.
func (r *run) schedule() error {
	jobs, err := r.pendingJobs()
	if err != nil {
		return err
	}
	r.order = jobs
	maxResv := r.cfg.reservations()
	var blockedBy *Job // first blocked job, for strict order
	var strictMsg string
	var later []*Job
	for _, j := range jobs {
		if r.cfg.Backfill == NoBackfill && blockedBy != nil {
			if _, ok := r.admissible(j); !ok {
				continue // it waits for a reason of its own, recorded
			}
			if strictMsg == "" {
				strictMsg = fmt.Sprintf("waits behind higher-priority job %q (backfill is off)", blockedBy.ID)
			}
			r.wait(j, ReasonPriority, strictMsg, time.Time{})
			continue
		}
		if r.cfg.Reserve == nil && len(r.reserve) >= maxResv && r.cfg.BackfillOrder == ShortestFirst {
			later = append(later, j)
			continue
		}
		may := len(r.reserve) < maxResv
		if r.cfg.Reserve != nil {
			may = r.cfg.Reserve.Reserve(j, len(r.reserve))
		}
		if r.try(j, may) == blocked && blockedBy == nil {
			blockedBy = j
		}
	}
	if len(later) > 0 {
		// While evictions are under way, jobs that may preempt are tried
		// in priority order first: GPUs that evictions free go to the first
		// job that can use them (see awaitEvictions), not to the shortest.
		if r.evicting != nil {
			rest := later[:0]
			for _, j := range later {
				if r.preempts(j) {
					_ = r.try(j, false)
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
			_ = r.try(j, false)
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

const (
	placed  outcome = iota
	blocked         // waits for GPUs (reserved or not): blocks strict order
	skipped         // cannot run now for reasons of its own: blocks nobody
)

// admissible runs the checks that concern j alone: a GPU type the
// cluster has, a shape it can ever hold, the team's quota. When one fails
// it records why j waits and reports false.
func (r *run) admissible(j *Job) (gang.Request, bool) {
	if j.ID == r.target && !r.turn.seen {
		r.turn = turn{seen: true, inUse: r.inUse[j.Team]}
	}
	req, ok := r.request(j)
	if !ok {
		r.wait(j, ReasonGPUType, fmt.Sprintf("no node has GPU type %q", j.GPUType), time.Time{})
		return req, false
	}
	if why := r.never(j, req); why != "" {
		r.wait(j, ReasonUnsatisfiable, why, time.Time{})
		return req, false
	}
	if why := r.overQuota(j); why != "" {
		r.wait(j, ReasonQuota, why, time.Time{})
		return req, false
	}
	return req, true
}

// try places, reserves or explains one job.
func (r *run) try(j *Job, mayReserve bool) outcome {
	req, ok := r.admissible(j)
	if !ok {
		return skipped
	}
	d := r.hold(j)
	key := shapeKey{class: req.Class, g: req.GPUsPerMember, req: req.Required, pre: req.Preferred, mode: int32(j.Placement), spread: req.SpreadLevel, blocks: r.blocks(d), resv: len(r.reserve)}
	if m, known := r.noFit[key]; !known || j.Members < m {
		var pl gang.Placement
		var out gang.Outcome
		if j.Placement == Spread && j.Group != "" {
			pl, out = r.placeApart(j, req, d)
		} else {
			pl, out = r.prof.PlaceNow(req, d, r.scorer(j))
		}
		if out == gang.Placed {
			r.placed(j, pl)
			return placed
		}
		r.noFit[key] = j.Members
	}
	if r.preempts(j) {
		if done := r.preempt(j, req, d, mayReserve); done {
			return blocked
		}
	}
	if mayReserve {
		by := r.horizon
		if by >= 0 {
			if st, ok := r.prof.EarliestBy(req, d, r.scorer(j), 0, by); ok {
				r.reserveAt(j, st.Placement, st.At, d)
				return blocked
			}
		}
		if by != backfill.Forever {
			r.explain(j, req, d, key)
			r.beyondHorizon(j)
			return blocked
		}
	}
	r.explain(j, req, d, key)
	return blocked
}

// beyondHorizon adds to the message of j, which waits for GPUs, that no
// start was found within the planning horizon: Config.Horizon, or the
// end of year 9999 when that comes first (see lastStartFor).
func (r *run) beyondHorizon(j *Job) {
	w := &r.waits[r.rank[r.index(j)]]
	if w.Reason != ReasonInsufficientGPUs && w.Reason != ReasonTopology {
		return
	}
	if r.cfg.Horizon > 0 && r.cfg.Horizon == r.horizon {
		w.Message += fmt.Sprintf("; no start within the %s planning horizon", formatDuration(r.cfg.Horizon))
	} else {
		w.Message += "; no start before the end of year 9999"
	}
}

// placed records the placement of j.
func (r *run) placed(j *Job, pl gang.Placement) {
	r.d.Placements = append(r.d.Placements, Placement{Job: j.ID, Allocation: pl.Allocation(r.ix)})
	r.inUse[j.Team] += j.GPUs()
	if j.Group != "" {
		for _, sl := range pl.Slots {
			r.addGroup(j.Group, sl.Node, sl.Members)
		}
	}
}

func (r *run) addGroup(group string, n topology.NodeID, members int) {
	m := r.groups[group]
	if m == nil {
		m = map[topology.NodeID]int{}
		r.groups[group] = m
	}
	m[n] += members
}

// placeApart places a spread job of a group away from the group's other
// members: first on nodes (or domains of its spread level) holding none
// of them, then on those holding at most one, and so on, so replicas
// double up as little as capacity allows. Within each try, its members
// go first to places holding no member of the group (gang.Request
// Occupied), so the group sits on as many places as capacity allows. Its
// last try may use every place, so it fails exactly when a placement
// without the group in view would, and it reports that try's outcome.
func (r *run) placeApart(j *Job, req gang.Request, d time.Duration) (gang.Placement, gang.Outcome) {
	nodes := r.groups[j.Group]
	if len(nodes) == 0 {
		return r.prof.PlaceNow(req, d, r.scorer(j))
	}
	lvl := req.SpreadLevel
	count := func(n topology.NodeID) int { return nodes[n] }
	most := 0
	if lvl == gang.NoLevel {
		for _, c := range nodes {
			most = max(most, c)
		}
	} else {
		doms := map[topology.DomainID]int{}
		for n, c := range nodes {
			doms[r.ix.DomainOf(lvl, n)] += c
		}
		for _, c := range doms {
			most = max(most, c)
		}
		count = func(n topology.NodeID) int { return doms[r.ix.DomainOf(lvl, n)] }
	}
	req.Occupied = func(n topology.NodeID) bool { return count(n) > 0 }
	for k := 1; k <= most; k++ {
		req.Avoid = func(n topology.NodeID) bool { return count(n) >= k }
		if pl, out := r.prof.PlaceNow(req, d, r.scorer(j)); out == gang.Placed {
			return pl, out
		}
	}
	req.Avoid = nil // every place, still off the group's first
	return r.prof.PlaceNow(req, d, r.scorer(j))
}

// preempts reports whether j's tier may preempt any tier at all.
func (r *run) preempts(j *Job) bool {
	if r.cfg.DisablePreemption {
		return false
	}
	m := r.matrix
	for v := range m.Tiers() {
		if m.CanPreempt(j.Tier, v) {
			return true
		}
	}
	return false
}

// candidates lists the running jobs that may be preempted, built on first
// use after the evictions of this Step.
func (r *run) candidates() {
	if r.candJobs != nil {
		return
	}
	r.candJobs = []*Job{}
	evicted := make(map[string]bool, len(r.d.Evictions))
	for _, e := range r.d.Evictions {
		evicted[e.Job] = true
	}
	for _, h := range r.held {
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
		if limitAt := r.limitAt(j); j.TimeLimit > 0 &&
			!limitAt.After(r.snap.Now.Add(j.CheckpointGrace)) && limitAt.After(r.snap.Now) {
			continue
		}
		// Nor is a job whose grace ends after the last start a decision
		// can write: its preemptor's reservation would start then.
		if j.CheckpointGrace > r.lastStart {
			continue
		}
		c := preempt.Candidate{ID: j.ID, Tier: j.Tier, Grace: j.CheckpointGrace,
			WorkLost: preempt.WorkSince(r.snap.Now, j.Started, time.Time{}),
			Ran:      preempt.WorkSince(r.snap.Now, j.Started, time.Time{})}
		c.Borrowed = r.borrowing(j.Team)
		c.Holds = append(c.Holds, h.holds...)
		r.cands = append(r.cands, c)
		r.candJobs = append(r.candJobs, j)
	}
	// Cheapest first, once: each victim search then starts from sorted
	// candidates.
	idx := make([]int, len(r.cands))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return preempt.Compare(&r.cands[a], &r.cands[b]) })
	cands, jobs := make([]preempt.Candidate, len(idx)), make([]*Job, len(idx))
	for k, i := range idx {
		cands[k], jobs[k] = r.cands[i], r.candJobs[i]
	}
	r.cands, r.candJobs = cands, jobs
	r.gone = make([]bool, len(cands))
}

// borrowing reports whether team holds more GPUs than its nominal quota
// (a zero quota limits nothing): its jobs then run on borrowed GPUs, the
// first reclaimed by preemption. GPUs reserved for the team's jobs in
// this Step count against its quota but are not held: a promise of more
// later does not put the jobs it runs now on borrowed GPUs.
func (r *run) borrowing(team string) bool {
	if len(r.quotas) == 0 {
		return false // the common case, asked once per candidate per search
	}
	q := r.quotas[team]
	return q != nil && fairshare.Quota{GPUs: q.GPUs, BorrowLimit: q.BorrowLimit}.Borrowed(r.inUse[team]-r.reserved[team]) > 0
}

// limitAt is when running job j reaches its time limit: started plus
// the limit, or now plus the limit when the host did not say when it
// started.
func (r *run) limitAt(j *Job) time.Time {
	if j.Started.IsZero() {
		return r.snap.Now.Add(j.TimeLimit)
	}
	return j.Started.Add(j.TimeLimit)
}

// victimGrace is the largest checkpoint grace among the candidates a job
// of tier may still preempt: the latest its reservation can start.
// O(C log C) for C candidates on first use in a Step, then O(1) amortised:
// each tier's place in the candidates by grace passes each candidate at
// most once.
func (r *run) victimGrace(tier int) time.Duration {
	if tier < 0 || tier >= r.matrix.Tiers() {
		return 0
	}
	if r.graceAt == nil {
		r.byGrace = make([]int, len(r.cands))
		for i := range r.byGrace {
			r.byGrace[i] = i
		}
		slices.SortStableFunc(r.byGrace, func(a, b int) int { return cmp.Compare(r.cands[b].Grace, r.cands[a].Grace) })
		r.graceAt = make([]int, r.matrix.Tiers())
	}
	k := r.graceAt[tier]
	for k < len(r.byGrace) {
		if i := r.byGrace[k]; !r.gone[i] && r.matrix.CanPreempt(tier, r.cands[i].Tier) {
			break
		}
		k++ // gone, or never this tier's to preempt: for good either way
	}
	r.graceAt[tier] = k
	if k == len(r.byGrace) {
		return 0
	}
	return r.cands[r.byGrace[k]].Grace
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
func (r *run) preempt(j *Job, req gang.Request, d time.Duration, mayReserve bool) bool {
	r.candidates()
	pk := preemptKey{shape: shapeKey{class: req.Class, g: req.GPUsPerMember, req: req.Required, pre: req.Preferred, mode: int32(j.Placement), spread: req.SpreadLevel}, tier: j.Tier}
	wk := waitKey{preemptKey: pk, members: j.Members, d: d}
	if n := len(r.starts); n == 0 || d > r.starts[n-1] {
		// A run from t >= 0 of d, or of d plus a grace, meets every
		// reservation that has not ended by t: all such runs are alike.
		wk.d = backfill.Forever
	}
	if at, ok := r.waited[wk]; ok && at == r.changes() && !r.noMemo {
		return false
	}
	if !r.preemptOnce(j, req, d, mayReserve, pk) {
		r.waited[wk] = r.changes()
		return false
	}
	return true
}

// changes counts what the Step has changed so far: placements,
// reservations and evictions, the only changes to the GPUs, the profile
// and the teams' use of GPUs that preempt reads.
func (r *run) changes() int {
	return len(r.d.Placements) + len(r.d.Reservations) + len(r.d.Evictions)
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
func (r *run) preemptOnce(j *Job, req gang.Request, d time.Duration, mayReserve bool, pk preemptKey) bool {
	// The reservation made below runs from grace for d; GPUs reserved
	// for others within that window are not the victims' to give.
	most := r.victimGrace(j.Tier)
	window := addDur(d, most)
	// Only the default selector is known to find none for more members
	// or a longer window once it found none: a custom one may answer each
	// request its own way, so it is asked every time.
	if !r.noMemo && r.cfg.Victims == nil {
		for _, f := range r.noVictims[pk] {
			if j.Members >= f.members && window >= f.window {
				return r.awaitEvictions(j, req, d, mayReserve)
			}
		}
	}
	sc := r.scorer(j)
	var st backfill.Start
	canWait, sought := false, false
	if !r.noMemo {
		st, canWait = r.prof.EarliestBy(req, d, sc, 0, max(most, r.evictEnd))
		sought = true
		if canWait && st.At <= r.asFastBy(st) {
			if done, sure := r.asFastAnyway(j, st, d, mayReserve); sure {
				return done
			}
		}
	}
	m := r.matrix
	// The candidates this job may preempt, in buffers reused between
	// searches: a Step makes few preemptions but may search often.
	idx, sub := r.idxBuf[:0], r.subBuf[:0]
	defer func() { r.idxBuf, r.subBuf = idx[:0], sub[:0] }()
	for i := range r.cands {
		c := &r.cands[i]
		if r.gone[i] || !m.CanPreempt(j.Tier, c.Tier) {
			continue
		}
		cc := *c
		// Evictions earlier in the Step may have brought the team back
		// within its quota: its jobs then no longer run on borrowed GPUs.
		// Without quotas no team borrows, c.Borrowed is false already,
		// and the job (cold in the cache: one per candidate) is not read.
		if len(r.quotas) > 0 {
			cc.Borrowed = r.borrowing(r.candJobs[i].Team)
		}
		// Leave out GPUs reserved for others; copy the holds only then.
		// The job still loses the work of all its GPUs: Size keeps
		// their count for the cost order.
		for k, h := range c.Holds {
			if res := r.prof.Reserved(h.Node, 0, window); h.GPUs&res != 0 {
				cc.Size = c.NumGPUs()
				cc.Holds = slices.Clone(c.Holds[:k])
				for _, h := range c.Holds[k:] {
					if free := h.GPUs &^ r.prof.Reserved(h.Node, 0, window); free != 0 {
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
		r.prof.WithReservations(window, func() {
			if r.cfg.Victims != nil {
				victims, pl, ok = r.customVictims(req, sc, sub)
			} else {
				victims, pl, ok = r.sel.Select(r.ix, req, sc, sub)
			}
		})
	}
	if ok && !r.validPreemption(req, sub, victims, pl, window) {
		ok = false // a custom selector answered nonsense: do not act on it
	}
	if ok {
		victims = usedVictims(sub, victims, pl) // a custom selector's spare victims stay
	}
	if !ok || len(victims) == 0 {
		// Keep only the failures no other implies: the list stays short.
		f := noVictims{members: j.Members, window: window}
		r.noVictims[pk] = append(slices.DeleteFunc(r.noVictims[pk], func(o noVictims) bool {
			return f.members <= o.members && f.window <= o.window
		}), f)
		return r.awaitEvictions(j, req, d, mayReserve)
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
		st, canWait = r.prof.Earliest(req, d, sc, 0)
	}
	if !preempt.Worth(max(grace, r.asFastBy(st)), st.At, canWait) {
		// It has the right to these GPUs and waits only because that is
		// as fast: reserve them, or a lower tier would backfill into them
		// and be preempted when they are due.
		return r.claim(j, st, d, mayReserve, asFastMsg)
	}
	start := grace
	for _, v := range victims {
		i := idx[v]
		r.gone[i] = true
		vj := r.candJobs[i]
		r.d.Evictions = append(r.d.Evictions, Eviction{Job: vj.ID, Reason: EvictPreempted, By: j.ID, Grace: vj.CheckpointGrace, Requeue: true})
		for _, h := range r.cands[i].Holds {
			r.prof.MoveRelease(h.Node, h.GPUs, vj.CheckpointGrace)
		}
		r.evictEnd = max(r.evictEnd, vj.CheckpointGrace)
		r.inUse[vj.Team] -= vj.GPUs()
	}
	r.reserveAt(j, pl, start, d)
	return true
}

// asFastBy is the moment until which j's start by waiting, st, counts as
// fast as any preemption on account of the evictions under way: the end
// of the last of them when st takes GPUs of jobs being evicted, else
// none (0). Step keeps no state, so a preemptor of an earlier Step is
// pending again while its victims checkpoint; waiting for their GPUs is
// then as fast, and preempting again would stop more jobs for nothing.
// Evictions elsewhere (a job checkpointing on a down node, say) do not
// make a start on other GPUs any faster. A start on evicting GPUs waits
// for the last eviction anywhere, not only for those whose GPUs it
// takes: Step cannot tell its own victims from others, and the narrower
// rule let a preemptor stop the same victim twice (see
// TestPreemptionOverSteps).
func (r *run) asFastBy(st backfill.Start) time.Duration {
	if evicting, _ := r.holdsBack(st.Placement); evicting {
		return r.evictEnd
	}
	return 0
}

// asFastMsg is why a job that may preempt waits for GPUs being freed
// instead.
const asFastMsg = "could preempt, but GPUs being freed start it as soon"

// asFastAnyway decides for j, which can start by waiting at st, on GPUs
// of jobs being evicted, no later than the evictions under way end
// (evictEnd), without a victim search when it can: no preemption would
// start j sooner, so with victims j would claim st (as fast as
// preempting), and without, awaitEvictions would decide. When the two
// come to the same, sure is true and done is what preempt reports; else
// the victims must be searched for.
func (r *run) asFastAnyway(j *Job, st backfill.Start, d time.Duration, mayReserve bool) (done, sure bool) {
	if !r.claimable(st) {
		return false, true // neither claims st; awaitEvictions finds no earlier start
	}
	// awaitEvictions finds st too when it comes by the time the jobs
	// being evicted (but for this Step's victims) are gone, and claims it
	// alike unless a ReservationPolicy declines, when only the message
	// would differ.
	if r.evicting != nil && st.At <= r.evictingEnd && (mayReserve || r.cfg.Reserve == nil) {
		return r.claim(j, st, d, mayReserve, asFastMsg), true
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
func (r *run) awaitEvictions(j *Job, req gang.Request, d time.Duration, mayReserve bool) bool {
	if r.evicting == nil {
		return false
	}
	// EarliestBy remembers its misses per shape: asking again for a
	// shape that cannot start by then is cheap.
	st, ok := r.prof.EarliestBy(req, d, r.scorer(j), 0, r.evictingEnd)
	if !ok {
		return false
	}
	return r.claim(j, st, d, mayReserve, "waits for GPUs being freed")
}

// holdsBack reports whether pl takes GPUs that jobs being evicted hold
// (evicting), and whether it takes those or GPUs free now (held): the
// first are what its victims may still hold, the second what they may
// have freed already, which a requeued victim would otherwise take back.
// A start on GPUs that only time limits free is left to the backfill
// mode.
func (r *run) holdsBack(pl gang.Placement) (evicting, held bool) {
	for _, sl := range pl.Slots {
		if sl.GPUs&r.evicting[sl.Node] != 0 {
			return true, true
		}
		held = held || sl.GPUs&r.ix.FreeSet(sl.Node) != 0
	}
	return false, held
}

// addEvicting notes that GPUs s of node n are held by a job being
// evicted (not one of this Step's preemption victims, whose GPUs go to
// their preemptor) and are free by end. The caller adds each GPU at most
// once.
func (r *run) addEvicting(n topology.NodeID, s topology.GPUSet, end time.Duration) {
	if r.ix.State(n) == topology.Ready {
		r.freeing += (s & r.ix.Healthy(n)).Len()
	}
	if r.evicting == nil {
		r.evicting = map[topology.NodeID]topology.GPUSet{}
	}
	r.evicting[n] |= s
	r.evictingEnd = max(r.evictingEnd, end)
}

// claim reserves st for j, which may preempt but waits for GPUs being
// freed, even beyond the backfill mode's reservations, when st holds back
// GPUs that victims hold or have freed (see holdsBack); when a custom
// ReservationPolicy declines, it records why j waits instead. A start
// that holds back nothing, or lies beyond the planning horizon (see
// claimable), is not claimed: claim reports false and leaves j to the
// backfill mode.
func (r *run) claim(j *Job, st backfill.Start, d time.Duration, mayReserve bool, why string) bool {
	if !r.claimable(st) {
		return false
	}
	if !mayReserve && r.cfg.Reserve != nil {
		at := r.at(st.At)
		r.wait(j, ReasonAwaitingPreemption, why+"; expected to start at "+formatTime(at, time.RFC3339Nano), at)
		return true
	}
	r.reserveAt(j, st.Placement, st.At, d)
	return true
}

// claimable reports whether claim would take st: a start within the
// planning horizon (Config.Horizon, and the end of year 9999) that holds
// back GPUs being freed or free now. Config.Horizon does not bound a
// start on GPUs of jobs being evicted by the time they are all gone: Step
// keeps no state, so that is how the Steps after a preemption see the
// preemptor's reservation on its victims' GPUs, which the horizon does
// not bound in the Step that evicts them either. Refused there, it let a
// requeued victim take back the GPUs it had just left, to be preempted
// again.
func (r *run) claimable(st backfill.Start) bool {
	evicting, held := r.holdsBack(st.Placement)
	by := r.horizon
	if evicting && st.At <= r.evictingEnd {
		by = r.lastStart
	}
	return held && st.At <= by
}

// reserveAt reserves pl from start for a run of d for j, in the profile
// and in the decision.
func (r *run) reserveAt(j *Job, pl gang.Placement, start, d time.Duration) {
	for _, sl := range pl.Slots {
		if taken := sl.GPUs & r.evicting[sl.Node] &^ r.promised[sl.Node]; taken != 0 {
			if r.promised == nil {
				r.promised = map[topology.NodeID]topology.GPUSet{}
			}
			r.promised[sl.Node] |= taken
			r.freeing -= (taken & r.ix.Healthy(sl.Node)).Len()
		}
	}
	r.prof.Reserve(pl, start, d)
	r.addReservation(j, resvInfo{job: j.ID, start: start, end: addDur(start, d), slots: pl.Slots}, pl)
	r.d.Reservations = appendDoubling(r.d.Reservations, Reservation{Job: j.ID, Start: r.at(start), Allocation: pl.Allocation(r.ix)})
}

// customVictims asks Config.Victims for victims among sub. It hands over
// a copy, holds included, which the selector may reorder or change as it
// likes, and maps the indices it returns, into the copy as the selector
// left it, back to sub by job ID; an index out of range is no answer.
func (r *run) customVictims(req gang.Request, sc binpack.Scorer, sub []preempt.Candidate) ([]int, gang.Placement, bool) {
	given := slices.Clone(sub)
	for i := range given {
		given[i].Holds = slices.Clone(given[i].Holds)
	}
	victims, pl, ok := r.cfg.Victims.Select(r.ix, req, sc, given)
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
func (r *run) validPreemption(req gang.Request, cands []preempt.Candidate, victims []int, pl gang.Placement, window time.Duration) bool {
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
		if sl.Node < 0 || int(sl.Node) >= r.ix.NumNodes() || used[sl.Node]&sl.GPUs != 0 {
			return false
		}
		used[sl.Node] |= sl.GPUs
		if r.ix.State(sl.Node) != topology.Ready || !r.ix.InClass(sl.Node, req.Class) {
			return false
		}
		if req.Required != gang.NoLevel && r.ix.DomainOf(req.Required, sl.Node) != r.ix.DomainOf(req.Required, pl.Slots[0].Node) {
			return false // the gang must share one domain of its required level
		}
		// GPUs free now or freed by the victims, and reserved for no one
		// during the run.
		ok := (r.ix.FreeSet(sl.Node) | (freed[sl.Node] & r.ix.Healthy(sl.Node))) &^ r.prof.Reserved(sl.Node, 0, window)
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

// overQuota says why j's team may not start it now, or "".
func (r *run) overQuota(j *Job) string {
	var a Admitter = QuotaAdmitter{quotas: r.quotas}
	if r.cfg.Admit != nil {
		a = r.cfg.Admit
	}
	u := Usage{TeamGPUs: r.inUse[j.Team], IdleGPUs: r.ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType) + r.freeing}
	if ok, why := a.Admit(r.snap, j, u); !ok {
		if why == "" {
			why = "not admitted by the admission policy"
		}
		return why
	}
	return ""
}

func addDur(a, b time.Duration) time.Duration {
	if a == backfill.Forever || b == backfill.Forever || a > backfill.Forever-b {
		return backfill.Forever
	}
	return a + b
}

// at converts a profile offset to a time; offsets are exact, so a start
// never comes before the GPUs it needs are free.
func (r *run) at(off time.Duration) time.Time {
	return r.snap.Now.Add(off)
}

// blocks is the number of reservations that start before d: jobs of one
// shape with the same count see the same reserved GPUs.
// O(log R).
func (r *run) blocks(d time.Duration) int {
	n, _ := slices.BinarySearch(r.starts, d)
	return n
}

// addReservation records a reservation made in this Step for j. Its GPUs
// count against j's team quota from now on, so that later jobs of the team
// cannot use up the quota the reserved job will need when it starts.
func (r *run) addReservation(j *Job, rs resvInfo, pl gang.Placement) {
	r.inUse[j.Team] += j.GPUs()
	if len(r.quotas) > 0 {
		if r.reserved == nil {
			r.reserved = map[string]int{}
		}
		r.reserved[j.Team] += j.GPUs()
	}
	k := int32(len(r.reserve))
	r.reserve = appendDoubling(r.reserve, rs)
	r.starts = insertSorted(r.starts, rs.start)
	if held, _ := r.holdsFree(&rs, topology.AnyType, 1); held {
		r.live = append(r.live, k)
	}
	if r.ix.NumTypes() < 2 {
		return // one class: every reservation concerns every job
	}
	if r.byClass == nil {
		r.byClass = map[topology.Class]*classResv{}
	}
	for i, sl := range pl.Slots {
		c := r.ix.NodeClass(sl.Node)
		if slices.ContainsFunc(pl.Slots[:i], func(o gang.Slot) bool { return r.ix.NodeClass(o.Node) == c }) {
			continue // a gang of any type may span classes: count it once in each
		}
		cr := r.byClass[c]
		if cr == nil {
			cr = &classResv{}
			r.byClass[c] = cr
		}
		cr.reserve = append(cr.reserve, k)
		cr.starts = insertSorted(cr.starts, rs.start)
		if held, _ := r.holdsFree(&rs, c, 1); held {
			cr.live = append(cr.live, k)
		}
	}
}

// holdsFree reports whether rs holds GPUs that are free now on nodes of
// class c, and whether it does on one with at least g GPUs free: a job
// of class c and g GPUs per member that starts now can take only those.
func (r *run) holdsFree(rs *resvInfo, c topology.Class, g int) (held, room bool) {
	for _, sl := range rs.slots {
		if free := r.ix.FreeSet(sl.Node); sl.GPUs&free != 0 && r.ix.InClass(sl.Node, c) {
			if held = true; free.Len() >= g {
				return true, true
			}
		}
	}
	return held, false
}

// appendDoubling appends v to s, doubling the capacity of a full s:
// append grows a long slice by about a quarter at a time, copying it
// each time, and a conservative Step appends a reservation for nearly
// every pending job.
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, len(s)+1)
	}
	return append(s, v)
}

func insertSorted(s []time.Duration, v time.Duration) []time.Duration {
	i, _ := slices.BinarySearch(s, v)
	return slices.Insert(s, i, v)
}

// delays calls f, in the order they were made, for the reservations
// that a job of class c and g GPUs per member running for d could delay:
// those that start within d and hold GPUs free now on nodes of its class
// with g GPUs free (a job that fits now takes only such GPUs). Free GPUs
// only get fewer during a Step, so a reservation found holding none
// never does again and is dropped from the list of those that may:
// O(reservations that still may), not O(reservations).
func (r *run) delays(c topology.Class, g int, d time.Duration, f func(rs *resvInfo)) {
	list := &r.live
	if c != topology.AnyType {
		cr := r.byClass[c]
		if cr == nil {
			return
		}
		list = &cr.live
	}
	kept := (*list)[:0]
	for _, i := range *list {
		rs := &r.reserve[i]
		held, room := r.holdsFree(rs, c, g)
		if !held {
			continue
		}
		kept = append(kept, i)
		if rs.start < d && room {
			f(rs)
		}
	}
	*list = kept
}

// explain records why j, which does not fit now honouring reservations,
// waits.
func (r *run) explain(j *Job, req gang.Request, d time.Duration, key shapeKey) {
	key.blocks, key.resv = 0, 0
	out := gang.NoCapacity
	if m, known := r.noFitAtAll[key]; known && j.Members >= m {
		out = gang.NoCapacity
		if req.Required != gang.NoLevel && r.ix.Capacity(topology.ClusterLevel, 0, req.Class, req.GPUsPerMember) >= j.Members {
			out = gang.NoDomain
		}
	} else {
		if req.Required == gang.NoLevel && req.Preferred == gang.NoLevel {
			// Without topology a gang fits exactly when the members fit.
			out = gang.NoCapacity
			if r.ix.Capacity(topology.ClusterLevel, 0, req.Class, req.GPUsPerMember) >= j.Members {
				out = gang.Placed
			}
		} else {
			var pl gang.Placement
			if pl, out = gang.Place(r.ix, req, r.scorer(j)); out == gang.Placed {
				pl.Release(r.ix)
			}
		}
		if out == gang.Placed {
			r.wait(j, ReasonBehindReservation, r.delayed(req.Class, req.GPUsPerMember, d), time.Time{})
			if j.ID == r.target {
				r.delays(req.Class, req.GPUsPerMember, d, func(rs *resvInfo) {
					r.turn.delays = append(r.turn.delays, fmt.Sprintf("%s at %s", rs.job, formatTime(r.at(rs.start), time.RFC3339Nano)))
				})
			}
			return
		}
		if !known || j.Members < m {
			r.noFitAtAll[key] = j.Members
		}
	}
	free := r.ix.FreeGPUs(topology.ClusterLevel, 0, req.Class)
	typ := typeWord(j.GPUType)
	why := ReasonInsufficientGPUs
	if out == gang.NoDomain {
		why = ReasonTopology
	}
	room := -1 // enough GPUs are free, but on too few nodes with room for a member
	if why == ReasonInsufficientGPUs && free >= j.GPUs() {
		room = r.ix.Capacity(topology.ClusterLevel, 0, req.Class, j.GPUsPerMember)
	}
	mk := msgKey{why: why, m: j.Members, g: j.GPUsPerMember, free: free, room: room, typ: j.GPUType, required: j.Topology.Required}
	msg, ok := r.msgs[mk]
	if !ok {
		switch {
		case why == ReasonTopology:
			msg = fmt.Sprintf("needs %d×%d%s GPUs in one %s; %d free in the cluster but no %s has room", j.Members, j.GPUsPerMember, typ, j.Topology.Required, free, j.Topology.Required)
		case room >= 0:
			msg = fmt.Sprintf("needs %d×%d%s GPUs, %d free but split across nodes: room for %s", j.Members, j.GPUsPerMember, typ, free, counted(room, "member"))
		default:
			msg = fmt.Sprintf("needs %d×%d%s GPUs, %d free", j.Members, j.GPUsPerMember, typ, free)
		}
		r.msgs[mk] = msg
	}
	r.wait(j, why, msg, time.Time{})
}

// delayed is the message of a job of class c and g GPUs per member that
// fits now but would delay reservations that start within d (see
// delays), which it names. With the same reservations of the class made
// so far, the same ones start within d when as many do, and with as many
// jobs placed, the same GPUs are free; so the text is formatted once per
// (class, member size, count, reservations, placements).
func (r *run) delayed(c topology.Class, g int, d time.Duration) string {
	key := delayKey{class: c, g: int32(g), blocks: r.blocks(d), all: len(r.reserve), placed: len(r.d.Placements)}
	if c != topology.AnyType {
		key.blocks, key.all = 0, 0
		if cr := r.byClass[c]; cr != nil {
			key.blocks, _ = slices.BinarySearch(cr.starts, d)
			key.all = len(cr.starts)
		}
	}
	if msg, ok := r.delayMsg[key]; ok {
		return msg
	}
	msg := "fits now but would delay the reservation of " + r.formatDelayed(c, g, d)
	r.delayMsg[key] = msg
	return msg
}

// formatDelayed names the first three reservations (in the order they
// were made) that a job of class c and g GPUs per member could delay
// within d, and counts the others.
func (r *run) formatDelayed(c topology.Class, g int, d time.Duration) string {
	var names []string
	blocks := 0
	r.delays(c, g, d, func(rs *resvInfo) {
		if blocks++; blocks <= 3 {
			names = append(names, fmt.Sprintf("%q at %s", rs.job, formatTime(r.at(rs.start), time.RFC3339Nano)))
		}
	})
	if len(names) == 0 {
		return "an earlier job"
	}
	if more := blocks - len(names); more > 0 {
		names = append(names, fmt.Sprintf("%d more", more))
	}
	return strings.Join(names, ", ")
}

// never says why j can never fit this cluster, or "". The answer depends
// only on the shape, so it is computed once per shape.
func (r *run) never(j *Job, req gang.Request) string {
	if r.ix.NumNodes() == 0 {
		return "the cluster has no nodes"
	}
	if j.GPUsPerMember > r.ix.MaxGPUs() {
		return fmt.Sprintf("needs %d GPUs on one node; the largest node has %d", j.GPUsPerMember, r.ix.MaxGPUs())
	}
	key := shapeKey{class: req.Class, g: req.GPUsPerMember, req: req.Required, pre: gang.NoLevel, spread: gang.NoLevel}
	most, ok := r.most[key]
	if !ok {
		most = r.mostMembers(req)
		r.most[key] = most
	}
	if j.Members <= most {
		return ""
	}
	typ := typeWord(j.GPUType)
	if req.Required != gang.NoLevel {
		return fmt.Sprintf("needs %d×%d%s GPUs in one %s; no %s of this cluster holds more than %s", j.Members, j.GPUsPerMember, typ, j.Topology.Required, j.Topology.Required, counted(most, "such member"))
	}
	return fmt.Sprintf("needs %d×%d%s GPUs; this cluster holds at most %s", j.Members, j.GPUsPerMember, typ, counted(most, "such member"))
}

// typeWord is a GPU type as a word to put before "GPUs" in a message:
// " H100", or nothing for a job that names no type.
func typeWord(t string) string {
	if t == "" {
		return ""
	}
	return " " + t
}

// counted is "1 " + noun, or n and the noun's plural (noun + "s").
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// mostMembers is the largest gang of req's member size, class and required
// level that fits the cluster with every job gone: ready and draining
// nodes, healthy GPUs. One pass over the nodes per distinct shape.
func (r *run) mostMembers(req gang.Request) int {
	g := req.GPUsPerMember
	if req.Required == gang.NoLevel {
		total := 0
		for n := range r.ix.NumNodes() {
			id := topology.NodeID(n)
			if r.ix.State(id) != topology.Down && r.ix.InClass(id, req.Class) {
				total += r.ix.Healthy(id).Len() / g
			}
		}
		return total
	}
	per := make([]int, r.ix.NumDomains(req.Required))
	for n := range r.ix.NumNodes() {
		id := topology.NodeID(n)
		if r.ix.State(id) != topology.Down && r.ix.InClass(id, req.Class) {
			per[r.ix.DomainOf(req.Required, id)] += r.ix.Healthy(id).Len() / g
		}
	}
	if len(per) == 0 {
		return 0 // a cluster without nodes has no domains
	}
	return slices.Max(per)
}

// index returns the position in the snapshot of a job Step handed out (a
// pointer into snap.Jobs), or -1 for any other pointer. O(1).
func (r *run) index(j *Job) int {
	if len(r.snap.Jobs) == 0 || j == nil {
		return -1
	}
	base := uintptr(unsafe.Pointer(&r.snap.Jobs[0]))
	size := unsafe.Sizeof(r.snap.Jobs[0])
	p := uintptr(unsafe.Pointer(j))
	if p < base || p >= base+size*uintptr(len(r.snap.Jobs)) || (p-base)%size != 0 {
		return -1
	}
	return int((p - base) / size)
}

// wait records why j waits, in its slot of the ID order.
func (r *run) wait(j *Job, why Reason, msg string, start time.Time) {
	r.waits[r.rank[r.index(j)]] = Wait{Job: j.ID, Reason: why, Message: msg, Start: start}
}

func (r *run) decision() *Decision {
	d := r.d
	slices.SortFunc(d.Placements, func(a, b Placement) int { return strings.Compare(a.Job, b.Job) })
	slices.SortFunc(d.Evictions, func(a, b Eviction) int { return strings.Compare(a.Job, b.Job) })
	slices.SortFunc(d.Reservations, func(a, b Reservation) int { return strings.Compare(a.Job, b.Job) })
	// The waits of jobs that neither start nor hold a reservation, in
	// ID order, compacted where they are: decision is the run's last
	// word, called once. When few jobs wait, they are copied out so that
	// the decision does not keep the whole array alive.
	k := 0
	for _, w := range r.waits {
		if w.Job != "" {
			r.waits[k] = w
			k++
		}
	}
	if k < len(r.waits)/2 {
		d.Pending = slices.Clone(r.waits[:k])
	} else {
		clear(r.waits[k:])
		d.Pending = r.waits[:k:k]
	}
	r.waits = nil
	return &d
}
