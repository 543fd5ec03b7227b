// Package sim is a deterministic discrete-event simulator that drives
// [scheduler.Scheduler.Step] over a workload.
//
// [Run] takes a cluster, a list of [Job]s, a policy and [Options] (start
// time, node failures and repairs, a checkpoint interval, teams' shares,
// an optional clock for Step latency) and returns a [Result]: what
// happened to every job, a [Summary] of the metrics and a bounded time
// series for charts. It reads no clock and keeps no state between runs.
//
//	jobs := []sim.Job{{ID: "a", Run: time.Hour, Limit: 2 * time.Hour, Members: 2, GPUsPerMember: 8}}
//	res, err := sim.Run(sim.Uniform(64, 8), jobs, scheduler.Config{}, sim.Options{})
//	// res.Jobs[0].Start, res.Summary.MeanBoundedSlowdown, res.Summary.Utilization
//
// # Events and Step
//
// Events are arrivals, completions, time limits falling due, the end of
// evictions and node state changes; with a minimum runtime in the policy
// (Config.MinRuntime), also the last decision's NextWake, when a job
// that has run it may become a victim with no event of its own. At every distinct event time the
// simulator applies that time's events in this order: releases (finished
// evictions, completions), time limits, node changes, arrivals. It then
// calls Step once on a snapshot of Now, the cluster and every pending,
// running and evicting job, and applies the decision: placements start
// now; an eviction makes its job evicting until now + its grace, after
// which the job is gone and, when the eviction says Requeue, pending again
// with its original submit time. The decision's reservations are the
// plan of the next snapshot (Snapshot.Plan): the simulator starts no job
// on them, and Step keeps them as promises.
//
// Step is called again at the same instant when a zero-grace eviction
// ends there, at most [Options.MaxStepsPerInstant] times. When nothing is
// pending after an instant's events, releases alone call no Step: Step
// could only evict, and the events that make evictions due (time limits,
// node changes) always call it.
//
// A job runs for its Run time. When that exceeds its Limit, an event at
// start + Limit makes Step see the limit due; the scheduler evicts the job
// with reason time-limit and it is killed (unless the policy ignores time
// limits: then it runs to completion). A job whose Run equals its Limit
// completes, since completions are applied before Step looks. A killed
// job's GPUs are still held in the Step that evicts it and free once its
// grace is over (0 for trace jobs: the next Step at the same instant):
// that Step may reserve them, but not start a job on them.
//
// # Lost work
//
// A requeued training job keeps the work up to its last checkpoint: with
// [Options.CheckpointInterval] c > 0, floor(ran/c)·c of the time it ran
// in that attempt; with c = 0 it restarts from scratch. An inference job
// keeps all its progress: its Run is how long the service is needed.
// Checkpoints cost no time, the grace adds no progress, and every attempt
// is bounded by the job's Limit.
//
// # Metrics
//
// For each finished job: flow = finish − submit; run = the useful work
// (Job.Run when completed; for a killed job its last attempt plus kept
// work); wait = flow − run; bounded slowdown = max(1, (wait + run) /
// max(run, 10 s)). The [Summary] gives their means, the median, p95
// (nearest rank) and maximum wait, the makespan (last finish − first
// submit), utilization (GPU-seconds held by running and evicting jobs /
// (GPUs × makespan)), per-team GPU-hours and share against the share the
// team is entitled to, Jain's index over teams, preemptions, kills at the
// limit, promises made and kept (a job's promise is the start of the
// first reservation it was given before it started; kept when it started
// no later) and, with [Options.Clock], the p50/p99 Step latency. The
// series averages, over intervals of equal width, the fraction of GPUs
// held, the pending and running jobs, the pending jobs by the reason the
// latest decision gave ([Reserved] for a reservation), each team's share
// of the GPU time and, on a cluster where some node limits CPU or memory
// (Job.CPUMillis and Job.MemoryMiB are per member, as Step's), the
// fractions of CPU and memory held and the GPUs stranded by them
// ([Point.Stranded]; [Summary.StrandedGPUHours] over the run, recomputed
// after each change from every node, so a run on such a cluster costs
// O(nodes) more per event); the width doubles as the run grows, so
// there are at most [Options.MaxPoints] points.
//
// Times are offsets from [Options.Start], so a run spans at most about
// 292 years: a workload whose times would take the clock past that fails
// with [ErrTimeRange] instead of wrapping around.
//
// # Checks
//
// The simulator checks every decision it applies: no GPU allocated twice,
// placements only of pending jobs on ready nodes' healthy GPUs, evictions
// only of running jobs. A violation stops the run with an error.
//
// # Cost
//
// Setting up costs O(nodes + jobs log jobs); each event costs O(log
// events) plus O(teams holding GPUs). Each Step costs what Step costs on
// its snapshot, which holds the jobs in the system, and:
//
//   - the teams of [Options.Teams], plus, when the policy reads usage
//     (any order but TierOrder, or a custom hook), every team a job names
//     with share 1. Under TierOrder Step reads teams only for quotas, and
//     treats a team it is not given as one of share 1 and no quota.
//   - the cluster's nodes; but on a flat pool of one-GPU nodes (as
//     [Uniform](n, 1) builds, under TierOrder without hooks, quotas, node
//     events or [Options.Observe]) only the first nodes: every node in use
//     and enough free ones for every pending job at once, or all of them
//     when the pending jobs do not fit. Step decides the same on both,
//     since each pending job then starts at once on the first free nodes
//     by name. So a Step's cost follows the GPUs in use and pending, not
//     the size of the pool.
package sim
