package scheduler

import (
	"fmt"
	"time"

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
	// different domains of SpreadLevel, as far as capacity allows.
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
	ID   string
	Team string
	// Tier is the priority tier: 0 is the highest (production, never
	// preempted by default); the default policy knows tiers 0..3.
	Tier      int
	Kind      Kind
	Submitted time.Time
	// Members and GPUsPerMember give the shape; both must be >= 1.
	Members       int
	GPUsPerMember int
	// GPUType, when set, restricts the job to nodes of that GPU type.
	GPUType string
	// TimeLimit, when positive, is how long the job may run. Zero means
	// the job never ends by itself (inference).
	TimeLimit time.Duration
	// CheckpointGrace is how long the job needs to checkpoint and stop
	// once evicted.
	CheckpointGrace time.Duration
	Topology        TopologySpec
	Placement       PlacementMode
	// Group names the replicas of one service, for spread placement.
	Group string
	// SpreadLevel, when set, spreads across domains of that level rather
	// than across nodes.
	SpreadLevel string
	State       JobState
	// Started is when a running job started.
	Started time.Time
	// EvictedAt is when an evicting job was told to stop.
	EvictedAt time.Time
	// Allocation is what a running or evicting job holds; it must hold
	// exactly Members × GPUsPerMember GPUs.
	Allocation topology.Allocation
}

// GPUs returns Members × GPUsPerMember.
func (j *Job) GPUs() int { return j.Members * j.GPUsPerMember }

// Quota caps a team's GPUs: GPUs always, and BorrowLimit more while
// others leave them idle.
type Quota struct {
	GPUs        int
	BorrowLimit int
}

// Team is an account of the fair-share tree.
type Team struct {
	Name string
	// Parent names the parent account; empty for a top-level team.
	Parent string
	// Share is the team's share among its siblings (any positive scale).
	Share float64
	// Usage is the team's decayed usage in GPU-seconds as of the
	// snapshot's Now.
	Usage float64
	// Quota, when non-nil, caps the team's GPUs.
	Quota *Quota
}

// Snapshot is everything Step looks at: the time, the cluster, the
// teams and every job the host knows (pending, running and evicting).
// Step never modifies it.
type Snapshot struct {
	Now     time.Time
	Cluster topology.Cluster
	Teams   []Team
	Jobs    []Job
}

// Placement starts a pending job now on the given GPUs.
type Placement struct {
	Job        string
	Allocation topology.Allocation
}

// EvictReason says why a running job must stop.
type EvictReason string

// Eviction reasons.
const (
	EvictPreempted EvictReason = "preempted"
	EvictTimeLimit EvictReason = "time-limit"
	EvictNodeDown  EvictReason = "node-down"
)

// Eviction tells the host to stop a running job. It keeps its allocation
// for Grace, then it is gone; Requeue says the job should return to the
// queue as pending.
type Eviction struct {
	Job    string
	Reason EvictReason
	// By names the preemptor, for reason preempted.
	By      string
	Grace   time.Duration
	Requeue bool
}

// Reservation promises a blocked job the given GPUs from Start on. Later
// placements never delay it.
type Reservation struct {
	Job        string
	Start      time.Time
	Allocation topology.Allocation
}

// Reason is a code that says why a pending job waits.
type Reason string

// Pending reasons.
const (
	// ReasonInsufficientGPUs: not enough free GPUs of its type now.
	ReasonInsufficientGPUs Reason = "insufficient-gpus"
	// ReasonTopology: enough GPUs, but not inside one domain of the
	// required level.
	ReasonTopology Reason = "topology"
	// ReasonGPUType: no node of the cluster has the requested GPU type.
	ReasonGPUType Reason = "gpu-type"
	// ReasonQuota: the team's quota does not allow it.
	ReasonQuota Reason = "quota"
	// ReasonBehindReservation: it fits now but would delay a reservation.
	ReasonBehindReservation Reason = "behind-reservation"
	// ReasonAwaitingPreemption: its tier may preempt, but GPUs already
	// being freed (by evictions under way or time limits) start it no
	// later than a preemption would, and a custom ReservationPolicy
	// declined it a reservation on them (by default it gets one).
	ReasonAwaitingPreemption Reason = "awaiting-preemption"
	// ReasonUnsatisfiable: it can never fit this cluster.
	ReasonUnsatisfiable Reason = "unsatisfiable"
	// ReasonPriority: a job ahead of it in priority order is blocked and
	// backfill is off.
	ReasonPriority Reason = "priority"
)

// Wait explains why a pending job did not start. Start, when not zero,
// is the estimated start time.
type Wait struct {
	Job     string
	Reason  Reason
	Message string
	Start   time.Time
}

// Decision is the answer of one Step. Every pending job of the snapshot
// appears exactly once among Placements, Reservations and Pending (a job
// with a reservation is not also in Pending); every running job either
// keeps running or appears in Evictions. Each list is sorted by job ID.
type Decision struct {
	Placements   []Placement
	Evictions    []Eviction
	Reservations []Reservation
	Pending      []Wait
}
