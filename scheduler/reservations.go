package scheduler

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// reservations is the ledger of the reservations a Step has made, beside
// the profile that holds their GPUs: it answers which of them a job that
// starts now could delay (to name them in its wait message) and how many
// start within a run (to tell jobs that see the same ones).
type reservations struct {
	made   []madeReservation // in the order made
	starts []time.Duration   // their starts, sorted
	// mayDelay lists (as indices in made) the reservations that may hold
	// GPUs free now: see delays.
	mayDelay []int32
	// byClass holds, per GPU class, the same for the reservations on its
	// nodes, the ones a job of that class could delay; nil on a cluster
	// of one GPU type, where every reservation concerns every job.
	byClass map[topology.Class]*classReservations
	// byNode lists, per node, the reservations (indices in made) that
	// hold GPUs of it, in start order, including some taken out since
	// (no job): nil until the first repin needs it (see repin.go).
	byNode [][]int32
}

// madeReservation is one reservation of the Step.
type madeReservation struct {
	job   string
	start time.Duration
	slots []gang.Slot // the GPUs reserved
	of    *Job        // the job
	res   int         // its index in the decision's reservations
	claim bool        // a preemptor's, made by preemption: never moved
}

// classReservations is the reservations on the nodes of one GPU class.
type classReservations struct {
	starts   []time.Duration // their starts, sorted
	mayDelay []int32         // indices in reservations.made: see delays
}

// reserveWithinHorizon is the stage that gives j, which may have a
// reservation, the earliest start the profile has for it within the
// planning horizon. It leaves j undecided when there is none.
func (st *stepState) reserveWithinHorizon(j *Job, req gang.Request, d time.Duration) status {
	if st.horizon < 0 {
		return status{}
	}
	start, ok := st.earliestBy(j, req, d, 0, st.horizon)
	if s := st.repinTurn(j, req, d, start, ok); s.decided() {
		return s
	}
	if !ok {
		return status{}
	}
	st.reserveAt(j, start.Placement, start.At, d)
	return status{code: reserved}
}

// repinTurn gives j in its turn (request req, run d; best, when found,
// the earliest start found without moving reservations) the earlier
// start that the count of free GPUs allows under conservative backfill,
// by moving reservations in the way (repinAt): it starts now or is
// reserved. Undecided when there is none or the move fails.
func (st *stepState) repinTurn(j *Job, req gang.Request, d time.Duration, best backfill.Start, found bool) status {
	c, try := st.repinStart(j, req, d, best.At, st.horizon, found)
	if !try {
		return status{}
	}
	var pl gang.Placement
	for tries := 0; ; tries++ {
		// In the turns the profile only tightens between repins (but for
		// evictions, which free GPUs early), so one that failed at c makes
		// one with as many GPUs or more and as long a run or longer fail
		// too, until one succeeds: it is not tried.
		f := failedRepin{class: req.Class, at: c, gpus: req.GPUs(), d: d, evictions: len(st.decided.Evictions)}
		done := false
		if !slices.ContainsFunc(st.repinFailed, func(x failedRepin) bool { return x.implies(f) }) {
			if pl, done = st.repinAt(j, req, d, c); !done {
				st.repinFailed = append(st.repinFailed, f)
			}
		}
		if done {
			break
		}
		// Reservations that may not move (a gang the count does not
		// describe, say) can be in the way at c and gone by a later
		// start that the count allows too: the next one after the GPUs
		// of the class next grow, while it is earlier than best.
		if c, try = st.laterRepinStart(req, d, c, best.At, found); !try || tries+1 == maxRepinTries {
			return status{}
		}
	}
	st.repinFailed = st.repinFailed[:0]
	if c == 0 {
		st.recordPlacement(j, pl)
		return status{code: started}
	}
	st.recordReservation(j, pl, c)
	return status{code: reserved}
}

// maxRepinTries bounds the starts one turn tries to re-pin at.
const maxRepinTries = 4

// laterRepinStart is the next start after c that the count of free GPUs
// allows j's request req a run of d from: the first at or after the next
// moment the class's GPUs grow (see backfill.Profile.NextGrowth), when it
// is earlier than better (found: there is a start found without moving
// reservations) and within the horizon and the failures a Step allows.
func (st *stepState) laterRepinStart(req gang.Request, d, c, better time.Duration, found bool) (time.Duration, bool) {
	limit := st.horizon
	if found {
		limit = min(limit, better-1)
	}
	if st.repinFailures >= maxRepinFailures {
		return 0, false
	}
	next, ok := st.profile.NextGrowth(req.Class, c, limit)
	if !ok {
		return 0, false
	}
	if n := st.profile.FreeBound(req, d, next); n <= limit && n != backfill.Forever {
		return n, true
	}
	return 0, false
}

// reserveAt reserves pl from start for a run of d for j, in the profile,
// the ledger and the decision. Its GPUs count against j's team quota from
// now on, so that later jobs of the team cannot use up the quota the
// reserved job will need when it starts.
func (st *stepState) reserveAt(j *Job, pl gang.Placement, start, d time.Duration) {
	st.profile.Reserve(pl, start, d)
	st.recordReservation(j, pl, start)
}

// recordReservation records in the ledger and the decision that pl is
// reserved for j from start, which the profile holds already, and counts
// its GPUs against j's team quota.
func (st *stepState) recordReservation(j *Job, pl gang.Placement, start time.Duration) {
	st.recordReservationOf(j, pl, start, pl.Allocation(st.ix))
}

// recordReservationOf is recordReservation with pl's allocation given.
func (st *stepState) recordReservationOf(j *Job, pl gang.Placement, start time.Duration, alloc topology.Allocation) {
	for _, sl := range pl.Slots {
		if taken := sl.GPUs & st.evicting[sl.Node] &^ st.promised[sl.Node]; taken != 0 {
			if st.promised == nil {
				st.promised = map[topology.NodeID]topology.GPUSet{}
			}
			st.promised[sl.Node] |= taken
			st.freeing -= (taken & st.ix.Healthy(sl.Node)).Len()
		}
	}
	st.addInUse(j, 1)
	if len(st.quotas) > 0 {
		if st.reserved == nil {
			st.reserved = map[string]int{}
		}
		st.reserved[j.Team] += j.GPUs()
	}
	st.addToLedger(madeReservation{job: j.ID, start: start, slots: pl.Slots, of: j, res: len(st.decided.Reservations)})
	st.decided.Reservations = appendDoubling(st.decided.Reservations, Reservation{Job: j.ID, Start: st.at(start), Allocation: alloc})
}

// unledger takes the reservation made[k] out of the ledger: it stays in
// the list, with no job, so that indices hold, and leaves the starts.
func (st *stepState) unledger(k int) {
	l := &st.reservations
	rs := &l.made[k]
	l.starts = deleteSorted(l.starts, rs.start)
	for i, sl := range rs.slots {
		c := st.ix.NodeClass(sl.Node)
		if cr := l.byClass[c]; cr != nil && !slices.ContainsFunc(rs.slots[:i], func(o gang.Slot) bool { return st.ix.NodeClass(o.Node) == c }) {
			cr.starts = deleteSorted(cr.starts, rs.start)
		}
	}
	rs.job, rs.slots = "", nil
}

// deleteSorted deletes one v from the sorted s, which holds it.
func deleteSorted(s []time.Duration, v time.Duration) []time.Duration {
	i, _ := slices.BinarySearch(s, v)
	return slices.Delete(s, i, i+1)
}

// shadowsWithin is the number of reservations whose shadow time (their
// start) comes before d: the jobs of one shape with the same count see
// the same reserved GPUs. O(log R).
func (st *stepState) shadowsWithin(d time.Duration) int {
	n, _ := slices.BinarySearch(st.reservations.starts, d)
	return n
}

// addToLedger adds rs to the ledger.
func (st *stepState) addToLedger(rs madeReservation) {
	l := &st.reservations
	k := int32(len(l.made))
	l.made = appendDoubling(l.made, rs)
	l.starts = insertSorted(l.starts, rs.start)
	if l.byNode != nil {
		st.addByNode(k)
	}
	if held, _ := st.holdsFree(&rs, topology.AnyType, 1); held {
		l.mayDelay = append(l.mayDelay, k)
	}
	if st.ix.NumTypes() < 2 {
		return // one class: every reservation concerns every job
	}
	if l.byClass == nil {
		l.byClass = map[topology.Class]*classReservations{}
	}
	for i, sl := range rs.slots {
		c := st.ix.NodeClass(sl.Node)
		if slices.ContainsFunc(rs.slots[:i], func(o gang.Slot) bool { return st.ix.NodeClass(o.Node) == c }) {
			continue // a gang of any type may span classes: count it once in each
		}
		cr := l.byClass[c]
		if cr == nil {
			cr = &classReservations{}
			l.byClass[c] = cr
		}
		cr.starts = insertSorted(cr.starts, rs.start)
		if held, _ := st.holdsFree(&rs, c, 1); held {
			cr.mayDelay = append(cr.mayDelay, k)
		}
	}
}

// holdsFree reports whether rs holds GPUs that are free now on nodes of
// class c, and whether it does on one with at least g GPUs free: a job
// of class c and g GPUs per member that starts now can take only those.
func (st *stepState) holdsFree(rs *madeReservation, c topology.Class, g int) (held, room bool) {
	for _, sl := range rs.slots {
		if free := st.ix.FreeSet(sl.Node); sl.GPUs&free != 0 && st.ix.InClass(sl.Node, c) {
			if held = true; free.Len() >= g {
				return true, true
			}
		}
	}
	return held, false
}

// delays calls f, in the order they were made, for the reservations
// that a job of class c and g GPUs per member running for d could delay:
// those that start within d and hold GPUs free now on nodes of its class
// with g GPUs free (a job that fits now takes only such GPUs). Free GPUs
// only get fewer during a Step, so a reservation found holding none
// never does again and is dropped from the list of those that may:
// O(reservations that still may), not O(reservations).
func (st *stepState) delays(c topology.Class, g int, d time.Duration, f func(rs *madeReservation)) {
	list := &st.reservations.mayDelay
	if c != topology.AnyType {
		cr := st.reservations.byClass[c]
		if cr == nil {
			return
		}
		list = &cr.mayDelay
	}
	kept := (*list)[:0]
	for _, i := range *list {
		rs := &st.reservations.made[i]
		held, room := st.holdsFree(rs, c, g)
		if !held {
			continue
		}
		kept = append(kept, i)
		if rs.start < d && room {
			f(rs)
		}
	}
	*list = kept
}

// appendDoubling appends v to s, doubling the capacity of a full s:
// append grows a long slice by about a quarter at a time, copying it
// each time, and a conservative Step appends a reservation for nearly
// every pending job.
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, len(s)+1)
	}
	return append(s, v)
}

// insertSorted inserts v into the sorted s.
func insertSorted(s []time.Duration, v time.Duration) []time.Duration {
	i, _ := slices.BinarySearch(s, v)
	return slices.Insert(s, i, v)
}

// failedRepin is a repin in a job's turn that failed: for a request of
// gpus GPUs of class, for a run of d from at, when the decision held
// evictions evictions.
type failedRepin struct {
	class           topology.Class
	at, d           time.Duration
	gpus, evictions int
}

// implies reports whether f says that a repin for g fails too: the same
// class, start and evictions, no fewer GPUs, no shorter run.
func (f failedRepin) implies(g failedRepin) bool {
	return f.class == g.class && f.at == g.at && f.evictions == g.evictions && g.gpus >= f.gpus && g.d >= f.d
}
