package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// Job is one job of a workload.
type Job struct {
	// ID names the job; IDs must be unique and non-empty. Step sees it as
	// the job's ID, so it breaks ties between jobs of equal tier and
	// submit time.
	ID string
	// Submit is the arrival time, as an offset from [Options.Start].
	Submit time.Duration
	// Run is the work the job does: how long it runs when nothing stops
	// it. It must be positive.
	Run time.Duration
	// Limit is the time limit of one attempt; zero means none. A job whose
	// remaining work exceeds its limit is evicted by the scheduler when
	// the limit falls due (unless the policy ignores time limits).
	Limit time.Duration
	// Members and GPUsPerMember give the gang's shape; both must be >= 1.
	Members       int
	GPUsPerMember int
	// Team owns the job. Jobs with no team ("") are ordered as a team of
	// their own, with no share and no usage: the ledger charges no one
	// for them.
	Team string
	// Tier is the priority tier, as scheduler.Job.Tier: the zero value is
	// unset, the lowest tier of the policy.
	Tier scheduler.Tier
	// Kind is training or inference; it decides how much work an evicted
	// job keeps (see the package documentation).
	Kind scheduler.Kind
	// GPUType, when set, restricts the job to nodes of that type.
	GPUType string
	// CheckpointGrace is how long the job needs to stop once evicted.
	CheckpointGrace time.Duration
	// CPUMillis and MemoryMiB are what each member needs on its node
	// besides its GPUs, as in scheduler.Job; zero asks for none.
	CPUMillis, MemoryMiB int
}

// NodeEvent changes the state of one node at a time: a failure (Down), a
// drain (Draining) or a repair (Ready).
type NodeEvent struct {
	// At is the time of the change, as an offset from [Options.Start].
	At time.Duration
	// Node names a node of the cluster.
	Node string
	// State is the node's new state.
	State topology.NodeState
}

// Options are the optional inputs of [Run]. The zero value is usable.
type Options struct {
	// Start is the absolute time of offset 0; the zero value means
	// 2000-01-01T00:00:00Z.
	Start time.Time
	// NodeEvents are node failures, drains and repairs, in any order of
	// time; of two changes to one node at one instant, the later in the
	// list is the one that stays.
	NodeEvents []NodeEvent
	// CheckpointInterval, when positive, is how often training jobs
	// checkpoint: an evicted and requeued training job keeps its work up
	// to its last checkpoint. Zero means training jobs restart from
	// scratch.
	CheckpointInterval time.Duration
	// Teams gives team shares, parents and quotas; their Usage is the
	// usage at Start. Every snapshot carries these teams with their usage
	// as of its time, accumulated by a fair-share ledger (half-life
	// Config.FairShare.HalfLife) from the GPUs each team held. Teams that
	// jobs name but Teams does not have share 1; the snapshots list them
	// too, with their usage, unless the order is TierOrder with no custom
	// hook, under which Step reads no usage (see the package
	// documentation, Cost). Shares also weight Jain's fairness index (see
	// [Summary.Jain]).
	Teams []scheduler.Team
	// Clock, when set, is read before and after every Step to measure its
	// latency. Nil means no latency is measured.
	Clock func() time.Time
	// MaxPoints bounds the number of points of [Result.Series]; zero
	// means 500.
	MaxPoints int
	// RecordRuns keeps every attempt of every job, with its allocation,
	// in [JobResult.Runs].
	RecordRuns bool
	// Progress, when set, is called after every Step with the number of
	// jobs finished so far and the number of jobs.
	Progress func(finished, total int)
	// Observe, when set, is called after every successful Step with the
	// snapshot Step saw and its decision, before the decision is applied.
	// It must not modify or keep either. With Observe set, every snapshot
	// holds the whole cluster (see the package documentation, Cost).
	Observe func(snap *scheduler.Snapshot, d *scheduler.Decision)
	// MaxStepsPerInstant bounds the Step calls at one instant (zero-grace
	// evictions finish at the instant they are decided, which calls Step
	// again). Zero means 64; exceeding it is an error.
	MaxStepsPerInstant int
	// MaxPreemptions bounds the preemptions in a row while no job arrives
	// or finishes. A policy can preempt and requeue jobs in turn without
	// end (for example with Config.IgnoreTimeLimits, whose backfill
	// trusts limits it does not enforce), and Run would not return. Zero
	// means 10,000; exceeding it is an error.
	MaxPreemptions int
}

// ErrTimeRange is wrapped by the error of [Run] when a time of the
// workload does not fit the time.Duration arithmetic of the simulation,
// which would wrap around: every time the run reaches (arrivals, node
// events, the end of every run, time limit and checkpoint grace), as an
// offset from [Options.Start], must be at most math.MaxInt64 ns (about
// 292 years) and at most that much after the earliest arrival or node
// event. Arrivals and node events are checked before the run starts, the
// ends of runs and graces as the run reaches them.
var ErrTimeRange = errors.New("time out of range: past the last time a time.Duration holds")

// DefaultStart returns the absolute time of offset 0 when [Options.Start]
// is zero: 2000-01-01 00:00 UTC. (A function, not a variable, so that no
// caller can change it for every other.)
func DefaultStart() time.Time { return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) }

// state of a job in the simulation.
const (
	sFuture uint8 = iota
	sPending
	sRunning
	sEvicting
	sDone
)

type jstate struct {
	state    uint8
	pos      int32 // index in runner.active, -1 when not there
	team     int32
	epoch    uint32
	started  time.Duration
	evicted  time.Duration
	progress time.Duration // work kept from earlier attempts
	reason   scheduler.EvictReason
	requeue  bool
	alloc    topology.Allocation
}

// runner is the state of one run.
type runner struct {
	jobs   []Job
	cfg    scheduler.Config
	sched  *scheduler.Scheduler
	wakeAt time.Duration // the NextWake queued last (see wake)
	opt    Options
	start  time.Time
	snap   scheduler.Snapshot
	pool   pool
	nodes  nodeIndex
	held   []topology.GPUSet // held[n] is the GPUs held on node n
	byID   map[string]int32
	st     []jstate
	res    []JobResult
	owner  []int32 // owner[k] is the job index of snap.Jobs[k]
	q      queue
	order  []int32 // job indices by submit time
	next   int     // order[next] is the next job to arrive
	nodeEv []NodeEvent

	now time.Duration
	// last is the latest time the run may reach: math.MaxInt64, less how
	// far the earliest time lies before 0, so that every time minus the
	// earliest fits a Duration.
	last        time.Duration
	gpus        int
	busy        int // GPUs held by running and evicting jobs
	pendingGPUs int // GPUs the pending jobs ask for
	teams       teamBook
	gpuSec      float64
	doneSec     float64 // gpuSec at the latest finish: the makespan's part
	stuck       int     // preemptions since a job last arrived or finished
	pending     int
	running     int
	finished    int
	steps       int
	nodeDown    int
	lat         []time.Duration
	samp        sampler
	rb          *resBook // nil unless a node limits CPU or memory
	reasons     reasonBook
	strandedSec float64 // GPU-seconds stranded (see resBook)
}

// Run simulates the workload jobs on cluster c under policy cfg and
// returns what happened. It returns an error for invalid input, when
// Step returns one, or when a decision breaks the rules the simulator
// checks (a GPU allocated twice, a placement of a job that is not
// pending, an eviction of a job that is not running).
func Run(c topology.Cluster, jobs []Job, cfg scheduler.Config, opt Options) (*Result, error) {
	return simulate(c, jobs, cfg, opt, true)
}

// simulate is Run; with narrow false, every Step is shown the whole
// cluster (see pool).
func simulate(c topology.Cluster, jobs []Job, cfg scheduler.Config, opt Options, narrow bool) (*Result, error) {
	r, err := newRunner(c, jobs, cfg, opt)
	if err != nil {
		return nil, err
	}
	r.pool.narrow = r.pool.narrow && narrow
	if err := r.loop(); err != nil {
		return nil, err
	}
	return r.result(), nil
}

// newRunner checks the input and sets up the run at its earliest time,
// before any event.
func newRunner(c topology.Cluster, jobs []Job, cfg scheduler.Config, opt Options) (*runner, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("sim: cluster: %w", err)
	}
	r := &runner{jobs: jobs, cfg: cfg, sched: scheduler.New(cfg), opt: opt, start: opt.Start}
	if r.start.IsZero() {
		r.start = DefaultStart()
	}
	r.setCluster(c)
	if err := r.setJobs(); err != nil {
		return nil, err
	}
	r.setTeams()
	if err := r.setNodeEvents(); err != nil {
		return nil, err
	}
	origin := r.origin()
	maxPts := opt.MaxPoints
	if maxPts <= 0 {
		maxPts = 500
	}
	r.samp = newSampler(maxPts, origin, r.teams.names)
	r.now = origin
	r.last = time.Duration(math.MaxInt64)
	if origin < 0 {
		r.last += origin
	}
	if err := r.checkTimes(origin); err != nil {
		return nil, err
	}
	return r, nil
}

// setCluster indexes the nodes by name. Node events change the state of
// nodes, so with node events the run works on a copy of them.
func (r *runner) setCluster(c topology.Cluster) {
	if len(r.opt.NodeEvents) > 0 {
		c.Nodes = slices.Clone(c.Nodes)
	}
	r.pool = pool{nodes: c.Nodes, narrow: narrowable(&c, &r.cfg, &r.opt)}
	r.snap.Cluster = c
	r.held = make([]topology.GPUSet, len(c.Nodes))
	r.nodes = newNodeIndex(c.Nodes)
	r.rb = newResBook(c.Nodes)
	for i := range c.Nodes {
		r.gpus += c.Nodes[i].GPUs
	}
}

// setJobs checks every job, indexes them by ID and orders them by submit
// time (stably: input order breaks ties).
func (r *runner) setJobs() error {
	n := len(r.jobs)
	r.byID = make(map[string]int32, n)
	r.st = make([]jstate, n)
	r.res = make([]JobResult, n)
	r.order = make([]int32, n)
	for i := range r.jobs {
		j := &r.jobs[i]
		if err := checkJob(i, j); err != nil {
			return err
		}
		if k, dup := r.byID[j.ID]; dup {
			return fmt.Errorf("sim: jobs[%d] %q: duplicate id (also jobs[%d])", i, j.ID, k)
		}
		r.byID[j.ID] = int32(i)
		r.order[i] = int32(i)
		r.st[i].pos = -1
		r.res[i] = JobResult{ID: j.ID, Team: j.Team, Submit: j.Submit}
	}
	slices.SortStableFunc(r.order, func(a, b int32) int {
		return cmpDur(r.jobs[a].Submit, r.jobs[b].Submit)
	})
	return nil
}

// checkJob returns an error naming jobs[i] when a field is out of range.
func checkJob(i int, j *Job) error {
	where := fmt.Sprintf("sim: jobs[%d] %q", i, j.ID)
	switch {
	case j.ID == "":
		return fmt.Errorf("sim: jobs[%d]: id is empty", i)
	case j.Members < 1:
		return fmt.Errorf("%s: members must be >= 1, got %d", where, j.Members)
	case j.GPUsPerMember < 1:
		return fmt.Errorf("%s: gpusPerMember must be >= 1, got %d", where, j.GPUsPerMember)
	case j.Run <= 0:
		return fmt.Errorf("%s: run must be > 0, got %s", where, j.Run)
	case j.Limit < 0:
		return fmt.Errorf("%s: limit must be >= 0, got %s", where, j.Limit)
	case j.CheckpointGrace < 0:
		return fmt.Errorf("%s: checkpointGrace must be >= 0, got %s", where, j.CheckpointGrace)
	case j.CPUMillis < 0:
		return fmt.Errorf("%s: cpuMillis must be >= 0, got %d", where, j.CPUMillis)
	case j.MemoryMiB < 0:
		return fmt.Errorf("%s: memoryMiB must be >= 0, got %d", where, j.MemoryMiB)
	}
	return nil
}

// setTeams numbers the teams of the jobs by name and builds the
// snapshot's team list: the teams of Options.Teams, and every other team a
// job names with share 1, unless the policy reads no more than quotas.
func (r *runner) setTeams() {
	names, of := sortedTeams(r.jobs)
	for i := range r.st {
		r.st[i].team = of[i]
	}
	r.teams = newTeamBook(names, r.cfg.FairShare.HalfLife)
	r.snap.Teams = r.teams.snapshotTeams(r.opt.Teams, r.start, !readsTeamsOnlyForQuotas(&r.cfg))
}

// setNodeEvents checks the node events and queues them.
func (r *runner) setNodeEvents() error {
	r.nodeEv = slices.Clone(r.opt.NodeEvents)
	for k, e := range r.nodeEv {
		if _, ok := r.nodes.find(e.Node); !ok {
			return fmt.Errorf("sim: nodeEvents[%d]: unknown node %q", k, e.Node)
		}
		if e.State > topology.Down {
			return fmt.Errorf("sim: nodeEvents[%d]: unknown state %d", k, e.State)
		}
		r.q.push(event{at: e.At, kind: evNode, job: int32(k)})
	}
	return nil
}

// origin returns the earliest time of the run: the first arrival or node
// event (0 when there is neither).
func (r *runner) origin() time.Duration {
	origin := time.Duration(0)
	if len(r.jobs) > 0 {
		origin = r.jobs[r.order[0]].Submit
	}
	if len(r.nodeEv) > 0 {
		origin = min(origin, r.q.peek().at)
	}
	return origin
}

// checkTimes returns an ErrTimeRange error for the first arrival or node
// event past r.last.
func (r *runner) checkTimes(origin time.Duration) error {
	for i := range r.jobs {
		if r.jobs[i].Submit > r.last {
			return fmt.Errorf("sim: jobs[%d] %q: submit %s lies more than %s after the earliest time, %s: %w",
				i, r.jobs[i].ID, r.jobs[i].Submit, time.Duration(math.MaxInt64), origin, ErrTimeRange)
		}
	}
	for k, e := range r.nodeEv {
		if e.At > r.last {
			return fmt.Errorf("sim: nodeEvents[%d]: at %s lies more than %s after the earliest time, %s: %w",
				k, e.At, time.Duration(math.MaxInt64), origin, ErrTimeRange)
		}
	}
	return nil
}

// cmpDur compares durations as cmp.Compare does.
func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// nextTime returns the time of the next event or arrival.
func (r *runner) nextTime() (time.Duration, bool) {
	t, ok := time.Duration(0), false
	if r.q.len() > 0 {
		t, ok = r.q.peek().at, true
	}
	if r.next < len(r.order) {
		if a := r.jobs[r.order[r.next]].Submit; !ok || a < t {
			t, ok = a, true
		}
	}
	return t, ok
}

// loop runs the events in time order until there are none: at each
// distinct time it applies the queued events and arrivals of that time,
// then calls step when they changed what Step would see and something is
// pending (or a time limit or node change may make an eviction due). It
// fails when Step is called more than MaxStepsPerInstant times at one
// time.
func (r *runner) loop() error {
	maxSteps := r.opt.MaxStepsPerInstant
	if maxSteps <= 0 {
		maxSteps = 64
	}
	last, rounds := time.Duration(-1<<63), 0
	for {
		t, ok := r.nextTime()
		if !ok {
			return nil
		}
		if t == last {
			rounds++
			if rounds >= maxSteps {
				return fmt.Errorf("sim: more than %d Step calls at %s", maxSteps, t)
			}
		} else {
			last, rounds = t, 0
		}
		r.advance(t)
		changed, must := false, false
		for r.q.len() > 0 && r.q.peek().at == t {
			e := r.q.pop()
			if r.apply(e) {
				changed = true
				must = must || e.kind == evLimit || e.kind == evNode
			}
		}
		for r.next < len(r.order) && r.jobs[r.order[r.next]].Submit == t {
			r.arrive(r.order[r.next])
			r.next++
			changed = true
		}
		// With nothing pending, Step could only evict, and the events
		// that make evictions due (limits, node changes) force a Step.
		if !changed || (r.pending == 0 && !must) {
			continue
		}
		if err := r.step(); err != nil {
			return err
		}
	}
}

// advance integrates the GPUs in use up to t.
func (r *runner) advance(t time.Duration) {
	if t <= r.now {
		return
	}
	dt := (t - r.now).Seconds()
	r.gpuSec += float64(r.busy) * dt
	r.teams.charge(dt, r.start.Add(t))
	x := extras{reasons: r.reasons.counts}
	if r.rb != nil {
		x.stranded, x.cpu, x.mem = r.rb.strandedGPUs(r), r.rb.cpuUsed, r.rb.memUsed
		r.strandedSec += float64(x.stranded) * dt
	}
	r.samp.add(r.now, t, r.busy, r.pending, r.running, &r.teams, &x)
	r.now = t
}

// apply applies one queued event and reports whether it changed anything
// Step would see.
func (r *runner) apply(e event) bool {
	if e.kind == evWake {
		return e.at == r.wakeAt // a later decision may have moved it
	}
	if e.kind == evNode {
		ne := r.nodeEv[e.job]
		n, _ := r.nodes.find(ne.Node)
		r.pool.nodes[n].State = ne.State
		if r.rb != nil {
			r.rb.dirty = true
		}
		return true
	}
	s := &r.st[e.job]
	if s.epoch != e.epoch {
		return false
	}
	switch e.kind {
	case evLimit:
		return s.state == sRunning
	case evComplete:
		if s.state != sRunning {
			return false
		}
		r.release(e.job, "")
		r.finish(e.job, Completed, r.jobs[e.job].Run)
		return true
	case evEvicted:
		if s.state != sEvicting {
			return false
		}
		ran := s.evicted - s.started
		r.release(e.job, s.reason)
		if s.requeue {
			kept := ran
			if r.jobs[e.job].Kind == scheduler.Training {
				kept = 0
				if iv := r.opt.CheckpointInterval; iv > 0 {
					kept = ran / iv * iv
				}
			}
			s.progress = min(s.progress+kept, r.jobs[e.job].Run)
			s.state = sPending
			if r.rb != nil {
				r.rb.dirty = true
			}
			r.pending++
			r.pendingGPUs += r.jobs[e.job].Members * r.jobs[e.job].GPUsPerMember
			sj := &r.snap.Jobs[s.pos]
			sj.State, sj.Allocation, sj.Started, sj.EvictedAt = scheduler.Pending, nil, time.Time{}, time.Time{}
			return true
		}
		out := Dropped
		if s.reason == scheduler.EvictTimeLimit {
			out = Killed
		}
		r.finish(e.job, out, min(s.progress+ran, r.jobs[e.job].Run))
		return true
	}
	return false
}

// release frees the GPUs of job i, which leaves the running or evicting
// state.
func (r *runner) release(i int32, reason scheduler.EvictReason) {
	s := &r.st[i]
	for _, a := range s.alloc {
		n, _ := r.nodes.find(a.Node)
		r.held[n] &^= topology.SetOf(a.GPUs...)
	}
	if r.rb != nil {
		r.rb.hold(r, &r.jobs[i], s.alloc, -1)
	}
	g := r.jobs[i].Members * r.jobs[i].GPUsPerMember
	r.busy -= g
	r.teams.hold(s.team, -g)
	if s.state == sRunning {
		r.running--
	}
	if r.opt.RecordRuns {
		runs := r.res[i].Runs
		a := &runs[len(runs)-1]
		a.End = r.now
		a.Evicted = r.now
		if s.state == sEvicting {
			a.Evicted = s.evicted
		}
		a.Reason = reason
	}
	s.alloc = nil
}

// finish ends job i for good.
func (r *runner) finish(i int32, out Outcome, work time.Duration) {
	s := &r.st[i]
	s.state = sDone
	res := &r.res[i]
	res.Outcome = out
	res.Finish = r.now
	r.stuck = 0
	r.doneSec = r.gpuSec // finishes come in time order
	res.Run = work
	res.Wait = res.Finish - res.Submit - work
	r.finished++
	// Swap-remove from the snapshot.
	last := len(r.snap.Jobs) - 1
	p := s.pos
	if int(p) != last {
		r.snap.Jobs[p] = r.snap.Jobs[last]
		r.owner[p] = r.owner[last]
		r.st[r.owner[p]].pos = p
	}
	r.snap.Jobs[last] = scheduler.Job{}
	r.snap.Jobs = r.snap.Jobs[:last]
	r.owner = r.owner[:last]
	s.pos = -1
}

// arrive makes job i pending and adds it to the snapshot.
func (r *runner) arrive(i int32) {
	r.stuck = 0
	j := &r.jobs[i]
	s := &r.st[i]
	s.state = sPending
	s.pos = int32(len(r.snap.Jobs))
	r.pending++
	r.pendingGPUs += j.Members * j.GPUsPerMember
	r.snap.Jobs = append(r.snap.Jobs, scheduler.Job{
		ID: j.ID, Team: j.Team, Tier: j.Tier, Kind: j.Kind,
		Submitted: r.start.Add(j.Submit), Members: j.Members, GPUsPerMember: j.GPUsPerMember,
		GPUType: j.GPUType, TimeLimit: j.Limit, CheckpointGrace: j.CheckpointGrace,
		CPUMillis: j.CPUMillis, MemoryMiB: j.MemoryMiB,
	})
	if r.rb != nil {
		r.rb.dirty = true
	}
	r.owner = append(r.owner, i)
}

// step calls Step on the current snapshot and applies its decision.
func (r *runner) step() error {
	r.snap.Now = r.start.Add(r.now)
	r.snap.Cluster.Nodes = r.pool.shown(r.busy, r.pendingGPUs, r.held)
	for k := range r.snap.Teams {
		r.snap.Teams[k].Usage = r.teams.ledger.Own(r.snap.Teams[k].Name, r.snap.Now)
	}
	var t0 time.Time
	if r.opt.Clock != nil {
		t0 = r.opt.Clock()
	}
	d, err := r.sched.Step(&r.snap)
	if r.opt.Clock != nil {
		r.lat = append(r.lat, r.opt.Clock().Sub(t0))
	}
	r.steps++
	if err != nil {
		return fmt.Errorf("sim: at %s: %w", r.now, err)
	}
	if r.opt.Observe != nil {
		r.opt.Observe(&r.snap, d)
	}
	// The decision's reservations are the next snapshot's plan: the
	// promises it made hold across Steps.
	r.snap.Plan = d.Reservations
	r.pool.planTop = 0
	for _, res := range d.Reservations {
		if i, ok := r.byID[res.Job]; ok && r.res[i].Attempts == 0 && !r.res[i].Promised {
			r.res[i].Promised, r.res[i].Promise = true, res.Start.Sub(r.start)
		}
		for _, a := range res.Allocation {
			if n, ok := r.nodes.find(a.Node); ok {
				r.pool.planTop = max(r.pool.planTop, n+1)
			}
		}
	}
	for k := range d.Evictions {
		if err := r.evict(&d.Evictions[k]); err != nil {
			return fmt.Errorf("sim: at %s: %w", r.now, err)
		}
	}
	for k := range d.Placements {
		if err := r.place(&d.Placements[k]); err != nil {
			return fmt.Errorf("sim: at %s: %w", r.now, err)
		}
	}
	r.reasons.set(d)
	r.wake(d)
	if r.opt.Progress != nil {
		r.opt.Progress(r.finished, len(r.jobs))
	}
	return nil
}

// wake queues a Step at d's NextWake when the policy has a minimum
// runtime: a job that has run it becomes a victim then, with no event of
// its own (the other instants NextWake names, limits, grace ends and
// reservations on them, are events or coincide with them here; the
// crossings of runs from now with them change no job's start, which
// waits for an event). Only the latest decision's wake is kept.
func (r *runner) wake(d *scheduler.Decision) {
	if r.cfg.MinRuntime <= 0 || d.NextWake.IsZero() {
		return
	}
	at := d.NextWake.Sub(r.start)
	if at <= r.now || at == r.wakeAt {
		return
	}
	r.wakeAt = at
	r.q.push(event{at: at, kind: evWake})
}

// evict applies an eviction of the decision: the job, which must be
// running, is evicting until now + its grace, when an evEvicted event
// releases it. Preemptions count toward MaxPreemptions.
func (r *runner) evict(e *scheduler.Eviction) error {
	i, ok := r.byID[e.Job]
	if !ok || r.st[i].state != sRunning {
		return fmt.Errorf("decision evicts job %q, which is not running", e.Job)
	}
	grace := max(e.Grace, 0)
	if grace > r.last-r.now {
		return fmt.Errorf("eviction of job %q: its grace of %s from %s ends past %s: %w", e.Job, grace, r.now, r.last, ErrTimeRange)
	}
	s := &r.st[i]
	s.state = sEvicting
	s.evicted = r.now
	s.reason = e.Reason
	s.requeue = e.Requeue
	s.epoch++
	r.running--
	r.res[i].Evictions++
	if e.Reason == scheduler.EvictPreempted {
		r.res[i].Preemptions++
		limit := r.opt.MaxPreemptions
		if limit <= 0 {
			limit = 10000
		}
		if r.stuck++; r.stuck > limit {
			return fmt.Errorf("more than %d preemptions while no job arrived or finished: the policy preempts and requeues jobs without end", limit)
		}
	}
	if e.Reason == scheduler.EvictNodeDown {
		r.nodeDown++
	}
	sj := &r.snap.Jobs[s.pos]
	sj.State = scheduler.Evicting
	sj.EvictedAt = r.snap.Now
	r.q.push(event{at: r.now + grace, kind: evEvicted, job: i, epoch: s.epoch})
	return nil
}

var errEmptyAllocation = errors.New("empty allocation")

// place applies a placement of the decision after checking it: the job is
// pending, the allocation holds its GPUs, on ready nodes, healthy and
// free. The job runs from now; an event ends the attempt at completion or
// at its enforced time limit, whichever comes first.
func (r *runner) place(p *scheduler.Placement) error {
	i, ok := r.byID[p.Job]
	if !ok || r.st[i].state != sPending {
		return fmt.Errorf("decision places job %q, which is not pending", p.Job)
	}
	j := &r.jobs[i]
	if len(p.Allocation) == 0 {
		return fmt.Errorf("placement of job %q: %w", p.Job, errEmptyAllocation)
	}
	if got := p.Allocation.Count(); got != j.Members*j.GPUsPerMember {
		return fmt.Errorf("placement of job %q holds %d GPUs, want %d", p.Job, got, j.Members*j.GPUsPerMember)
	}
	s := &r.st[i]
	// The attempt ends when its remaining work is done, or at its time
	// limit when that comes first and is enforced.
	ev := event{at: j.Run - s.progress, kind: evComplete, job: i, epoch: s.epoch}
	if j.Limit > 0 && ev.at > j.Limit && !r.cfg.IgnoreTimeLimits {
		ev.at, ev.kind = j.Limit, evLimit
	}
	if ev.at > r.last-r.now {
		return fmt.Errorf("placement of job %q: its run of %s from %s ends past %s: %w", p.Job, ev.at, r.now, r.last, ErrTimeRange)
	}
	ev.at += r.now
	for _, a := range p.Allocation {
		n, ok := r.nodes.find(a.Node)
		if !ok {
			return fmt.Errorf("placement of job %q: unknown node %q", p.Job, a.Node)
		}
		node := &r.pool.nodes[n]
		if node.State != topology.Ready {
			return fmt.Errorf("placement of job %q on node %q, which is %s", p.Job, a.Node, node.State)
		}
		set := topology.SetOf(a.GPUs...)
		if set.Len() != len(a.GPUs) || slices.ContainsFunc(a.GPUs, func(g int) bool { return g >= node.GPUs }) {
			return fmt.Errorf("placement of job %q: bad GPU list %v on node %q", p.Job, a.GPUs, a.Node)
		}
		if set&r.held[n] != 0 {
			return fmt.Errorf("placement of job %q: GPUs %v of node %q are already held", p.Job, (set & r.held[n]).Indices(), a.Node)
		}
		if set&topology.SetOf(node.Unhealthy...) != 0 {
			return fmt.Errorf("placement of job %q: unhealthy GPUs of node %q", p.Job, a.Node)
		}
		r.held[n] |= set
		r.pool.took(n)
	}
	s.state = sRunning
	s.started = r.now
	s.alloc = p.Allocation
	if r.rb != nil {
		r.rb.hold(r, j, p.Allocation, 1)
	}
	r.pending--
	r.running++
	g := j.Members * j.GPUsPerMember
	r.pendingGPUs -= g
	r.busy += g
	r.teams.hold(s.team, g)
	res := &r.res[i]
	if res.Attempts == 0 {
		res.Start = r.now
	}
	res.Attempts++
	if r.opt.RecordRuns {
		res.Runs = append(res.Runs, Attempt{Start: r.now, Allocation: p.Allocation.Clone()})
	}
	sj := &r.snap.Jobs[s.pos]
	sj.State = scheduler.Running
	sj.Started = r.snap.Now
	sj.Allocation = p.Allocation
	r.q.push(ev)
	return nil
}
