package sim

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// Outcome is how a job's simulation ended.
type Outcome uint8

const (
	// Unfinished jobs never completed: they waited forever (for example,
	// a job too large for the cluster) when the events ran out.
	Unfinished Outcome = iota
	// Completed jobs did all their work.
	Completed
	// Killed jobs were evicted at their time limit and not requeued.
	Killed
	// Dropped jobs were evicted for another reason and not requeued.
	Dropped
)

// String returns "unfinished", "completed", "killed" or "dropped".
func (o Outcome) String() string {
	switch o {
	case Unfinished:
		return "unfinished"
	case Completed:
		return "completed"
	case Killed:
		return "killed"
	case Dropped:
		return "dropped"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Attempt is one stay of a job on GPUs, recorded when
// [Options.RecordRuns] is set.
type Attempt struct {
	// Start is when the job was placed.
	Start time.Duration
	// Evicted is when it was told to stop, or zero-length (== End) when
	// it completed.
	Evicted time.Duration
	// End is when it released its GPUs.
	End time.Duration
	// Reason is the eviction reason, "" when the attempt completed.
	Reason scheduler.EvictReason
	// Allocation is the GPUs it held.
	Allocation topology.Allocation
}

// JobResult is what happened to one job. Times are offsets from
// [Options.Start].
type JobResult struct {
	// ID is the job's ID.
	ID string
	// Team is the job's team.
	Team string
	// Outcome says how it ended.
	Outcome Outcome
	// Submit is the arrival time.
	Submit time.Duration
	// Start is the first start; it is meaningful when Attempts > 0.
	Start time.Duration
	// Finish is when it released its GPUs for the last time.
	Finish time.Duration
	// Run is the useful work done: Job.Run for a completed job; for a
	// killed or dropped one, the time it ran in its last attempt plus the
	// work kept from earlier attempts.
	Run time.Duration
	// Wait is Finish − Submit − Run: time spent queued, checkpointing
	// and redoing lost work.
	Wait time.Duration
	// Promised reports whether the job was given a reservation (a
	// promised start, [scheduler.Reservation]) before it first started;
	// Promise is the start of the first one, the promise a host would
	// have told its user. The promise was kept when Start <= Promise.
	Promised bool
	Promise  time.Duration
	// Attempts counts the placements of the job.
	Attempts int
	// Evictions counts its evictions, Preemptions those with reason
	// preempted.
	Evictions, Preemptions int
	// Runs holds every attempt when [Options.RecordRuns] is set.
	Runs []Attempt
}

// Flow returns Finish − Submit, the job completion time.
func (r *JobResult) Flow() time.Duration { return r.Finish - r.Submit }

// BoundedSlowdown returns max(1, (Wait+Run) / max(Run, 10 s)).
func (r *JobResult) BoundedSlowdown() float64 {
	return boundedSlowdown(r.Wait, r.Run)
}

func boundedSlowdown(wait, run time.Duration) float64 {
	s := float64(wait+run) / float64(max(run, 10*time.Second))
	return max(1, s)
}

// Result is the outcome of [Run].
type Result struct {
	// Jobs holds one result per input job, in input order.
	Jobs []JobResult
	// Summary aggregates the metrics.
	Summary Summary
	// Teams names the teams of Series' TeamShare columns, sorted.
	Teams []string
	// Reasons names the pending reasons of Series' Pending columns,
	// sorted: those the decisions gave.
	Reasons []scheduler.Reason
	// Series is the cluster over time, at most [Options.MaxPoints] points.
	Series []Point
}
