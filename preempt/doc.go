// Package preempt decides which running jobs to stop so that a
// higher-priority gang can start: priority tiers, the preemption matrix,
// victim selection and the rule for when preemption is worth it.
//
// It imports only topology, gang and binpack; the scheduler calls it, never
// the other way round. It reads no clock (durations are passed in), keeps
// no state that changes an answer from one call to the next (a [Selector]
// keeps only scratch space), starts no goroutines and does not log.
//
// # Tiers
//
// Jobs carry a priority tier; a lower number is a higher priority. By
// default there are four:
//
//	P0  production: never preempted
//	P1  preemptible only by P0
//	P2  preemptible by P0 and P1
//	P3  preemptible by P0, P1 and P2
//
// # The preemption matrix
//
// A [Matrix] m allows a job of tier p to preempt a running job of tier v
// when m[p][v] is true. [DefaultMatrix] is the table above; [Ordered]
// builds the same strict hierarchy for any number of tiers. A custom
// matrix may allow less (P1 jobs that never preempt anyone) or other
// pairs (P3 preempting P2 instead of P2 preempting P3), but
// [Matrix.Validate] insists that it is square and non-empty, that no tier
// preempts itself, that no two tiers preempt each other (each would evict
// the other in turn), that no longer circle of tiers does either (P1
// preempting P2, P2 preempting P3 and P3 preempting P1) and that column 0
// is false: tier 0 is never a victim. [Matrix.CanPreempt] enforces all
// but the circle even on a matrix that was never validated; Step
// validates the matrix of its Config, circle included.
//
// A Matrix decodes with encoding/json from an array of rows, a row per
// preemptor tier and a column per victim tier, as the policy file holds it
// ("preemption": {"matrix": [[false, true, true, true], ...]}).
//
// # Victim selection
//
// The host lists running jobs as [Candidate] values: GPUs per node, tier,
// work lost since the last checkpoint, checkpoint grace, and whether the
// team runs on borrowed GPUs. [Eligible] keeps those the preemptor's tier
// may preempt; [Select] chooses among them. Only whole jobs are stopped.
//
// Select first checks whether the gang fits without preemption; then it
// ignores candidates that cannot help: GPUs of another type, on nodes
// that are not ready or are avoided, on nodes that could not host a member
// even when emptied, or in a domain of the required level that could not
// hold the whole gang even if every candidate stopped. The others are
// tried in cost order ([Compare]):
//
//  1. jobs of teams above their quota (borrowed GPUs) first,
//  2. then the lowest priority (highest tier number),
//  3. then the least work lost since the last checkpoint (the newest
//     start when the checkpoint is unknown),
//  4. then the fewest GPUs the job holds (Candidate.Size, when a caller
//     leaves out of Holds GPUs the request cannot use),
//  5. then by ID, so the answer does not depend on input order (IDs must
//     then differ, as the scheduler's job IDs do; candidates with equal
//     IDs keep their input order).
//
// Their GPUs are added to the free set of a working view of the index,
// one job at a time, until [gang.Place] succeeds for the request with its
// shape, GPU type and topology.
//
// # Minimality
//
// A second pass tries to keep each chosen victim running, most expensive
// first, and keeps it when the gang still fits. Afterwards removing any
// one victim leaves the gang unable to fit. The victims are the cheapest
// set that makes room when sets are compared by their most expensive
// victim in the cost order, then the next, and so on; not the set with
// the least work lost or the fewest GPUs in total (two cheap victims beat
// one dearer one). The index is restored exactly before Select returns;
// the placement it returns is where the gang lands on the freed GPUs.
// [Select] states its cost.
//
// # When to preempt
//
// Stopping a job costs its lost work, and the preemptor cannot start
// before the victims' grace has run out anyway. [Worth] states the rule:
// preempt only if the job cannot start by waiting (by the time limits of
// the running jobs) at or before now + the victims' longest grace.
//
// # Example
//
// An 8-node cluster of 8 GPUs each runs one P3 job on 8 GPUs; a P1 job
// needs 8 members of 8 GPUs:
//
//	running := []preempt.Candidate{{ID: "p3", Tier: 3, Holds: holds, Grace: 5 * time.Minute}}
//	var cands []preempt.Candidate
//	for _, i := range preempt.Eligible(preempt.DefaultMatrix(), 1, running) {
//		cands = append(cands, running[i])
//	}
//	victims, pl, ok := preempt.Select(ix, gang.NewRequest(8, 8), binpack.Pack{}, cands)
//	// ok, victims == [0] (the P3 job); pl covers all 64 GPUs and becomes
//	// a reservation at now + preempt.MaxGrace(cands, victims) = now + 5m.
//
// The package example runs this scenario in full. A caller that searches
// many times, as a scheduler step does, can keep a [Selector] and call its
// Select method instead, which gives the same answers and reuses its
// scratch space.
//
// Where nodes limit CPU or memory and the request asks for some
// (gang.Request.CPUMillis, MemoryMiB), each [Hold] says what its job uses
// there (Hold.CPUMillis, Hold.MemoryMiB), and stopping a candidate frees
// that with its GPUs: the victims chosen free whatever the request lacks,
// GPUs, CPU or memory, and stay minimal (stopping all but any one leaves
// the request unable to fit).
package preempt
