package scheduler

import (
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// run is the state of one Step.
type stepState struct {
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

// turn is what a Step had decided when the target job's turn came: the
// GPUs the job's team held, and the reservations it could delay.
type turn struct {
	seen  bool
	inUse int
	// delays names the reservations a behind-reservation job could
	// delay, as its message does (see delays).
	delays []string
}

// newStepState starts a Step on snap, which validate checked, learning c.
func newStepState(cfg *Config, snap *Snapshot, c checked) (*stepState, error) {
	ix := c.ix
	st := &stepState{cfg: cfg, snap: snap, ix: ix, levels: map[string]int{}, noFit: map[shapeKey]int{},
		quotas: map[string]*Quota{}, inUse: map[string]int{}, most: map[shapeKey]int{}, noFitAtAll: map[shapeKey]int{},
		msgs: map[msgKey]string{}, noVictims: map[preemptKey][]noVictims{}, waited: map[waitKey]int{},
		groups: map[string]map[topology.NodeID]int{}, delayMsg: map[delayKey]string{},
		matrix: cfg.matrix(), lastStart: lastStartFor(snap.Now)}
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
			st.inUse[j.Team] += j.GPUs() // evicting jobs are leaving
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
	st.prof = backfill.NewProfile(ix)
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
// of every allocation entry of every job in snapshot order; newStepState keeps
// them in st.held.
func (st *stepState) heldJobs(nodes []topology.NodeID) []heldJob {
	var out []heldJob
	holds := make([]preempt.Hold, len(nodes))
	at := 0
	for i := range st.snap.Jobs {
		j := &st.snap.Jobs[i]
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
func (st *stepState) offset(t time.Time) time.Duration {
	return max(t.Sub(st.snap.Now), 0)
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
func (st *stepState) hold(j *Job) time.Duration {
	return addDur(dur(j.TimeLimit), st.graceAtLimit(j))
}

// graceAtLimit is the grace of j's eviction at its time limit: its
// checkpoint grace when limits are enforced, else 0.
func (st *stepState) graceAtLimit(j *Job) time.Duration {
	if st.cfg.IgnoreTimeLimits {
		return 0
	}
	return j.CheckpointGrace
}

// evict evicts running jobs on down nodes and past their time limit,
// tells the profile when every held GPU frees up, and counts the places
// of the service groups' running jobs that stay.
func (st *stepState) evict() {
	for _, h := range st.held {
		j := h.Job
		end := backfill.Forever
		switch j.State {
		case Evicting:
			end = st.offset(j.EvictedAt.Add(j.CheckpointGrace))
			if j.EvictedAt.IsZero() {
				end = 0
			}
		case Running:
			if down := st.downNode(h); down != "" {
				st.d.Evictions = append(st.d.Evictions, Eviction{Job: j.ID, Reason: EvictNodeDown, Requeue: true})
				end = 0
				break
			}
			if j.TimeLimit > 0 {
				limitAt := st.limitAt(j)
				if !limitAt.After(st.snap.Now) && !st.cfg.IgnoreTimeLimits { // a job with no start is not past it
					st.d.Evictions = append(st.d.Evictions, Eviction{Job: j.ID, Reason: EvictTimeLimit, Grace: j.CheckpointGrace})
					end = st.offset(st.snap.Now.Add(j.CheckpointGrace))
					break
				}
				if !limitAt.After(st.snap.Now) {
					break // past a limit not enforced: no known end
				}
				end = st.offset(limitAt.Add(st.graceAtLimit(j)))
			}
		}
		leaving := j.State == Evicting || len(st.d.Evictions) > 0 && st.d.Evictions[len(st.d.Evictions)-1].Job == j.ID
		if leaving {
			st.evictEnd = max(st.evictEnd, end)
			if j.State == Running {
				st.inUse[j.Team] -= j.GPUs()
			}
		}
		for _, hd := range h.holds {
			st.prof.AddRelease(hd.Node, hd.GPUs, end)
			if leaving {
				st.addEvicting(hd.Node, hd.GPUs, end)
			} else if j.Group != "" {
				// A replica that stays keeps its place in the group; one
				// evicted now is leaving, as evicting ones are.
				st.addGroup(j.Group, hd.Node, hd.GPUs.Len()/j.GPUsPerMember)
			}
		}
	}
}

func (st *stepState) downNode(h heldJob) string {
	for _, hd := range h.holds {
		if st.ix.State(hd.Node) == topology.Down {
			return st.ix.Name(hd.Node)
		}
	}
	return ""
}

// pendingJobs returns pointers to the pending jobs in scheduling order.
func (st *stepState) pendingJobs() ([]*Job, error) {
	jobs := make([]*Job, 0, len(st.snap.Jobs))
	for i := range st.snap.Jobs {
		if st.snap.Jobs[i].State == Pending {
			jobs = append(jobs, &st.snap.Jobs[i])
		}
	}
	slices.SortFunc(jobs, func(a, b *Job) int { return strings.Compare(a.ID, b.ID) })
	st.rank = make([]int32, len(st.snap.Jobs))
	for i := range st.rank {
		st.rank[i] = -1
	}
	for i, j := range jobs {
		st.rank[st.index(j)] = int32(i)
	}
	st.waits = make([]Wait, len(jobs))
	n := len(jobs)
	st.cfg.order().Order(st.snap, jobs)
	if len(jobs) != n {
		return nil, ErrPolicyOrder
	}
	seen := make([]bool, n)
	for _, j := range jobs {
		i := st.index(j)
		if i < 0 || st.rank[i] < 0 || seen[st.rank[i]] {
			return nil, ErrPolicyOrder
		}
		seen[st.rank[i]] = true
	}
	return jobs, nil
}

func (st *stepState) request(j *Job) (gang.Request, bool) {
	req := gang.NewRequest(j.Members, j.GPUsPerMember)
	c, ok := st.ix.Class(j.GPUType)
	req.Class = c
	if j.Topology.Required != "" {
		if l, has := st.levels[j.Topology.Required]; has {
			req.Required = l
		}
	}
	if j.Topology.Preferred != "" {
		if l, has := st.levels[j.Topology.Preferred]; has {
			req.Preferred = l
		}
	}
	req.Chooser = st.cfg.Domains
	if j.Placement == Spread {
		req.Distinct = true
		if l, has := st.levels[j.SpreadLevel]; has && j.SpreadLevel != "" {
			req.SpreadLevel = l
		}
	}
	return req, ok
}

func (st *stepState) scorer(j *Job) binpack.Scorer {
	if j.Placement == Spread {
		if st.cfg.Spread != nil {
			return st.cfg.Spread
		}
		return binpack.Spread{}
	}
	return st.cfg.Pack
}

const (
	placed  outcome = iota
	blocked         // waits for GPUs (reserved or not): blocks strict order
	skipped         // cannot run now for reasons of its own: blocks nobody
)

// placed records the placement of j.
func (st *stepState) placed(j *Job, pl gang.Placement) {
	st.d.Placements = append(st.d.Placements, Placement{Job: j.ID, Allocation: pl.Allocation(st.ix)})
	st.inUse[j.Team] += j.GPUs()
	if j.Group != "" {
		for _, sl := range pl.Slots {
			st.addGroup(j.Group, sl.Node, sl.Members)
		}
	}
}

func (st *stepState) addGroup(group string, n topology.NodeID, members int) {
	m := st.groups[group]
	if m == nil {
		m = map[topology.NodeID]int{}
		st.groups[group] = m
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
func (st *stepState) placeApart(j *Job, req gang.Request, d time.Duration) (gang.Placement, gang.Outcome) {
	nodes := st.groups[j.Group]
	if len(nodes) == 0 {
		return st.prof.PlaceNow(req, d, st.scorer(j))
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
			doms[st.ix.DomainOf(lvl, n)] += c
		}
		for _, c := range doms {
			most = max(most, c)
		}
		count = func(n topology.NodeID) int { return doms[st.ix.DomainOf(lvl, n)] }
	}
	req.Occupied = func(n topology.NodeID) bool { return count(n) > 0 }
	for k := 1; k <= most; k++ {
		req.Avoid = func(n topology.NodeID) bool { return count(n) >= k }
		if pl, out := st.prof.PlaceNow(req, d, st.scorer(j)); out == gang.Placed {
			return pl, out
		}
	}
	req.Avoid = nil // every place, still off the group's first
	return st.prof.PlaceNow(req, d, st.scorer(j))
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

func addDur(a, b time.Duration) time.Duration {
	if a == backfill.Forever || b == backfill.Forever || a > backfill.Forever-b {
		return backfill.Forever
	}
	return a + b
}

// at converts a profile offset to a time; offsets are exact, so a start
// never comes before the GPUs it needs are free.
func (st *stepState) at(off time.Duration) time.Time {
	return st.snap.Now.Add(off)
}

// index returns the position in the snapshot of a job Step handed out (a
// pointer into snap.Jobs), or -1 for any other pointer. O(1).
func (st *stepState) index(j *Job) int {
	if len(st.snap.Jobs) == 0 || j == nil {
		return -1
	}
	base := uintptr(unsafe.Pointer(&st.snap.Jobs[0]))
	size := unsafe.Sizeof(st.snap.Jobs[0])
	p := uintptr(unsafe.Pointer(j))
	if p < base || p >= base+size*uintptr(len(st.snap.Jobs)) || (p-base)%size != 0 {
		return -1
	}
	return int((p - base) / size)
}

func (st *stepState) decision() *Decision {
	d := st.d
	slices.SortFunc(d.Placements, func(a, b Placement) int { return strings.Compare(a.Job, b.Job) })
	slices.SortFunc(d.Evictions, func(a, b Eviction) int { return strings.Compare(a.Job, b.Job) })
	slices.SortFunc(d.Reservations, func(a, b Reservation) int { return strings.Compare(a.Job, b.Job) })
	// The waits of jobs that neither start nor hold a reservation, in
	// ID order, compacted where they are: decision is the run's last
	// word, called once. When few jobs wait, they are copied out so that
	// the decision does not keep the whole array alive.
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
