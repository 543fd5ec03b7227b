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
//
// CPUMillis and MemoryMiB, when not zero, cap the CPU (millicores) and
// memory (MiB) the team's jobs may hold in all: a job that would take the
// team past either waits. They are hard caps, with no borrowing, and
// independent of the GPU quota: a Quota with only them set limits no
// GPUs (GPUs and BorrowLimit both zero limit nothing, as ever).
type Quota struct {
	// GPUs is the nominal quota, in GPUs.
	GPUs int
	// BorrowLimit is how many idle GPUs the team may borrow above GPUs.
	BorrowLimit int
	// CPUMillis caps the team's CPU in millicores; zero: no cap.
	CPUMillis int
	// MemoryMiB caps the team's memory in MiB; zero: no cap.
	MemoryMiB int
}

// IsZero reports whether q is the zero Quota, which admits everything.
func (q Quota) IsZero() bool { return q == Quota{} }

// gpusUnlimited reports whether q sets no GPU quota (GPUs and
// BorrowLimit both zero).
func (q Quota) gpusUnlimited() bool { return q.GPUs == 0 && q.BorrowLimit == 0 }

// Validate reports negative fields.
func (q Quota) Validate() error {
	if q.GPUs < 0 {
		return fmt.Errorf("fairshare: quota.gpus must be >= 0, got %d", q.GPUs)
	}
	if q.BorrowLimit < 0 {
		return fmt.Errorf("fairshare: quota.borrowLimit must be >= 0, got %d", q.BorrowLimit)
	}
	if q.CPUMillis < 0 {
		return fmt.Errorf("fairshare: quota.cpuMillis must be >= 0, got %d", q.CPUMillis)
	}
	if q.MemoryMiB < 0 {
		return fmt.Errorf("fairshare: quota.memoryMiB must be >= 0, got %d", q.MemoryMiB)
	}
	return nil
}

// AdmitResources decides whether a team that holds cpuInUse millicores
// and memInUse MiB may start a job that asks for cpu and mem more: each
// cap that is set (CPUMillis, MemoryMiB) must hold the sum. When it may
// not, why says so: "team-a uses 96 of 128 CPUs; job needs 64".
// Negative inputs count as 0.
func (q Quota) AdmitResources(team string, cpuInUse, memInUse, cpu, mem int64) (ok bool, why string) {
	cpuInUse, memInUse, cpu, mem = max(cpuInUse, 0), max(memInUse, 0), max(cpu, 0), max(mem, 0)
	if c := int64(q.CPUMillis); c > 0 && cpu > 0 && cpu > c-min(cpuInUse, c) {
		return false, fmt.Sprintf("%s uses %s of %s; job needs %s", team, millis(cpuInUse), millis(c), millis(cpu))
	}
	if m := int64(q.MemoryMiB); m > 0 && mem > 0 && mem > m-min(memInUse, m) {
		return false, fmt.Sprintf("%s uses %d of %d MiB of memory; job needs %d MiB", team, memInUse, m, mem)
	}
	return true, ""
}

// millis formats millicores as CPUs ("96 CPUs", "0.5 CPUs").
func millis(m int64) string {
	if m%1000 == 0 {
		return fmt.Sprintf("%d CPUs", m/1000)
	}
	return fmt.Sprintf("%g CPUs", float64(m)/1000)
}

// Limit returns the most GPUs the team may hold: GPUs + BorrowLimit,
// or math.MaxInt when that sum exceeds the int range or q sets no GPU
// quota (GPUs and BorrowLimit zero), which limits no GPUs.
func (q Quota) Limit() int {
	if q.gpusUnlimited() {
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
// for reclaim by preemption. It is 0 when q sets no GPU quota.
func (q Quota) Borrowed(inUse int) int {
	if q.gpusUnlimited() {
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
	if q.gpusUnlimited() {
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
