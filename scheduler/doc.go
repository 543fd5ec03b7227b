// Package scheduler composes gpusched's capability packages into one pure
// decision function: [Scheduler.Step] takes a [Snapshot] of the cluster and
// its jobs and returns a [Decision]: placements, evictions, reservations,
// and the reason every other pending job waits.
//
// The host owns time and state; the library keeps none between calls,
// reads no clock, starts no goroutines and does not log:
//
//	s := scheduler.New(scheduler.Config{}) // zero value: sensible defaults
//	for {
//		d, err := s.Step(host.Snapshot()) // pure; the snapshot is not modified
//		if err != nil {                   // *ValidationError names the field
//			return err
//		}
//		host.Apply(d)                     // start d.Placements, stop d.Evictions,
//		                                  // keep d.Reservations as the next Snapshot.Plan
//		host.WaitForEvent(d.NextWake)     // arrival, completion, node change, or d.NextWake
//	}
//
// A host that Steps on every event and at [Decision].NextWake misses
// nothing: NextWake is the earliest instant at which the same snapshot,
// advanced to it, could be decided otherwise (a time limit, a grace end,
// a reservation coming due, a job passing Config.MinRuntime, a run from
// now reaching a reservation); zero when nothing is due.
//
// # What Step does
//
//  1. Validates the snapshot ([Validate]); an invalid one is an error, never
//     a panic.
//  2. Builds the free-capacity index: nodes minus running and evicting jobs.
//  3. Evicts running jobs on down nodes (node-down) and, unless
//     Config.IgnoreTimeLimits, past their time limit (time-limit).
//  4. Orders the pending jobs (Config.Order; default [Multifactor]).
//  5. Keeps the promises of Snapshot.Plan (below).
//  6. Gives each other job its turn, in order (below).
//  7. Returns every list sorted by job ID.
//
// # Promises across Steps
//
// A reservation is a promise. A host that passes each decision's
// Reservations back as the next snapshot's Plan gets this guarantee: a
// pending job's start is never later than its plan entry says, unless a
// GPU of the entry became unusable (node down or draining, GPU unhealthy
// or gone, still held at the promised start), a job ahead of it in the
// queue took a GPU of it, the promised start lies beyond Config.Horizon,
// or the job changed (shape, GPU type, topology, or a time limit that no
// longer fits); the job's pending message then names the cause. Before any other job's turn, the
// pending jobs with a plan entry are taken in queue order: an entry still
// usable for the job's whole run is kept (the job starts now on those
// GPUs when its start has come, else is reserved them again), then each
// kept reservation is taken out and the job takes the earliest start that
// disturbs no other reservation, never later than its promise: the
// compression of conservative backfill (Mu'alem and Feitelson), made
// under every backfill mode. Jobs then placed or reserved in their turns
// cannot disturb a kept promise. So under EASY a protected job, and a
// preemptor reserved its victims' GPUs, keep their reservation until they
// start, whichever jobs arrive meanwhile; and with conservative backfill a
// start only moves earlier as jobs end early. Conservative backfill counts
// GPUs as the textbook algorithm counts processors: where the count allows
// a job an earlier start than the GPUs found, reservations in its way move
// to other GPUs at their own starts (repin.go), never to later ones. A job
// holding a kept promise that may preempt still gets the preemption stage
// at its place in the queue, as without a plan, but spares the jobs that
// hold only its promised GPUs and leave by its promised start; when it
// moves onto its victims' GPUs, the kept promises around it get another
// chance at its old ones. Its claim on GPUs that jobs being evicted still
// hold moves in compression only to start now or onto other such GPUs:
// elsewhere, it would leave the GPUs its victims free to a requeued
// victim, which a later Step could evict again. Under shortest-first
// backfill, a job that may preempt has its turn in its place in the
// queue, so that the disruption budget serves preemptors in priority
// order. A job reserved later than its promise says why
// in its reservation's Message. Entries for jobs that
// are not pending are ignored. Without a plan, Step plans from scratch.
//
// In its turn, the first of these that applies decides a job:
//
//	outcome          when
//	waits (refused)  a check of the job alone fails: gpu-type, unsatisfiable, quota, or
//	                 insufficient-gpus when only nodes down or draining are missing
//	placed           it fits now on GPUs no reservation needs before it would end
//	                 (EASY's shadow-time rule)
//	reserved         its tier may preempt: victims are evicted and the GPUs they free
//	                 reserved for it; or waiting for GPUs being freed is as fast, and
//	                 those are reserved (awaiting-preemption if a ReservationPolicy
//	                 declines)
//	reserved         the backfill mode has a reservation left for it (EASY: the first
//	                 K jobs that wait; conservative: all), within Config.Horizon
//	waits            behind-reservation, insufficient-gpus, topology, or
//	                 insufficient-cpu / insufficient-memory when its GPUs would fit
//	                 but the nodes with them lack its CPU or memory; with backfill
//	                 off, priority once an earlier job waits for GPUs (after the
//	                 job's own checks)
//
// Nodes may limit CPU and memory (Node.CPUMillis, Node.MemoryMiB) and jobs
// ask for some per member (Job.CPUMillis, Job.MemoryMiB): a member then fits
// a node only where its GPUs, CPU and memory all fit, now and, for a
// reservation, over its run; preemption frees what the preemptor lacks;
// no node's CPU or memory is over-committed by running, evicting and new
// jobs (DESIGN invariant 11). A team's quota may cap its CPU and memory
// too (Quota.CPUMillis, Quota.MemoryMiB).
//
// [Scheduler.Explain] tells, for one job, why it is where it is.
// [Scheduler.Forecast] estimates when every pending job starts: the
// decision's own starts and reservations, and for every other job the
// start conservative backfill would reserve it after them, in queue
// order (or none, and why, when no start can be bounded).
//
// # Extension points
//
// Each is a small interface in a field of [Config], with a default and a
// function adapter:
//
//	field         interface and method                       decides                 adapter; default
//	Order         Orderer.Order(s, jobs)                     the queue's order       OrderFunc; Multifactor
//	Admit         Admitter.Admit(s, job, usage)              admission (quotas)      AdmitFunc; QuotaAdmitter
//	Pack, Spread  binpack.Scorer.Score(candidate)            nodes                   binpack.ScorerFunc; Pack, Spread
//	Victims       VictimSelector.Select(ix, r, sc, cands)    preemption victims      VictimFunc; preempt.Select
//	Reserve       ReservationPolicy.Reserve(job, made)       who gets a reservation  ReserveFunc; by Backfill
//	Domains       gang.DomainChooser.Choose(ix, l, r, fits)  the topology domain     gang.ChooserFunc; best fit
//
// # Disruption
//
// Preemption is bounded per Step: Config.MaxEvictedGPUs (policy
// "preemption": {"maxEvictedGPUs": N}) is the most GPUs one Step evicts
// for preemption; zero means the larger of 5% of the usable GPUs (rounded
// up) and the GPUs of the Step's first preemptor's victims. Preemptors are
// served in queue order; once one is refused, no later job evicts in that
// Step (a refused preemptor may still start now, claim GPUs being freed or
// be reserved; one that still waits has reason awaiting-preemption and a
// message that says the budget is spent), and the budget renews at the
// next Step. Evictions at time limits and on down nodes do not count.
// Config.MinRuntime ("minRuntime": "10m") keeps a job that has run less
// from being a victim.
//
// [BackfillMode], [BackfillOrder] and Config.Preemption choose the built-in
// reservation strategy and preemption matrix. A policy must not modify the
// snapshot, nor keep state that changes an answer: Step asks once for jobs
// that look alike, so an answer that depended on how often it was asked
// would make decisions depend on the queue. With a custom policy set, Step
// returns [ErrPolicyModifiedSnapshot] rather than a decision built on
// changed input, [ErrPolicyOrder] for an Orderer that does not return a
// permutation, and ignores a victim selector's answer that is not a valid
// placement.
//
// # Examples
//
// Scheduler.Step (one Step; the host loop), Config (a policy; pack scorer;
// domain chooser), OrderFunc and Multifactor (a wrapping order: shortest
// job first inside each tier), AdmitFunc, VictimFunc, ReserveFunc, Wait (a
// pending job's reason), Scheduler.Explain, Scheduler.Forecast, Validate,
// DecodeSnapshot; and
// the programs under examples/, custompolicy among them.
//
// # Cost
//
// Building the index costs O(N·L·(log N + L + G)) for N nodes, L levels
// and G GPUs on the largest node, whatever the number of GPU types, and ordering J pending jobs O(J log J). Each job then
// makes one placement query ([backfill.Profile.PlaceNow]), skipped for a
// shape known not to fit; a job that may be reserved one profile sweep
// ([backfill.Profile.EarliestBy]); a job that may preempt, one victim
// search ([preempt.Select]) unless a job alike just found none.
// Forecast adds one profile sweep and one reservation for each pending
// job the Step neither started nor reserved: the cost of a conservative
// Step.
package scheduler
