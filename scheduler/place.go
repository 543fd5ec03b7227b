package scheduler

import (
	"maps"
	"slices"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// placeNowWithinShadows is the stage that starts j now, which it may only
// by the EASY shadow-time rule: the start of a reservation is its shadow
// time, and a job may start now only on GPUs that no reservation holds
// before the job would end (its hold d: time limit plus the grace of its
// eviction at the limit). So it either ends by the shadow time of every
// reservation on the GPUs it takes, or takes extra GPUs that nobody
// reserved. The profile applies the rule ([backfill.Profile.PlaceNow]);
// on a flat pool it is exactly EASY's. Example, ten one-GPU nodes, a
// running job holding six until now+1h, and A (8 GPUs) reserved at its
// shadow time now+1h on those six and two free ones, which leaves two
// extra:
//
//	next job  GPUs  limit  starts now  because
//	B         4     30m    yes         ends before the shadow time
//	B         4     1h     yes         ends at the shadow time
//	B         2     3h     yes         runs past it on the two extra GPUs
//	B         3     3h     no          runs past it and needs one of A's GPUs
//	B         2     none   yes         never ends, on the two extra GPUs
//	B         5     10m    no          five GPUs are not free now
//
// A job that does not start this way is left undecided for the next
// stage. key is j's shape and view of the reservations (see shapeKey);
// shapes known not to fit are not asked again.
func (st *stepState) placeNowWithinShadows(j *Job, req gang.Request, d time.Duration, key shapeKey) status {
	if st.memo.failsNow(key, j.Members) {
		return status{}
	}
	if !st.eligibleFitsNow(j, req) { // counted on its eligible nodes alone
		st.memo.noteFailsNow(key, j.Members)
		return status{}
	}
	var pl gang.Placement
	var out gang.Outcome
	if j.Placement == Spread && j.Group != "" {
		pl, out = st.placeApart(j, req, d)
	} else {
		pl, out = st.placeNow(j, req, d, nil)
	}
	if out != gang.Placed {
		st.memo.noteFailsNow(key, j.Members)
		return status{}
	}
	st.recordPlacement(j, pl)
	return status{code: started}
}

// shapeOf is the memo key of j, whose request is req and hold d.
func (st *stepState) shapeOf(j *Job, req gang.Request, d time.Duration) shapeKey {
	return shapeKey{class: req.Class, gpusPerMember: req.GPUsPerMember, cpu: req.CPUMillis, mem: req.MemoryMiB, required: req.Required, preferred: req.Preferred,
		mode: int32(j.Placement), spread: req.SpreadLevel, shadows: st.shadowsWithin(d), reservations: len(st.reservations.made),
		eligible: st.eligibleID(j)}
}

// request is j's gang request; false when no node has j's GPU type. A job
// with a list of eligible nodes avoids every other node.
func (st *stepState) request(j *Job) (gang.Request, bool) {
	req := gang.NewRequest(j.Members, j.GPUsPerMember)
	req.CPUMillis, req.MemoryMiB = int64(j.CPUMillis), int64(j.MemoryMiB)
	if e := st.eligibleOf(j); e != nil {
		req.Avoid = e.avoid
	}
	c, ok := st.ix.Class(j.GPUType)
	req.Class = c
	if j.Topology.Required != "" {
		if l, has := st.levels[j.Topology.Required]; has {
			req.Required = l
		}
	}
	if j.Topology.Preferred != "" {
		if l, has := st.levels[j.Topology.Preferred]; has {
			req.Preferred = l
		}
	}
	req.Chooser = st.cfg.Domains
	if j.Placement == Spread {
		req.Distinct = true
		if l, has := st.levels[j.SpreadLevel]; has && j.SpreadLevel != "" {
			req.SpreadLevel = l
		}
	}
	return req, ok
}

// scorer is the node scorer for j's placement mode (nil: the default).
func (st *stepState) scorer(j *Job) binpack.Scorer {
	if j.Placement == Spread {
		if st.cfg.Spread != nil {
			return st.cfg.Spread
		}
		return binpack.Spread{}
	}
	return st.cfg.Pack
}

// recordPlacement records that j starts now on pl, which the profile
// holds already.
func (st *stepState) recordPlacement(j *Job, pl gang.Placement) {
	st.decided.Placements = append(st.decided.Placements, Placement{Job: j.ID, Allocation: pl.Allocation(st.ix)})
	st.addInUse(j, 1)
	if j.Group != "" {
		for _, sl := range pl.Slots {
			st.addGroup(j.Group, sl.Node, sl.Members)
		}
	}
}

// groupPlaces is where a service group's members are: how many on each
// node and, for each spread level a job of the group has asked about, in
// each domain of it; and, per such place kind, how many places hold each
// count, for placeApart's tries.
type groupPlaces struct {
	nodes   map[topology.NodeID]int
	byLevel map[int]*levelPlaces
	hist    map[int]int // count -> nodes holding that many members
}

// levelPlaces is a group's members per domain of one level, and how many
// domains hold each count.
type levelPlaces struct {
	domains map[topology.DomainID]int
	hist    map[int]int
}

// addGroup counts members more members of group on node n. O(levels the
// group was asked about).
func (st *stepState) addGroup(group string, n topology.NodeID, members int) {
	g := st.groups[group]
	if g == nil {
		g = &groupPlaces{nodes: map[topology.NodeID]int{}, byLevel: map[int]*levelPlaces{}, hist: map[int]int{}}
		st.groups[group] = g
	}
	moveCount(g.hist, g.nodes[n], g.nodes[n]+members)
	g.nodes[n] += members
	for l, lp := range g.byLevel {
		d := st.ix.DomainOf(l, n)
		moveCount(lp.hist, lp.domains[d], lp.domains[d]+members)
		lp.domains[d] += members
	}
}

// moveCount moves one place from count from to count to in hist, where
// count 0 is not kept.
func moveCount(hist map[int]int, from, to int) {
	if from == to {
		return
	}
	if from > 0 {
		if hist[from]--; hist[from] == 0 {
			delete(hist, from)
		}
	}
	if to > 0 {
		hist[to]++
	}
}

// at returns g's members per domain of level, counting them the first
// time level is asked for. O(nodes of the group) then, O(1) after.
func (g *groupPlaces) at(ix *topology.Index, level int) *levelPlaces {
	lp := g.byLevel[level]
	if lp == nil {
		lp = &levelPlaces{domains: map[topology.DomainID]int{}, hist: map[int]int{}}
		for n, c := range g.nodes {
			lp.domains[ix.DomainOf(level, n)] += c
		}
		for _, c := range lp.domains {
			if c > 0 {
				lp.hist[c]++
			}
		}
		g.byLevel[level] = lp
	}
	return lp
}

// placeApart places a spread job of a group away from the group's other
// members: first on nodes (or domains of its spread level) holding none
// of them, then on those holding at most one, and so on, so replicas
// double up as little as capacity allows. Within each try, its members
// go first to places holding no member of the group (gang.Request
// Occupied), so the group sits on as many places as capacity allows. Its
// last try may use every place, so it fails exactly when a placement
// without the group in view would, and it reports that try's outcome.
//
// Only the bounds at which the set of places left out changes are tried:
// none held, then fewer than each count some place holds, so a job costs
// O(m log m) for the m distinct counts (m ≤ √(2·members of the group))
// plus m+1 placements, however many members one place holds.
func (st *stepState) placeApart(j *Job, req gang.Request, d time.Duration) (gang.Placement, gang.Outcome) {
	g := st.groups[j.Group]
	if g == nil || len(g.nodes) == 0 {
		return st.placeNow(j, req, d, nil)
	}
	level := req.SpreadLevel
	count := func(n topology.NodeID) int { return g.nodes[n] }
	hist := g.hist
	if level != gang.NoLevel {
		lp := g.at(st.ix, level)
		count = func(n topology.NodeID) int { return lp.domains[st.ix.DomainOf(level, n)] }
		hist = lp.hist
	}
	counts := slices.Sorted(maps.Keys(hist))
	req.Occupied = func(n topology.NodeID) bool { return count(n) > 0 }
	for i := range counts {
		// Leave out the places holding counts[i] or more members (all
		// that hold any, first).
		k := 1
		if i > 0 {
			k = counts[i-1] + 1
		}
		if pl, out := st.placeNow(j, req, d, func(n topology.NodeID) bool { return count(n) >= k }); out == gang.Placed {
			return pl, out
		}
	}
	return st.placeNow(j, req, d, nil) // every place, still off the group's first
}
