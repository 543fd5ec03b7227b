package scheduler

import (
	"slices"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// preemptKept gives job j, whose promise p keepPromises kept, the
// preemption stage that its turn would give it without a plan, at its
// place in the queue: a plan must not make a job that may preempt wait
// longer than planning afresh would (a job promised GPUs at 03:00 that
// could preempt a lower tier now starts after the victims' grace, as it
// would have without the plan), but for the jobs it spares (below). Its
// reservation is taken out and preempt decides as in a turn. When
// preempt evicts victims, it has reserved their GPUs for j from the end
// of their grace, which is earlier than the promise (preempt evicts only
// when waiting is slower), and that is j's promise from now on.
// Otherwise the promise goes back as it was, after taking out what
// preempt claimed instead (a claim is never earlier than the promise,
// which improvePromises made the earliest).
//
// A running job on j's promised GPUs that releases them by the promised
// start is no victim of j's (spare): it was backfilled there because it
// leaves in time, and evicting it would start j a little earlier at the
// cost of its work; when it was j's own victim, requeued, it would be
// evicted by j twice.
//
// A job whose promised GPUs are still held by jobs being evicted is
// passed over: those are (as far as Step can tell) its own victims, and
// it starts when they are gone (DESIGN 3a); evicting more would stop jobs
// for nothing.
//
// It reports whether the promise moved to the victims' GPUs: its old
// GPUs are then free again for the jobs ahead of it and behind it.
func (st *stepState) preemptKept(j *Job, p *promise) (moved bool) {
	if !p.kept || !st.preempts(j) || st.budget.spent {
		return false // (with the budget spent, preempt evicts for no one)
	}
	if evicting, _ := st.holdsBack(p.pl); evicting {
		return false
	}
	req := st.promiseRequests(j, p)[0]
	d := st.hold(j)
	prev := p.res
	mark := st.unreserve(j, p, d)
	res, ledger, evicted := len(st.decided.Reservations), len(st.reservations.made), len(st.decided.Evictions)
	// The Step's memos of preemption are left out, read and written:
	// with its own reservation taken out, j has GPUs that a job alike
	// did not have at its turn (reserved for j then), so a search that
	// failed for that job may succeed for j, and j's answers hold for no
	// job that sees j's reservation back in place.
	memo := st.memo
	st.memo = nil
	st.spare(p)
	s := st.preempt(j, req, d, true)
	st.unspare()
	st.memo = memo
	switch {
	case len(st.decided.Evictions) > evicted:
		p.kept = false // reserved anew, on its victims' GPUs
		return true
	case s.code == reserved:
		m := st.reservations.made[ledger]
		st.unreserve(j, &promise{start: m.start, pl: gang.Placement{Slots: m.slots, Level: topology.ClusterLevel}, res: res, ledger: ledger}, d)
		st.putBack(j, p, d, mark, false, prev) // the claim changed the profile in between
	default:
		st.putBack(j, p, d, mark, true, prev)
	}
	return false
}

// spare marks, for the victim search of a job that keeps promise p, the
// candidates that hold only GPUs of p and release them by p's start,
// as the profile counts their ends: their time limit, still to come, and
// the grace at it (see release). Only the candidates on p's nodes are
// looked at (candidatePool.onNode): O(c·h) for the c candidates there,
// of h holds each. unspare clears the marks.
func (st *stepState) spare(p *promise) {
	st.buildCandidates()
	pool := &st.pool
	for k, sl := range p.pl.Slots {
		if slices.ContainsFunc(p.pl.Slots[:k], func(x gang.Slot) bool { return x.Node == sl.Node }) {
			continue
		}
		for _, i := range pool.onNode(sl.Node, st.ix.NumNodes()) {
			if st.walked != nil {
				*st.walked++
			}
			v, c := pool.jobs[i], &pool.cands[i]
			limitAt := st.limitAt(v)
			if v.TimeLimit <= 0 || !limitAt.After(st.snap.Now) || st.offset(limitAt.Add(st.graceAtLimit(v))) > p.start ||
				!withinPlacement(c.Holds, p.pl) {
				continue // no known end (past a limit not enforced), a later one, or GPUs beyond p
			}
			if pool.spared == nil {
				pool.spared = make([]bool, len(pool.cands))
			}
			pool.spared[i] = true
			pool.sparedIdx = append(pool.sparedIdx, int(i))
		}
	}
}

// unspare clears the marks of spare.
func (st *stepState) unspare() {
	pool := &st.pool
	for _, i := range pool.sparedIdx {
		pool.spared[i] = false
	}
	pool.sparedIdx = pool.sparedIdx[:0]
}

// withinPlacement reports whether every GPU of holds is one of pl's.
func withinPlacement(holds []preempt.Hold, pl gang.Placement) bool {
	for _, h := range holds {
		var in topology.GPUSet
		for _, sl := range pl.Slots {
			if sl.Node == h.Node {
				in |= sl.GPUs
			}
		}
		if h.GPUs&^in != 0 {
			return false
		}
	}
	return true
}
