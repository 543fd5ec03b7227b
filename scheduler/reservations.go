package scheduler

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

type resvInfo struct {
	job   string
	start time.Duration
	end   time.Duration
	slots []gang.Slot // the GPUs reserved
}

// classResv is the reservations on the nodes of one GPU class.
type classResv struct {
	reserve []int32         // indices in run.reserve, in the order made
	starts  []time.Duration // their starts, sorted
	live    []int32         // those that may hold GPUs free now: see delays
}

// reserveAt reserves pl from start for a run of d for j, in the profile
// and in the decision.
func (st *stepState) reserveAt(j *Job, pl gang.Placement, start, d time.Duration) {
	for _, sl := range pl.Slots {
		if taken := sl.GPUs & st.evicting[sl.Node] &^ st.promised[sl.Node]; taken != 0 {
			if st.promised == nil {
				st.promised = map[topology.NodeID]topology.GPUSet{}
			}
			st.promised[sl.Node] |= taken
			st.freeing -= (taken & st.ix.Healthy(sl.Node)).Len()
		}
	}
	st.prof.Reserve(pl, start, d)
	st.addReservation(j, resvInfo{job: j.ID, start: start, end: addDur(start, d), slots: pl.Slots}, pl)
	st.d.Reservations = appendDoubling(st.d.Reservations, Reservation{Job: j.ID, Start: st.at(start), Allocation: pl.Allocation(st.ix)})
}

// blocks is the number of reservations that start before d: jobs of one
// shape with the same count see the same reserved GPUs.
// O(log R).
func (st *stepState) blocks(d time.Duration) int {
	n, _ := slices.BinarySearch(st.starts, d)
	return n
}

// addReservation records a reservation made in this Step for j. Its GPUs
// count against j's team quota from now on, so that later jobs of the team
// cannot use up the quota the reserved job will need when it starts.
func (st *stepState) addReservation(j *Job, rs resvInfo, pl gang.Placement) {
	st.inUse[j.Team] += j.GPUs()
	if len(st.quotas) > 0 {
		if st.reserved == nil {
			st.reserved = map[string]int{}
		}
		st.reserved[j.Team] += j.GPUs()
	}
	k := int32(len(st.reserve))
	st.reserve = appendDoubling(st.reserve, rs)
	st.starts = insertSorted(st.starts, rs.start)
	if held, _ := st.holdsFree(&rs, topology.AnyType, 1); held {
		st.live = append(st.live, k)
	}
	if st.ix.NumTypes() < 2 {
		return // one class: every reservation concerns every job
	}
	if st.byClass == nil {
		st.byClass = map[topology.Class]*classResv{}
	}
	for i, sl := range pl.Slots {
		c := st.ix.NodeClass(sl.Node)
		if slices.ContainsFunc(pl.Slots[:i], func(o gang.Slot) bool { return st.ix.NodeClass(o.Node) == c }) {
			continue // a gang of any type may span classes: count it once in each
		}
		cr := st.byClass[c]
		if cr == nil {
			cr = &classResv{}
			st.byClass[c] = cr
		}
		cr.reserve = append(cr.reserve, k)
		cr.starts = insertSorted(cr.starts, rs.start)
		if held, _ := st.holdsFree(&rs, c, 1); held {
			cr.live = append(cr.live, k)
		}
	}
}

// holdsFree reports whether rs holds GPUs that are free now on nodes of
// class c, and whether it does on one with at least g GPUs free: a job
// of class c and g GPUs per member that starts now can take only those.
func (st *stepState) holdsFree(rs *resvInfo, c topology.Class, g int) (held, room bool) {
	for _, sl := range rs.slots {
		if free := st.ix.FreeSet(sl.Node); sl.GPUs&free != 0 && st.ix.InClass(sl.Node, c) {
			if held = true; free.Len() >= g {
				return true, true
			}
		}
	}
	return held, false
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

func insertSorted(s []time.Duration, v time.Duration) []time.Duration {
	i, _ := slices.BinarySearch(s, v)
	return slices.Insert(s, i, v)
}

// delays calls f, in the order they were made, for the reservations
// that a job of class c and g GPUs per member running for d could delay:
// those that start within d and hold GPUs free now on nodes of its class
// with g GPUs free (a job that fits now takes only such GPUs). Free GPUs
// only get fewer during a Step, so a reservation found holding none
// never does again and is dropped from the list of those that may:
// O(reservations that still may), not O(reservations).
func (st *stepState) delays(c topology.Class, g int, d time.Duration, f func(rs *resvInfo)) {
	list := &st.live
	if c != topology.AnyType {
		cr := st.byClass[c]
		if cr == nil {
			return
		}
		list = &cr.live
	}
	kept := (*list)[:0]
	for _, i := range *list {
		rs := &st.reserve[i]
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
