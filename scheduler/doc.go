// Package scheduler composes gpusched's capability packages into one pure
// decision function: [Scheduler.Step] takes a [Snapshot] of the cluster and
// its jobs and returns a [Decision]: placements, evictions, reservations,
// and the reason every other pending job waits.
//
// The host owns time and state; the library keeps none between calls,
// reads no clock, starts no goroutines and does not log. The loop a host
// runs, in the style of a raft node's Step and Ready:
//
//	s := scheduler.New(scheduler.Config{}) // zero value: sensible defaults
//	for {
//		snap := host.Snapshot()             // now, nodes, teams, all jobs
//		d, err := s.Step(snap)              // pure; snap is not modified
//		if err != nil {                     // *ValidationError names the field
//			return err
//		}
//		for _, p := range d.Placements {    // start these now, on these GPUs
//			host.Start(p.Job, p.Allocation)
//		}
//		for _, e := range d.Evictions {     // stop within e.Grace; requeue if asked
//			host.Evict(e.Job, e.Grace, e.Requeue)
//		}
//		host.Show(d.Reservations, d.Pending) // starts planned this Step, and why others wait
//		host.WaitForEvent()                 // arrival, completion, node change
//	}
//
// # The pipeline of Step
//
//  1. Validate the snapshot ([Scheduler.Validate]: [Validate] with the
//     policy's tiers); an invalid one is an error naming the field, never
//     a panic.
//  2. Build the free-capacity index ([topology.Index]) from the nodes minus
//     the GPUs held by running and evicting jobs.
//  3. Evict running jobs on down nodes (reason node-down, requeued) and,
//     unless Config.IgnoreTimeLimits, jobs past their time limit (reason
//     time-limit). Tell the availability profile when every held GPU is
//     released: at started + time limit + checkpoint grace (the eviction
//     at the limit gets its grace too), or after an eviction's grace.
//  4. Order the pending jobs (Config.Order; default [Multifactor]: tier,
//     then fair-share, age and size).
//  5. For each job in order, first the checks that concern it alone: a
//     GPU type the cluster has, a shape the cluster can ever hold, and its
//     team's quota (counting running jobs and the jobs placed or reserved
//     so far, not jobs being evicted). A job that fails one waits (reason
//     gpu-type, unsatisfiable or quota) and blocks nobody. Then place it
//     now if it fits on GPUs that no reservation needs before it would end
//     (time limit plus grace). Otherwise, if its tier may preempt, evict
//     the cheapest set of lower-tier jobs that makes room and reserve the
//     freed GPUs for it, or, when waiting for GPUs already being freed is
//     as fast, reserve those. If it may preempt but finds no victims, it
//     gets a reservation all the same when it can start, on GPUs the jobs
//     being evicted hold or on GPUs free now, by the time those jobs are
//     gone: Step keeps no state, so such a job is taken to be the one they
//     were evicted for, and a requeued victim cannot backfill into its
//     GPUs only to be preempted again. Preempting jobs get these
//     reservations whether or not the backfill mode has one left, and
//     they count among the reservations made (EASY's K, and the count a
//     ReservationPolicy is given) like any other; the planning horizon
//     bounds them, except a start on the GPUs of jobs being evicted at the
//     time they are gone, which it bounds no more than the preemption that
//     evicted them. Otherwise give the job a reservation if the backfill
//     mode has one left (EASY: the first K blocked jobs; conservative:
//     all); otherwise record why it waits.
//  6. Return every list sorted by job ID.
//
// # Extension points
//
// Each is a small interface, set in a field of [Config], with a default
// and a function adapter:
//
//	field         interface and method                       decides                 adapter; default
//	Order         Orderer.Order(s, jobs)                     the queue's order       OrderFunc; Multifactor
//	Admit         Admitter.Admit(s, job, usage)              admission (quotas)      AdmitFunc; QuotaAdmitter
//	Pack, Spread  binpack.Scorer.Score(candidate)            nodes                   binpack.ScorerFunc; Pack, Spread
//	Victims       VictimSelector.Select(ix, r, sc, cands)    preemption victims      VictimFunc; preempt.Select
//	Reserve       ReservationPolicy.Reserve(job, made)       who gets a reservation  ReserveFunc; by Backfill
//	Domains       gang.DomainChooser.Choose(ix, l, r, fits)  the topology domain     gang.ChooserFunc; best fit
//
// and [BackfillMode], [BackfillOrder] and Config.Preemption choose the
// built-in reservation strategy and the preemption matrix. A policy must not
// modify the snapshot or keep state that changes an answer, between Steps
// or within one (scratch space reused between calls, as a
// [preempt.Selector] keeps, is fine): a Step remembers what it learned of
// a job for the jobs that look alike to it, so it calls a policy fewer
// times than it has jobs, and an answer that depended on how often it
// was asked (a round-robin chooser, say) would make decisions depend on
// the queue's look-alikes. When any custom policy
// is set, Step fingerprints the snapshot before and after and returns
// [ErrPolicyModifiedSnapshot] rather than a decision built on changed
// input, and it checks that an Orderer returns a permutation and that a
// victim selector's answer is a valid placement before acting on it.
//
// A wrapping policy is plain Go; "shortest job first inside each tier,
// otherwise the default" (a TimeLimit of 0 means no limit, so such a job
// counts as the longest):
//
//	requested := func(j *scheduler.Job) time.Duration {
//		if j.TimeLimit <= 0 {
//			return math.MaxInt64 // no limit: last
//		}
//		return j.TimeLimit
//	}
//	sjf := scheduler.OrderFunc(func(s *scheduler.Snapshot, jobs []*scheduler.Job) {
//		scheduler.Multifactor{}.Order(s, jobs)
//		slices.SortStableFunc(jobs, func(a, b *scheduler.Job) int {
//			return cmp.Or(cmp.Compare(a.Tier, b.Tier), cmp.Compare(requested(a), requested(b)))
//		})
//	})
//
// [Scheduler.Explain] tells, for one job, why it is where it is.
//
// # Cost
//
// A Step costs O(N log N + N·L² + N·T) to build the index for N nodes, L
// levels and T GPU types, plus its buckets (see [topology.NewIndex]), and
// O(J log J) to order J pending jobs. Each job then makes one placement
// query, [backfill.Profile.PlaceNow]: O(G) when the free GPUs of its class
// cannot hold it; otherwise O(min(F, R)·e·L) for the F nodes with free
// GPUs, the R reservations that start within its run and e events on a
// node, plus one [gang.Place] (proportional to GPUs per node × nodes
// touched, not to N). Jobs of a shape already known not to fit skip the
// query. A blocked job that may be given a reservation also pays one
// sweep of the availability profile ([backfill.Profile.EarliestBy]; its
// cost is in the [backfill.Profile] doc), and a blocked job that may
// preempt, a victim search ([preempt.Select]).
package scheduler
