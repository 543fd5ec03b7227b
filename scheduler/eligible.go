package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// A job's EligibleNodes limit every stage of its turn: placement now,
// its reservation on the profile, the victims preemption may pick for it
// (only where they free GPUs on its nodes) and spread. The limit reaches
// them all through one gang.Request field, Avoid, which the request of a
// job with a list carries (see request). The capability packages honour
// Avoid but pay for it node by node, so the scheduler answers first, from
// the eligible nodes alone, what can be told from their GPUs: whether the
// job can fit them now (placement is not tried when it cannot), whether it
// fits them with the reservations ignored, and whether they could ever
// hold it. A job of k eligible nodes that waits thus costs O(k) in those
// checks, not O(nodes of the cluster).
//
// Each distinct list is resolved once per Step into an eligibleSet
// (sorted node IDs and a bitset), shared by the jobs that name the same
// nodes in any order; memo keys carry its number, so jobs of one shape
// but different lists are never taken as alike.

// eligibleSet is one distinct list of eligible nodes, resolved.
type eligibleSet struct {
	id    int32             // 1, 2, ... in the order the Step met the lists; 0 is "every node"
	nodes []topology.NodeID // sorted, distinct
	in    []uint64          // bit n set when node n is eligible
}

// has reports whether node n is eligible.
func (e *eligibleSet) has(n topology.NodeID) bool {
	w := int(n) >> 6
	return w < len(e.in) && e.in[w]&(1<<(uint(n)&63)) != 0
}

// avoid is the set as a gang.Request Avoid predicate: true off the set.
func (e *eligibleSet) avoid(n topology.NodeID) bool { return !e.has(n) }

// eligibility is the Step's resolved lists: by canonical list (the names
// sorted, joined by a NUL byte) and by job.
type eligibility struct {
	byList map[string]*eligibleSet
	byJob  map[*Job]*eligibleSet
}

// eligibleOf returns j's resolved eligible nodes, nil when j may use
// every node. The first call for a job costs O(k log k) for k names (the
// first for a list also O(k + nodes/64) for its bitset); later ones O(1).
// Validation has checked that every name is a node and none repeats.
func (st *stepState) eligibleOf(j *Job) *eligibleSet {
	if j.EligibleNodes == nil {
		return nil
	}
	el := &st.eligible
	if e, ok := el.byJob[j]; ok {
		return e
	}
	if el.byJob == nil {
		el.byJob, el.byList = map[*Job]*eligibleSet{}, map[string]*eligibleSet{}
	}
	names := slices.Sorted(slices.Values(j.EligibleNodes))
	key := strings.Join(names, "\x00")
	e, ok := el.byList[key]
	if !ok {
		e = &eligibleSet{id: int32(len(el.byList) + 1), in: make([]uint64, (st.ix.NumNodes()+63)>>6)}
		for _, name := range names {
			if n, known := st.ix.Lookup(name); known {
				e.nodes = append(e.nodes, n)
				e.in[int(n)>>6] |= 1 << (uint(n) & 63)
			}
		}
		slices.Sort(e.nodes)
		el.byList[key] = e
	}
	el.byJob[j] = e
	return e
}

// eligibleID is the number memo keys carry for j's list: 0 for every node.
func (st *stepState) eligibleID(j *Job) int32 {
	if e := st.eligibleOf(j); e != nil {
		return e.id
	}
	return 0
}

// eligibleRoom counts the members of req's size and class that fit on
// e's nodes, each node giving room(n) GPUs: the most that one domain of
// req's required level holds, or all nodes together without one; and,
// beside it, the total over every domain. O(k) for k eligible nodes
// (O(k log k) with a required level).
func (st *stepState) eligibleRoom(e *eligibleSet, req gang.Request, room func(topology.NodeID) int) (best, total int) {
	g := req.GPUsPerMember
	if req.Required == gang.NoLevel {
		for _, n := range e.nodes {
			if st.ix.InClass(n, req.Class) {
				total += room(n) / g
			}
		}
		return total, total
	}
	type part struct {
		d topology.DomainID
		m int
	}
	parts := make([]part, 0, len(e.nodes))
	for _, n := range e.nodes {
		if st.ix.InClass(n, req.Class) {
			if m := room(n) / g; m > 0 {
				parts = append(parts, part{st.ix.DomainOf(req.Required, n), m})
			}
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return int(a.d) - int(b.d) })
	for i := 0; i < len(parts); {
		sum := 0
		k := i
		for ; k < len(parts) && parts[k].d == parts[i].d; k++ {
			sum += parts[k].m
		}
		best, total, i = max(best, sum), total+sum, k
	}
	return best, total
}

// freeRoom is the GPUs free now on node n of a ready node (the index
// holds no free GPU elsewhere).
func (st *stepState) freeRoom(n topology.NodeID) int { return st.ix.Free(n) }

// readyRoom is the healthy GPUs of node n when it is ready, else none:
// what it holds with every job gone.
func (st *stepState) readyRoom(n topology.NodeID) int {
	if st.ix.State(n) != topology.Ready {
		return 0
	}
	return st.ix.Healthy(n).Len()
}

// anyRoom is the healthy GPUs of node n, whatever its state.
func (st *stepState) anyRoom(n topology.NodeID) int { return st.ix.Healthy(n).Len() }

// eligibleFitsNow reports whether j (request req) may fit its eligible
// nodes on the GPUs free now, counted: false means no placement can
// succeed, true that one may. Jobs without a list always may.
func (st *stepState) eligibleFitsNow(j *Job, req gang.Request) bool {
	e := st.eligibleOf(j)
	if e == nil {
		return true
	}
	best, _ := st.eligibleRoom(e, req, st.freeRoom)
	return best >= j.Members
}

// eligibleSatisfiable refuses j, which the cluster could hold, when its
// eligible nodes never could, even with every job gone: no-eligible-node,
// saying whether they lack room for good or wait for eligible nodes that
// are down or draining. It runs after satisfiable, so the GPUs would fit
// elsewhere.
func (st *stepState) eligibleSatisfiable(j *Job, req gang.Request) status {
	e := st.eligibleOf(j)
	if e == nil {
		return status{}
	}
	if len(e.nodes) == 0 {
		return refuse(ReasonNoEligibleNode, "its list of eligible nodes is empty: it may use no node")
	}
	ready, _ := st.eligibleRoom(e, req, st.readyRoom)
	if ready >= j.Members {
		return status{}
	}
	all, _ := st.eligibleRoom(e, req, st.anyRoom)
	where := ""
	if req.Required != gang.NoLevel {
		where = " in one " + j.Topology.Required
	}
	if ready < all && j.Members <= all {
		return refuse(ReasonNoEligibleNode, fmt.Sprintf("needs %d×%d%s GPUs%s; its %s hold at most %s on ready nodes (%d with every node up), though others could: it waits for eligible nodes that are down or draining",
			j.Members, j.GPUsPerMember, typeWord(j.GPUType), where, counted(len(e.nodes), "eligible node"), counted(ready, "such member"), all))
	}
	return refuse(ReasonNoEligibleNode, fmt.Sprintf("needs %d×%d%s GPUs%s; its %s can never hold more than %s, though others could",
		j.Members, j.GPUsPerMember, typeWord(j.GPUType), where, counted(len(e.nodes), "eligible node"), counted(all, "such member")))
}

// noEligibleRoom is the status of j, which does not fit its eligible
// nodes on the GPUs free now even ignoring reservations, when it would
// fit the free GPUs of the cluster (out says whether it does: the outcome
// of the same request without the list): no-eligible-node. Otherwise
// undecided, and the usual reasons apply.
func (st *stepState) noEligibleRoom(j *Job, req gang.Request, out gang.Outcome) status {
	e := st.eligibleOf(j)
	if e == nil || out != gang.Placed {
		return status{}
	}
	best, _ := st.eligibleRoom(e, req, st.freeRoom)
	where := ""
	if req.Required != gang.NoLevel {
		where = " in one " + j.Topology.Required
	}
	return waitFor(ReasonNoEligibleNode, fmt.Sprintf("needs %d×%d%s GPUs%s; the free GPUs would hold it, but its %s have room for %s now",
		j.Members, j.GPUsPerMember, typeWord(j.GPUType), where, counted(len(e.nodes), "eligible node"), counted(best, "member")))
}
