// Package sim is a deterministic discrete-event simulator that drives
// [scheduler.Scheduler.Step] over a workload.
//
// [Run] takes a cluster, a list of [Job]s, a policy and [Options] (start
// time, node failures and repairs, a checkpoint interval, an optional
// clock for Step latency) and returns a [Result]: what happened to every
// job, a [Summary] of the metrics and a bounded time series for charts.
//
//	jobs := []sim.Job{{ID: "a", Run: time.Hour, Limit: 2 * time.Hour, Members: 2, GPUsPerMember: 8}}
//	res, err := sim.Run(sim.Uniform(64, 8), jobs, scheduler.Config{}, sim.Options{})
//	// res.Jobs[0].Start, res.Summary.MeanBoundedSlowdown, res.Summary.Utilization
//
// examples/simulate reads workload traces into jobs and prints the
// summary; the package example works one through by hand.
//
// # Events and Step
//
// Events are arrivals, completions, time limits falling due, the end of
// evictions and node state changes. At every distinct event time the
// simulator applies all events of that time — releases first (finished
// evictions, completions), then time limits, node changes and arrivals —
// builds the snapshot (Now, the cluster, every pending, running and
// evicting job with its allocation; finished jobs are left out) and calls
// Step once. It then applies the decision: placements start now;
// evictions make jobs evicting until now + the eviction's grace, after
// which they are gone and, when the eviction says Requeue, pending again
// with their original submit time. Reservations are advice and change
// nothing. An eviction with zero grace ends at the instant it was
// decided, so Step is called once more at that instant (bounded by
// [Options.MaxStepsPerInstant]). When nothing is pending after an
// instant's events, releases alone (finished evictions, completions) call
// no Step, since Step could only evict and the events that make evictions
// due (time limits, node changes) always call it. The snapshot's job list is kept incrementally between steps.
//
// A job runs for its Run time. When that exceeds its Limit it is not
// completed: an event at start+Limit makes Step see the limit due, the
// scheduler evicts it with reason time-limit, and it is killed (unless
// the policy ignores time limits, in which case it runs to completion).
// A job whose Run equals its Limit completes normally: completions at an
// instant are applied before Step looks at it. A killed job's GPUs, by
// contrast, are still held in the Step that evicts it (they free once
// its checkpoint grace, 0 for trace jobs, is over, and the next Step at
// the same instant sees them free): that Step may reserve them for a job
// from that instant, but not start one on them, and may backfill a job
// that a textbook EASY replay, freeing them first, would hold back. On
// the HPC2N and SDSC-SP2 logs of the published comparisons (629 kills in
// all) no start time differs from such a replay.
//
// # Lost work
//
// When an evicted job is requeued (preemption, node failure), a training
// job keeps the work up to its last checkpoint: with
// [Options.CheckpointInterval] c > 0 that is floor(ran/c)·c of the time
// it ran in that attempt, and with c = 0 it restarts from scratch.
// Checkpointing costs no time and the grace period adds no progress. An
// inference job keeps all its progress: its Run is how long the service
// is needed, and a replica restarted elsewhere continues it. Every
// attempt is bounded by the job's Limit.
//
// # Metrics
//
// For each finished job: flow time = finish − submit; run = the useful
// work (Job.Run when completed; for a killed job the time it ran in its
// last attempt, that is its limit, plus kept work); wait = flow − run;
// bounded slowdown = max(1, (wait + run) / max(run, 10 s)). The summary
// gives their means, the median, p95 (nearest rank) and maximum of the
// wait, makespan (last finish − first submit), utilization (GPU-seconds
// held by running and evicting jobs / (GPUs × makespan)), per-team
// GPU-hours and share, Jain's fairness index over teams, preemptions,
// kills at the time limit and the p50/p99 Step latency. The package
// reads no clock itself: latency is measured only when
// [Options.Clock] is set.
//
// The time series averages, over intervals of equal width, the fraction
// of GPUs held, the number of pending and running jobs, and each team's
// share of the GPU time held; the width doubles as the run grows so that
// there are at most [Options.MaxPoints] points.
//
// Times are time.Duration offsets from [Options.Start], so a run spans at
// most about 292 years: a workload whose arrivals, node events, runs,
// time limits or checkpoint graces would take the clock past that fails
// with [ErrTimeRange] instead of wrapping around.
//
// The simulator checks every decision it applies: no GPU allocated twice,
// placements only of pending jobs on ready nodes' healthy GPUs, evictions
// only of running jobs. A violation stops the run with an error.
package sim
