// Package host is a minimal host around the scheduler, shared by the
// preempt and backfill example programs and the scheduler's multi-step
// tests: a [Host] owns the jobs, knows how long each really runs (which
// Step never sees), and applies decisions the way a real host does.
//
//	h := host.New(cluster, jobs...)         // then set h.Actual and h.Arrive
//	for _, now := range times {
//		events := h.Advance(now)            // runs end, evictions finish, jobs arrive
//		d, err := s.Step(h.Snapshot(now))
//		...
//		h.Apply(now, d)                     // placements run, evictions begin, reservations are the next plan
//	}
//
// [Host.Next] finds the next moment anything happens without a decision;
// [Duration] and [Compact] format durations and allocations for output.
package host
