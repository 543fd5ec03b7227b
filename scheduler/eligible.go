package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/binpack"

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
	// probes, when not nil (in tests), counts the calls of avoid: the
	// nodes that the capability packages looked at one by one.
	probes *int
	// sub is an index of the set's nodes alone (see subIndex); noSub
	// says it could not be built.
	sub   *topology.Index
	noSub bool
}

// has reports whether node n is eligible.
func (e *eligibleSet) has(n topology.NodeID) bool {
	w := int(n) >> 6
	return w < len(e.in) && e.in[w]&(1<<(uint(n)&63)) != 0
}

// avoid is the set as a gang.Request Avoid predicate: true off the set.
func (e *eligibleSet) avoid(n topology.NodeID) bool {
	if e.probes != nil {
		*e.probes++
	}
	return !e.has(n)
}

// eligibility is the Step's resolved lists: by canonical list (the names
// sorted, joined by a NUL byte) and by job.
type eligibility struct {
	byList map[string]*eligibleSet
	byJob  map[*Job]*eligibleSet
	// bySlice is by list identity (see listID): jobs that share one
	// slice share its set without sorting it again.
	bySlice map[listID]*eligibleSet
	probes  *int // given to every set (see eligibleSet.probes)
	// nodeAt is the index of each node in the snapshot's cluster, by
	// name, for building the sets' indexes.
	nodeAt map[string]int
}

// eligibleOf returns j's resolved eligible nodes, nil when j may use
// every node. The first call for a job costs O(k log k) for k names (the
// first for a list also O(k + nodes/64) for its bitset), O(1) when its
// list is the very slice of a job resolved before; later ones O(1).
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
		el.byJob, el.byList, el.bySlice = map[*Job]*eligibleSet{}, map[string]*eligibleSet{}, map[listID]*eligibleSet{}
	}
	var id listID
	if len(j.EligibleNodes) > 0 {
		id = idOf(j.EligibleNodes)
		if e, ok := el.bySlice[id]; ok {
			el.byJob[j] = e
			return e
		}
	}
	names := slices.Sorted(slices.Values(j.EligibleNodes))
	key := strings.Join(names, "\x00")
	e, ok := el.byList[key]
	if !ok {
		e = &eligibleSet{id: int32(len(el.byList) + 1), in: make([]uint64, (st.ix.NumNodes()+63)>>6), probes: el.probes}
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
	if id.first != nil {
		el.bySlice[id] = e
	}
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
// beside it, the total over every domain. A node's members are also
// bounded by its CPU and memory: free now (now), else its capacity.
// O(k) for k eligible nodes (O(k log k) with a required level).
func (st *stepState) eligibleRoom(e *eligibleSet, req gang.Request, room func(topology.NodeID) int, now bool) (best, total int) {
	g := req.GPUsPerMember
	members := func(n topology.NodeID) int { return st.resourceRoom(n, req, room(n)/g, now) }
	if req.Required == gang.NoLevel {
		for _, n := range e.nodes {
			if st.ix.InClass(n, req.Class) {
				total += members(n)
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
			if m := members(n); m > 0 {
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

// resourceRoom bounds k, the members of req that node n holds by GPUs,
// by its CPU and memory: free now (now), else its capacity.
func (st *stepState) resourceRoom(n topology.NodeID, req gang.Request, k int, now bool) int {
	if k == 0 || (req.CPUMillis == 0 && req.MemoryMiB == 0) || !st.ix.Limited() {
		return k
	}
	cpu, mem := st.ix.CPUCapacity(n), st.ix.MemoryCapacity(n)
	if now {
		cpu, mem = st.ix.FreeCPU(n), st.ix.FreeMemory(n)
	}
	if req.CPUMillis > 0 {
		k = int(min(int64(k), cpu/req.CPUMillis))
	}
	if req.MemoryMiB > 0 {
		k = int(min(int64(k), mem/req.MemoryMiB))
	}
	return k
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

// eligibleRoomFor reports whether e's nodes hold want members of req,
// each node giving room(n) GPUs: eligibleRoom's best >= want. Without a
// required level it stops at the first nodes that hold them, so a job
// that fits costs O(nodes read), not O(k).
func (st *stepState) eligibleRoomFor(e *eligibleSet, req gang.Request, room func(topology.NodeID) int, now bool, want int) bool {
	if req.Required != gang.NoLevel {
		best, _ := st.eligibleRoom(e, req, room, now)
		return best >= want
	}
	g, total := req.GPUsPerMember, 0
	for _, n := range e.nodes {
		if total >= want {
			return true
		}
		if st.ix.InClass(n, req.Class) {
			total += st.resourceRoom(n, req, room(n)/g, now)
		}
	}
	return total >= want
}

// eligibleFitsNow reports whether j (request req) may fit its eligible
// nodes on the GPUs free now, counted: false means no placement can
// succeed, true that one may. Jobs without a list always may.
func (st *stepState) eligibleFitsNow(j *Job, req gang.Request) bool {
	e := st.eligibleOf(j)
	if e == nil {
		return true
	}
	return st.eligibleRoomFor(e, req, st.freeRoom, true, j.Members)
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
	if st.eligibleRoomFor(e, req, st.readyRoom, false, j.Members) {
		return status{}
	}
	ready, _ := st.eligibleRoom(e, req, st.readyRoom, false)
	all, _ := st.eligibleRoom(e, req, st.anyRoom, false)
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
	best, _ := st.eligibleRoom(e, req, st.freeRoom, true)
	where := ""
	if req.Required != gang.NoLevel {
		where = " in one " + j.Topology.Required
	}
	return waitFor(ReasonNoEligibleNode, fmt.Sprintf("needs %d×%d%s GPUs%s; the free GPUs would hold it, but its %s have room for %s now",
		j.Members, j.GPUsPerMember, typeWord(j.GPUType), where, counted(len(e.nodes), "eligible node"), counted(best, "member")))
}

// subIndex is an index of e's nodes alone (NodeID i is e.nodes[i]: IDs
// follow names in both), built the first time e is placed on, so that
// the placer walks e's nodes instead of skipping the cluster's others one
// by one. Its held GPUs are set for each placement (see placeEligible).
// nil when it cannot be built (it always can from a valid snapshot).
func (st *stepState) subIndex(e *eligibleSet) *topology.Index {
	if e.sub != nil || e.noSub {
		return e.sub
	}
	el := &st.eligible
	if el.nodeAt == nil {
		el.nodeAt = make(map[string]int, len(st.snap.Cluster.Nodes))
		for i := range st.snap.Cluster.Nodes {
			el.nodeAt[st.snap.Cluster.Nodes[i].Name] = i
		}
	}
	c := topology.Cluster{Levels: st.snap.Cluster.Levels, Nodes: make([]topology.Node, len(e.nodes))}
	for i, n := range e.nodes {
		c.Nodes[i] = st.snap.Cluster.Nodes[el.nodeAt[st.ix.Name(n)]]
	}
	sub, err := topology.NewIndex(&c)
	if err != nil {
		e.noSub = true
		return nil
	}
	e.sub = sub
	return sub
}

// placeEligible places req (a job's request, whose Avoid is its list) on
// e's nodes for a run of d from t, on the GPUs the profile finds usable
// there for it (backfill.Profile.UsableOn), as the placer would on the
// whole cluster; apart and occupied, when not nil, are the group bounds
// of placeApart. With now, t is 0 and only GPUs free now count (as the
// profile's PlaceNow takes them), not those released at 0 and still
// held. It holds nothing. O(k·e) for k eligible nodes of e events each,
// plus one placement on an index of k nodes.
func (st *stepState) placeEligible(e *eligibleSet, req gang.Request, s binpack.Scorer, t, d time.Duration, now bool,
	apart func(topology.NodeID) bool) (gang.Placement, bool) {
	sub := st.subIndex(e)
	if sub == nil {
		return gang.Placement{}, false
	}
	r := req
	r.Avoid, r.Occupied = nil, nil
	if req.Class != topology.AnyType {
		c, ok := sub.Class(st.typeName(req.Class))
		if !ok {
			return gang.Placement{}, false
		}
		r.Class = c
	}
	if apart != nil {
		r.Avoid = func(i topology.NodeID) bool { return apart(e.nodes[i]) }
	}
	if occupied := req.Occupied; occupied != nil {
		r.Occupied = func(i topology.NodeID) bool { return occupied(e.nodes[i]) }
	}
	for i, n := range e.nodes {
		u := st.profile.UsableOn(n, t, d)
		if now {
			u &= st.ix.FreeSet(n)
		}
		sub.SetHeld(topology.NodeID(i), topology.FirstN(st.ix.GPUs(n))&^u)
		if sub.Limited() {
			at := t
			if now {
				at = -1 // the live view: nothing released yet
			}
			cpu, mem := st.profile.UseOn(n, at, d)
			sub.SetUse(topology.NodeID(i), cpu, mem)
		}
	}
	if sub.CapacityFor(topology.ClusterLevel, 0, r.Class, r.GPUsPerMember, r.CPUMillis, r.MemoryMiB) < r.Members {
		return gang.Placement{}, false
	}
	pl, out := gang.Place(sub, r, s)
	if out != gang.Placed {
		return gang.Placement{}, false
	}
	pl.Release(sub)
	for i := range pl.Slots {
		pl.Slots[i].Node = e.nodes[pl.Slots[i].Node]
	}
	if pl.Level != topology.ClusterLevel && len(pl.Slots) > 0 {
		pl.Domain = st.ix.DomainOf(pl.Level, pl.Slots[0].Node)
	}
	return pl, true
}

// placeNow starts j now under req, off the nodes apart reports (nil:
// none; placeApart's group bound), as the profile's PlaceNow does: on
// GPUs free now and reserved by nobody during its run. A job with a list
// is placed on its eligible nodes alone (placeEligible), then held.
func (st *stepState) placeNow(j *Job, req gang.Request, d time.Duration, apart func(topology.NodeID) bool) (gang.Placement, gang.Outcome) {
	e := st.eligibleOf(j)
	if e == nil {
		req.Avoid = apart
		return st.profile.PlaceNow(req, d, st.scorer(j))
	}
	pl, ok := st.placeEligible(e, req, st.scorer(j), 0, d, true, apart)
	if !ok {
		return gang.Placement{}, gang.NoCapacity
	}
	st.profile.Take(pl, d)
	return pl, gang.Placed
}

// earliestBy is the profile's EarliestBy for j (request req): the
// earliest start in [notBefore, by] (backfill.Forever: no bound) of a
// run of d, and its GPUs. For a job with a list, only the instants at
// which GPUs of its eligible nodes grow usable are tried (and notBefore),
// each by placeEligible: O(k·e) instants of O(k·e) each, never a sweep of
// the cluster.
func (st *stepState) earliestBy(j *Job, req gang.Request, d, notBefore, by time.Duration) (backfill.Start, bool) {
	e := st.eligibleOf(j)
	if e == nil {
		return st.profile.EarliestBy(req, d, st.scorer(j), notBefore, by)
	}
	if !req.Valid(st.ix) {
		return backfill.Start{}, false
	}
	notBefore = max(notBefore, 0)
	times := []time.Duration{notBefore}
	for _, n := range e.nodes {
		times = st.profile.AppendGrowths(times, n)
	}
	slices.Sort(times)
	for i, t := range times {
		if t < notBefore || t > by || t == backfill.Forever || i > 0 && t == times[i-1] {
			continue
		}
		if pl, ok := st.placeEligible(e, req, st.scorer(j), t, d, false, nil); ok {
			return backfill.Start{At: t, Placement: pl}, true
		}
	}
	return backfill.Start{}, false
}
