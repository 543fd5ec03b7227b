package backfill

import (
	"cmp"
	"slices"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// preferReserved re-places pl, a placement now for a run of d that the
// index holds, so that it uses first the free GPUs that a reservation
// needs only after d (the job ends before that reservation starts), the
// soonest-needed first, and only then GPUs nobody reserved. A node's turn
// comes at the first reservation that needs one of its GPUs free for the
// run, however the profile joined reservations of equal GPUs. Those GPUs
// stay free for jobs that run past the reservations: on a flat pool this
// is exactly EASY's rule that a backfilled job which ends before the
// shadow time does not use up the extra processors. Among nodes whose
// reservations start together, it takes the fullest first (or, for a
// scorer asked member by member, the best scored), so that the job does
// not break into an emptier node that a later job could fill whole. The
// index holds the result. Cost: O(R' log E) for the R' reservation
// starts at or after d visited until enough GPUs are found (and the rest
// of those at the start where they were), plus one gang.Fill.
func (p *Profile) preferReserved(pl gang.Placement, r gang.Request, d time.Duration, s binpack.Scorer) gang.Placement {
	if d == Forever || limited(p.ix, r) {
		return pl // a job without a limit cannot end before any reservation; CPU and memory choose for a limited one
	}
	g := r.GPUsPerMember
	pl.Release(p.ix)
	var cs []preferred
	seen := map[topology.NodeID]bool{}
	capacity := 0
	enough := Forever // the start at which the candidates first had room for every member
	p.timeline.starts.From(timelineEntry{at: d, seq: -1}, func(evs []timelineEntry) bool {
		for _, e := range evs {
			if e.at > enough {
				return false // every node reserved from then on is collected
			}
			n := e.n
			if seen[n] {
				continue
			}
			if !p.ix.InClass(n, r.Class) || (pl.Level != topology.ClusterLevel && p.ix.DomainOf(pl.Level, n) != pl.Domain) {
				seen[n] = true
				continue
			}
			later := p.ix.FreeSet(n) & p.Reserved(n, d, Forever)
			if e.set&later == 0 && later != 0 {
				continue // it needs none of the GPUs free for the run
			}
			seen[n] = true
			if later.Len() >= g {
				cs = append(cs, preferred{n: n, at: e.at, set: later, rank: p.rank(n, g, s)})
				capacity += later.Len() / g
			}
			if capacity >= r.Members && enough == Forever {
				enough = e.at
			}
		}
		return true
	})
	if len(cs) == 0 {
		again, _ := gang.Fill(p.ix, r, pl.Level, pl.Domain, s)
		return again
	}
	slices.SortFunc(cs, func(a, b preferred) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		if c := cmp.Compare(b.rank, a.rank); c != 0 {
			return c
		}
		return cmp.Compare(a.n, b.n)
	})
	return p.takePreferred(p.ix, pl, r, cs, s)
}

// preferred is a node whose GPUs set a placement should use first; at,
// then rank (higher first), then n order candidates where that matters.
type preferred struct {
	n    topology.NodeID
	at   time.Duration
	set  topology.GPUSet
	rank int64
}

// rank rates node n as a place for members of g GPUs, as the gang placer
// would among nodes otherwise alike: by the scorer's score of the node's
// free GPUs when it is asked member by member, else (Pack, and the
// default) by fewest free GPUs, so that a job backfilled onto GPUs
// reserved for later leaves the emptiest nodes whole. O(T) for T GPU
// types when the scorer is asked.
func (p *Profile) rank(n topology.NodeID, g int, s binpack.Scorer) int64 {
	free := p.ix.Free(n)
	if c, ok := s.(binpack.Consolidator); s == nil || ok && c.Consolidate() {
		return -int64(free)
	}
	typ := ""
	for i := range p.ix.NumTypes() {
		if c, t := p.ix.TypeClass(i); c == p.ix.NodeClass(n) {
			typ = t
			break
		}
	}
	return s.Score(binpack.Candidate{Free: free, Request: g, GPUType: typ})
}

// takePreferred places r in ix inside pl's domain taking members from the
// preferred GPUs in the order given, then the rest with gang.Fill. ix
// holds the result. pl must already be released, and its slots are not
// used again: the result is written over them (a gang takes at most a
// slot per member, as many as gang.Place gives pl room for).
func (p *Profile) takePreferred(ix *topology.Index, pl gang.Placement, r gang.Request, cs []preferred, s binpack.Scorer) gang.Placement {
	g := r.GPUsPerMember
	out := gang.Placement{Level: pl.Level, Domain: pl.Domain, Slots: slices.Grow(pl.Slots[:0], r.Members)}
	left := r.Members
	for _, c := range cs {
		if left == 0 {
			break
		}
		k := min(c.set.Len()/g, left)
		set := c.set.Lowest(k * g)
		if err := ix.TakeSet(c.n, set); err != nil {
			continue
		}
		out.Slots = append(out.Slots, gang.Slot{Node: c.n, GPUs: set, Members: k})
		left -= k
	}
	if left == 0 {
		return out
	}
	rest := r
	rest.Members = left
	second, ok := gang.Fill(ix, rest, pl.Level, pl.Domain, s)
	if !ok {
		// Capacity drops by exactly one per member placed, so this does
		// not happen; fall back to a plain placement all the same.
		out.Release(ix)
		again, _ := gang.Fill(ix, r, pl.Level, pl.Domain, s)
		return again
	}
	out.Slots = append(out.Slots, second.Slots...)
	return out
}

// preferBusy re-places pl, which cursor c holds at t in its domain, so
// that it uses as many GPUs busy now and released by t as it can, and as
// few GPUs free now: those stay available for backfill. Candidates are
// the nodes of pl's domain with at least a member's worth of such GPUs,
// those that host the most members first, then by node. The cursor holds
// the result on return.
func (p *Profile) preferBusy(c *cursor, pl gang.Placement, r gang.Request, t time.Duration, s binpack.Scorer) gang.Placement {
	if t == 0 && !p.releasedNow || limited(c.ix, r) {
		return pl // nothing busy now is released by now; CPU and memory choose for a limited request
	}
	pl.Release(c.ix)
	g, maxG := r.GPUsPerMember, c.ix.MaxGPUs()
	busy := func(n topology.NodeID) topology.GPUSet { return c.ix.FreeSet(n) & p.ix.Held(n) }
	cs := p.scratch.preferred[:0]
	defer func() { p.scratch.preferred = cs[:0] }()
	// Nodes that host the most members have at least that many members'
	// GPUs free at t. When one bucket holds all of them, it lists them in
	// node order, and enough of them settle the choice without looking
	// at the others.
	top := maxG / g
	if top*g == maxG {
		got := 0
		for n := range c.ix.Bucket(pl.Level, pl.Domain, r.Class, maxG) {
			if b := busy(n); b.Len()/g == top {
				cs = append(cs, preferred{n: n, set: b})
				if got += top; got >= r.Members {
					return p.takePreferred(c.ix, pl, r, cs, s)
				}
			}
		}
		cs = cs[:0]
	}
	for f := g; f <= maxG; f++ {
		for n := range c.ix.Bucket(pl.Level, pl.Domain, r.Class, f) {
			if b := busy(n); b.Len() >= g {
				cs = append(cs, preferred{n: n, set: b})
			}
		}
	}
	slices.SortFunc(cs, func(a, b preferred) int {
		if c := cmp.Compare(b.set.Len()/g, a.set.Len()/g); c != 0 {
			return c
		}
		return cmp.Compare(a.n, b.n)
	})
	return p.takePreferred(c.ix, pl, r, cs, s)
}
