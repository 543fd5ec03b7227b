package scheduler

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/topology"
)

// Kind is the kind of work a job does.
type Kind uint8

const (
	// Training jobs are gangs with time limits that tolerate preemption
	// after a checkpoint. It is the zero value.
	Training Kind = iota
	// Inference jobs are pods of 1–8 GPUs that run indefinitely.
	Inference
)

// String returns "training" or "inference".
func (k Kind) String() string {
	switch k {
	case Training:
		return "training"
	case Inference:
		return "inference"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// JobState is where a job is in its life.
type JobState uint8

const (
	// Pending jobs wait for GPUs. It is the zero value.
	Pending JobState = iota
	// Running jobs hold their allocation.
	Running
	// Evicting jobs were told to stop and still hold their allocation
	// until the host reports them gone.
	Evicting
)

// String returns "pending", "running" or "evicting".
func (s JobState) String() string {
	switch s {
	case Pending:
		return "pending"
	case Running:
		return "running"
	case Evicting:
		return "evicting"
	}
	return fmt.Sprintf("JobState(%d)", uint8(s))
}

// PlacementMode chooses how a job's members are spread over nodes.
type PlacementMode uint8

const (
	// Pack fills the fullest nodes that fit. It is the zero value.
	Pack PlacementMode = iota
	// Spread puts members (and jobs of one Group) on different nodes, or
	// different domains of SpreadLevel, as far as capacity allows: a job
	// placed now puts its members and the group's running and newly
	// placed jobs on as many places as any placement on the free GPUs
	// could, within the domain its Topology leads to (a required or
	// preferred level is honoured first). A reservation spreads the
	// job's own members but does not look at its group.
	Spread
)

// String returns "pack" or "spread".
func (p PlacementMode) String() string {
	if p == Spread {
		return "spread"
	}
	if p == Pack {
		return "pack"
	}
	return fmt.Sprintf("PlacementMode(%d)", uint8(p))
}

// TopologySpec constrains where the members of one job may sit.
type TopologySpec struct {
	// Required, when set, is a level of the cluster: all members sit in
	// one domain of it.
	Required string
	// Preferred, when set, is a tighter level tried first; placement
	// relaxes outward level by level down to Required.
	Preferred string
}

// Job is one unit of work: a gang of Members members, each of
// GPUsPerMember GPUs on one node. Members of one gang may share a node.
type Job struct {
	// ID identifies the job; it must be non-empty and unique in the
	// snapshot. Decisions name jobs by ID and list them in ID order.
	ID string
	// Team names the job's team in Snapshot.Teams, whose fair-share
	// factor ranks the job and whose quota admits it. A team missing from
	// Snapshot.Teams counts as a top-level team of share 1 with no usage
	// and no quota; an empty Team has a fair-share factor of 0.
	Team string
	// Tier is the priority tier: P0 is the highest (production, never
	// preempted by default); the default policy knows P0..P3, and TierN
	// names the tiers of a policy with more. The zero value is unset: the
	// lowest tier of the policy in force (P3 by default), preempted by
	// every higher tier and preempting nothing under the default matrix.
	// A job decoded from JSON without "tier" is unset too, so Go and JSON
	// agree. A set tier outside the policy's tiers is an input error.
	Tier Tier
	// Kind says whether the job is training (the zero value) or
	// inference. Step only validates it: TimeLimit, not Kind, decides
	// whether a job ends by itself.
	Kind Kind
	// Submitted is when the job was submitted. The default orders count
	// its age from it and serve earlier submissions first among equals.
	// Zero (a JSON job without "submitted") counts as the earliest time:
	// such a job has the full age factor and goes first among equals.
	Submitted time.Time
	// Members is the number of members of the gang, 1 to 2^20; each
	// member sits whole on one node. Set it to 1 for a job of one node:
	// the JSON form defaults to 1, but in Go 0 is invalid.
	Members int
	// GPUsPerMember is the number of GPUs each member needs on its node,
	// 1 to topology.MaxGPUsPerNode.
	GPUsPerMember int
	// GPUType, when set, restricts the job to nodes of that GPU type.
	// When it is empty, all members of a gang still go on nodes of one
	// GPU type (the scheduler picks it), unless MixGPUTypes is set.
	GPUType string
	// MixGPUTypes lets a job that names no GPUType place its members on
	// nodes of different GPU types (JSON "mixGPUTypes": true). It has no
	// effect on a job that names a GPUType or on a cluster of one type.
	MixGPUTypes bool
	// CPUMillis is the CPU each member needs on its node, in thousandths
	// of a core (JSON "cpuMillis"); zero asks for none. A member fits a
	// node only where its GPUs, CPU and memory all fit; a node whose
	// CPUMillis is zero has CPU without limit.
	CPUMillis int
	// MemoryMiB is the memory each member needs on its node, in MiB
	// (JSON "memoryMiB"); zero asks for none.
	MemoryMiB int
	// EligibleNodes, when not nil, names the only nodes the job's members
	// may use (JSON "eligibleNodes"); a host evaluates its own selectors,
	// affinities and taints into this list. Nil means every node; an
	// empty, non-nil list means none. Every name must be a node of the
	// cluster, listed once.
	EligibleNodes []string
	// TimeLimit, when positive, is how long the job may run. Zero means
	// the job never ends by itself (inference).
	TimeLimit time.Duration
	// CheckpointGrace is how long the job needs to checkpoint and stop
	// once evicted.
	CheckpointGrace time.Duration
	// Topology constrains the domains its members may sit in; the zero
	// value places them anywhere.
	Topology TopologySpec
	// Placement packs the members onto the fullest nodes (Pack, the zero
	// value) or spreads them out (Spread).
	Placement PlacementMode
	// Group names the replicas of one service, for spread placement: a
	// Spread job avoids the places of the group's running jobs (evicting
	// ones, and those the same Step evicts on a down node or at their
	// time limit, are leaving) and of those placed earlier in the Step,
	// whatever their own Placement. A Pack job of a group is placed as
	// any Pack job.
	Group string
	// SpreadLevel, when set, spreads across domains of that level rather
	// than across nodes. It must be a level of the cluster; a Pack job
	// ignores it.
	SpreadLevel string
	// State is pending (the zero value), running or evicting. Running and
	// evicting jobs must carry an Allocation; pending jobs carry none.
	State JobState
	// Started is when a running job started; its time limit counts from
	// it, and it is past its limit once Started + TimeLimit is not after
	// Now. Zero means the host does not know: the limit then counts from
	// Now, so such a job is never evicted at its limit. A time after Now
	// is taken as given.
	Started time.Time
	// EvictedAt is when an evicting job was told to stop. Step expects
	// it gone, and its GPUs free, at EvictedAt + CheckpointGrace, or at
	// Now when that has passed or EvictedAt is zero; a time after Now is
	// taken as given (the GPUs free up that much later). An evicting job
	// is never evicted again, not even on a down node.
	EvictedAt time.Time
	// Allocation is what a running or evicting job holds; it must hold
	// exactly Members × GPUsPerMember GPUs. It may name GPUs that have
	// turned unhealthy and nodes that are draining or down since: Step
	// evicts a running job with GPUs on a down node (reason node-down),
	// while one on unhealthy GPUs or a draining node keeps running; no
	// placement or reservation ever takes such GPUs, held or not.
	Allocation topology.Allocation
}

// GPUs returns Members × GPUsPerMember.
func (j *Job) GPUs() int { return j.Members * j.GPUsPerMember }

// Quota caps a team's GPUs: GPUs always, and BorrowLimit more while
// others leave them idle; CPUMillis and MemoryMiB, when set, cap the CPU
// and memory of its jobs (per member times members, as they hold them on
// their nodes). It is the fair-share package's quota, so that a host
// passes its quotas through unchanged; in a snapshot every field must be
// >= 0 (JSON keys "gpus", "borrowLimit", "cpuMillis" and "memoryMiB"),
// GPUs and BorrowLimit both zero limit no GPUs, and a zero CPUMillis or
// MemoryMiB limits nothing.
type Quota = fairshare.Quota

// Team is an account of the fair-share tree.
type Team struct {
	// Name identifies the team; it must be non-empty and unique. Jobs
	// name it in Job.Team.
	Name string
	// Parent names the parent account; empty for a top-level team.
	Parent string
	// Share is the team's share among its siblings, on any scale; it
	// must be finite and >= 0, and a share of 0 entitles the team to
	// nothing (see fairshare.Account).
	Share float64
	// Usage is the team's own decayed usage in GPU-seconds as of the
	// snapshot's Now: the usage of its own jobs, not of its sub-teams,
	// which Step adds up the tree itself (fairshare.Ledger.Own gives it;
	// fairshare.Ledger.Usage, which includes the sub-teams, would count
	// their usage twice).
	Usage float64
	// Quota, when non-nil, caps the GPUs of the team's own jobs; the jobs
	// of its sub-teams do not count against it.
	Quota *Quota
}

// Snapshot is everything Step looks at: the time, the cluster, the
// teams and every job the host knows (pending, running and evicting).
// Step never modifies it.
type Snapshot struct {
	// Now is the time of the snapshot, the only clock Step reads; it must
	// not be zero.
	Now time.Time
	// Cluster is the nodes and their topology levels; it must be valid
	// (see topology.Cluster.Validate).
	Cluster topology.Cluster
	// Teams are the fair-share accounts, with their usage and quotas, in
	// any order.
	Teams []Team
	// Jobs are all the jobs the host knows (pending, running and
	// evicting), in any order.
	Jobs []Job
	// Plan is the Reservations of the previous decision, passed back
	// unchanged; nil plans from scratch. With a plan, every reservation
	// is a promise: a pending job's start is never later than its entry
	// says unless a GPU of the entry became unusable (its node is down
	// or draining, the GPU unhealthy, or held by a job that did not
	// release it when its time limit said), a job of a strictly higher
	// tier took it, or the job changed (its shape, GPU type or time
	// limit no longer match the entry); its pending message names that
	// cause, or, when it holds a reservation later than its entry, the
	// reservation's Message does. A job that may preempt is still given
	// the preemption stage at its place in the queue, as without a plan.
	// A job whose promised start has come starts on the promised
	// GPUs; conservative backfill also moves promises earlier when
	// capacity frees up early. Entries for jobs that are not pending are
	// ignored, and so are entries on nodes or GPUs the cluster no longer
	// has (the promise is broken). An entry must name a job and a start
	// and give an allocation of named nodes and GPU indices >= 0, each
	// GPU once; two entries for one job are an error (see Validate).
	Plan []Reservation
}

// Placement starts a pending job now on the given GPUs.
type Placement struct {
	// Job is the ID of the pending job to start.
	Job string
	// Allocation is the GPUs to start it on, one entry per node, nodes in
	// name order and GPUs ascending.
	Allocation topology.Allocation
}

// EvictReason says why a running job must stop.
type EvictReason string

// Eviction reasons.
const (
	// EvictPreempted: a pending job whose tier may preempt the job's
	// needs its GPUs (Eviction.By names it). The job gets its checkpoint
	// grace and is requeued.
	EvictPreempted EvictReason = "preempted"
	// EvictTimeLimit: the job has run for its time limit. It gets its
	// checkpoint grace and is not requeued.
	EvictTimeLimit EvictReason = "time-limit"
	// EvictNodeDown: a node it holds GPUs on is down. It gets no grace
	// and is requeued. A host that still lists it as evicting in a later
	// snapshot should leave its EvictedAt zero: with EvictedAt set, Step
	// expects it to keep its GPUs for its CheckpointGrace like any
	// evicting job.
	EvictNodeDown EvictReason = "node-down"
)

// Eviction tells the host to stop a running job. It keeps its allocation
// for Grace, then it is gone; Requeue says the job should return to the
// queue as pending.
type Eviction struct {
	// Job is the ID of the running job to stop.
	Job string
	// Reason says why it must stop.
	Reason EvictReason
	// By names the preemptor, for reason preempted.
	By string
	// Grace is how long the job may keep its GPUs to checkpoint and stop:
	// its CheckpointGrace, or zero for reason node-down.
	Grace time.Duration
	// Requeue asks the host to return the job to the queue as pending
	// once it is gone: true for reasons preempted and node-down, false
	// for time-limit.
	Requeue bool
}

// Reservation promises a blocked job the given GPUs from Start on. No
// placement or reservation of the same Decision delays it: replayed
// forward with the time limits and graces it was planned with, the job
// can start at Start on these GPUs (see the package doc). The promise is
// the decision's, not the scheduler's: Step keeps no state, so the next
// Step plans afresh from its own snapshot and may give the job another
// start or other GPUs. The start can move later when a job of higher
// priority arrives or is requeued, or when the plan of a job ahead of it
// changes as the cluster does (its GPUs may then be chosen elsewhere and
// take this job's); it can move earlier when jobs end before their limits.
type Reservation struct {
	// Job is the ID of the pending job the GPUs are promised to.
	Job string
	// Start is the earliest time the GPUs are expected to be free for it,
	// going by the time limits and eviction graces of the jobs that hold
	// them; never after the end of year 9999 (see Config.Horizon).
	Start time.Time
	// Allocation is the GPUs promised, one entry per node, nodes in name
	// order and GPUs ascending.
	Allocation topology.Allocation
	// Message, in a decision, says why the job's start is later than the
	// snapshot's plan promised it, naming the cause (a GPU of the promise
	// became unusable, a job ahead took it, the job changed: DESIGN 3a),
	// as a waiting job's message does; empty when the job had no promise
	// or starts no later than it. In a plan it is read and not used.
	Message string
}

// Reason is a code that says why a pending job waits.
type Reason string

// Pending reasons.
const (
	// ReasonInsufficientGPUs: not enough free GPUs of its type now, or
	// enough but split across nodes with room for too few members (the
	// message then says so), or too few ready nodes even with every job
	// gone, though it would fit with the nodes that are down or draining
	// (the message then says it waits for them).
	ReasonInsufficientGPUs Reason = "insufficient-gpus"
	// ReasonTopology: enough GPUs, but not inside one domain of the
	// required level.
	ReasonTopology Reason = "topology"
	// ReasonGPUType: no node of the cluster has the requested GPU type.
	ReasonGPUType Reason = "gpu-type"
	// ReasonQuota: the team's quota does not allow it.
	ReasonQuota Reason = "quota"
	// ReasonBehindReservation: it fits now but would delay a reservation.
	// The message names up to three reservations it could delay, the
	// soonest first (by start, then job), and counts the others: those
	// that start within its run and hold GPUs free now on nodes of its
	// GPU type with room for one of its members. For a job bound to one domain of a
	// level, that includes reservations in domains it cannot fit now.
	ReasonBehindReservation Reason = "behind-reservation"
	// ReasonAwaitingPreemption: its tier may preempt, but GPUs already
	// being freed (by evictions under way or time limits) start it no
	// later than a preemption would, and a custom ReservationPolicy
	// declined it a reservation on them (by default it gets one); or the
	// Step's disruption budget (Config.MaxEvictedGPUs) is spent, which
	// the message says.
	ReasonAwaitingPreemption Reason = "awaiting-preemption"
	// ReasonUnsatisfiable: it can never fit this cluster: not even with
	// every job gone and every node up, on the healthy GPUs of its type
	// (of one type, for a gang that names none and does not mix types).
	ReasonUnsatisfiable Reason = "unsatisfiable"
	// ReasonNoEligibleNode: the job's GPUs would fit elsewhere but not on
	// its eligible nodes (Job.EligibleNodes): the free GPUs now would hold
	// it, or the cluster could with every job gone, but its eligible
	// nodes cannot (for good, or until eligible nodes that are down or
	// draining come back, which the message then says).
	ReasonNoEligibleNode Reason = "no-eligible-node"
	// ReasonPriority: a job ahead of it in priority order is blocked and
	// backfill is off.
	ReasonPriority Reason = "priority"
	// ReasonInsufficientCPU: the free GPUs would hold it, but the nodes
	// with them lack the CPU its members ask (Job.CPUMillis). The CPU of
	// reservations counts as used from now on (see the backfill package).
	ReasonInsufficientCPU Reason = "insufficient-cpu"
	// ReasonInsufficientMemory: the free GPUs, and their nodes' CPU,
	// would hold it, but those nodes lack the memory its members ask
	// (Job.MemoryMiB).
	ReasonInsufficientMemory Reason = "insufficient-memory"
)

// Wait explains why a pending job did not start. Start, when not zero,
// is the estimated start time.
type Wait struct {
	// Job is the ID of the pending job.
	Job string
	// Reason is the code of why it waits.
	Reason Reason
	// Message says the same in words, with the numbers behind it (for
	// example "needs 4×8 GPUs, 12 free").
	Message string
	// Start, when not zero, is the estimated start time; Step sets it
	// only for ReasonAwaitingPreemption. It is estimated at the job's
	// turn: the ReservationPolicy declined to reserve those GPUs, so jobs
	// handled after it may take them. Like a reservation's start, it is
	// never after the end of year 9999.
	Start time.Time
}

// Decision is the answer of one Step. Every pending job of the snapshot
// appears exactly once among Placements, Reservations and Pending (a job
// with a reservation is not also in Pending); every running job either
// keeps running or appears in Evictions. Each list is sorted by job ID.
type Decision struct {
	// Placements are the pending jobs to start now.
	Placements []Placement
	// Evictions are the running jobs to stop.
	Evictions []Eviction
	// Reservations are the blocked jobs promised GPUs at a later time.
	Reservations []Reservation
	// Pending are the other pending jobs, each with why it waits.
	Pending []Wait
	// NextWake, when not zero, is the earliest instant after the
	// snapshot's Now at which the same snapshot, advanced to that instant
	// with nothing else changed (running jobs still running, evicting
	// ones still evicting), could be decided otherwise: a running job
	// reaches its time limit, an evicting job's checkpoint grace ends, a
	// reservation comes due, a job protected by Config.MinRuntime
	// becomes preemptible while a preemptor waits, or a threshold of the
	// decision is crossed as the clock moves (a job started now would
	// reach into a reservation, waiting would be as fast as preempting).
	// Before NextWake the same snapshot gets the same decision but for
	// its times; the gradual drift of priorities with age and decayed
	// usage does not count. A host that Steps on every event (arrival,
	// end, node change, applied decision) and at NextWake misses
	// nothing. It may come earlier than the first change: it is a time
	// to look again, not a promise that something changes then; when a
	// comparison ties at now (a run from now ending just as a time limit
	// does), it is the next nanosecond. Zero when nothing is due before
	// the end of year 9999 (see Config.Horizon).
	NextWake time.Time
}
