package fairshare

import (
	"fmt"
	"math"
)

// Quota caps the GPUs a team may hold. GPUs is the team's nominal quota:
// a job that keeps the team within it is always admitted. Above nominal the
// team may borrow idle GPUs, up to GPUs+BorrowLimit in total; jobs beyond
// that wait (the scheduler reports reason "quota").
//
// The zero Quota means "no quota": every job is admitted. Negative fields
// are invalid (see Validate); in a Quota that is not the zero Quota they
// count as 0, so Quota{GPUs: -1} admits nothing. Admit is exact even
// where GPUs + BorrowLimit exceeds the int range.
type Quota struct {
	// GPUs is the nominal quota, in GPUs.
	GPUs int
	// BorrowLimit is how many idle GPUs the team may borrow above GPUs.
	BorrowLimit int
}

// IsZero reports whether q is the zero Quota, which admits everything.
func (q Quota) IsZero() bool { return q == Quota{} }

// Validate reports negative fields.
func (q Quota) Validate() error {
	if q.GPUs < 0 {
		return fmt.Errorf("fairshare: quota.gpus must be >= 0, got %d", q.GPUs)
	}
	if q.BorrowLimit < 0 {
		return fmt.Errorf("fairshare: quota.borrowLimit must be >= 0, got %d", q.BorrowLimit)
	}
	return nil
}

// Limit returns the most GPUs the team may hold: GPUs + BorrowLimit,
// or math.MaxInt when that sum exceeds the int range or q is the zero
// Quota, which limits nothing.
func (q Quota) Limit() int {
	if q.IsZero() {
		return math.MaxInt
	}
	nominal, borrow := max(q.GPUs, 0), max(q.BorrowLimit, 0)
	if borrow > math.MaxInt-nominal {
		return math.MaxInt
	}
	return nominal + borrow
}

// Borrowed returns how many of the team's inUse GPUs are above its nominal
// quota (inUse - GPUs, at least 0). Borrowed GPUs are the first candidates
// for reclaim by preemption. It is 0 for the zero Quota.
func (q Quota) Borrowed(inUse int) int {
	if q.IsZero() {
		return 0
	}
	return max(inUse-max(q.GPUs, 0), 0)
}

// Admit decides whether a team that holds inUse GPUs may start a job of
// request GPUs while the cluster has idle GPUs free. Within nominal the job
// is admitted; above nominal the part beyond nominal is borrowed and must fit
// both the borrowing limit and the idle GPUs. When the job must wait, why
// explains it, e.g. "team uses 96 of 100 nominal + 20 borrowable GPUs; job
// needs 32". Negative inputs count as 0.
func (q Quota) Admit(inUse, request, idle int) (ok bool, why string) {
	return q.AdmitTeam("team", inUse, request, idle)
}

// AdmitTeam is Admit with the team's name in the message:
// "team-a uses 96 of 100 nominal + 20 borrowable GPUs; job needs 32".
func (q Quota) AdmitTeam(team string, inUse, request, idle int) (ok bool, why string) {
	if q.IsZero() {
		return true, ""
	}
	nominal, borrow := max(q.GPUs, 0), max(q.BorrowLimit, 0)
	inUse, request, idle = max(inUse, 0), max(request, 0), max(idle, 0)
	// Sums of two ints >= 0 fit a uint64 exactly.
	after, limit := uint64(inUse)+uint64(request), uint64(nominal)+uint64(borrow)
	if after <= uint64(nominal) {
		return true, ""
	}
	if after > limit {
		return false, fmt.Sprintf("%s uses %d of %d nominal + %d borrowable GPUs; job needs %d",
			team, inUse, nominal, borrow, request)
	}
	// Part of the job is above nominal: that part is borrowed from idle GPUs.
	borrowing := int(min(after-uint64(nominal), uint64(request)))
	if borrowing > idle {
		idleGPUs := fmt.Sprintf("%d GPUs are", idle)
		if idle == 1 {
			idleGPUs = "1 GPU is"
		}
		return false, fmt.Sprintf("%s uses %d of %d nominal GPUs; job needs %d, of which %d borrowed, but only %s idle",
			team, inUse, nominal, request, borrowing, idleGPUs)
	}
	return true, ""
}
