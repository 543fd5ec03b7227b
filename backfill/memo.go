package backfill

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Whether a gang fits at t for a run of d depends only on its class,
// member size, required level and member count: the scorer, the
// preferred level and the spread level choose among placements, never
// whether one exists. And it is monotone: more members, a longer run, or
// a tighter profile (a reservation added, free GPUs taken now and
// released later) can only make it fit at fewer times. So, while the
// profile only tightens, an earlier answer for m members and d is a lower
// bound on the answer for any m' >= m and d' >= d, and "never" stays
// never.
//
// Proof sketch of the bound: let T' be the new answer. It fits on the old
// profile too. Take the last moment t0 <= T' at which the old profile's
// capacity could grow (a release, a reservation end, or 0). Between t0
// and T' no GPU was released and no reservation ended, so every GPU
// usable at T' was usable at t0 and t0 fits: the old answer T <= t0 <= T'.
//
// The same holds across shapes (see [shape.implies]): wherever a gang
// fits, a gang of a weaker shape with no more members fits too, so an
// answer remembered for the weaker shape bounds the stronger one.

// shape is what, besides members and run length, decides whether a gang
// fits.
type shape struct {
	class topology.Class
	g     int32
	req   int32
}

// memoGroup holds the lower bounds for one member count, by run length;
// at is non-decreasing in d (a bound for d holds for every longer run),
// and Forever means never.
type memoGroup struct {
	members int
	bounds  []memoBound
}

type memoBound struct {
	d, at time.Duration
}

// memoShape returns the memo key of r, or false when r is not
// remembered: a request that avoids nodes, or a malformed one.
func (p *Profile) memoShape(r gang.Request) (shape, bool) {
	if r.Avoid != nil || r.Members < 1 || r.GPUsPerMember < 1 || r.GPUsPerMember > p.ix.MaxGPUs() {
		return shape{}, false
	}
	nl := p.ix.NumLevels()
	if r.Required != gang.NoLevel && (r.Required < 0 || r.Required >= nl) {
		return shape{}, false
	}
	if r.Preferred != gang.NoLevel && (r.Preferred < 0 || r.Preferred >= nl) {
		return shape{}, false
	}
	return shape{class: r.Class, g: int32(r.GPUsPerMember), req: int32(r.Required)}, true
}

// implies reports a sufficient condition for a gang of shape w with as
// many members to fit wherever one of shape k fits: the same GPUs serve
// it when w's members need no more GPUs each (take that many of each
// member's), w takes any GPU type or k's, and w requires k's level or
// none. (Other pairs may imply each other too, such as a required level
// above k's; they are not used.)
func (k shape) implies(w shape) bool {
	return (w.class == k.class || w.class == topology.AnyType) && w.g <= k.g &&
		(w.req == k.req || w.req == gang.NoLevel)
}

// lowerBound returns the largest bound remembered for m members and a run
// of d of shape k or of a shape k implies. O(shapes × groups × log
// bounds).
func (p *Profile) lowerBound(k shape, m int, d time.Duration) time.Duration {
	lb := time.Duration(0)
	for w, gs := range p.memo {
		if k.implies(w) {
			lb = max(lb, boundIn(gs, m, d))
		}
	}
	return lb
}

// boundIn returns the largest of the bounds gs remembers for at most m
// members and a run of at most d.
func boundIn(gs []memoGroup, m int, d time.Duration) time.Duration {
	lb := time.Duration(0)
	for _, g := range gs {
		if g.members > m {
			break
		}
		i, found := slices.BinarySearchFunc(g.bounds, d, func(b memoBound, d time.Duration) int { return compareDur(b.d, d) })
		if !found {
			i--
		}
		if i >= 0 {
			lb = max(lb, g.bounds[i].at)
		}
	}
	return lb
}

// remember records that m members for d start no earlier than at
// (Forever: never). O(groups + bounds).
func (p *Profile) remember(k shape, m int, d, at time.Duration) {
	gs := p.memo[k]
	gi, found := slices.BinarySearchFunc(gs, m, func(g memoGroup, m int) int { return g.members - m })
	if !found {
		gs = slices.Insert(gs, gi, memoGroup{members: m})
		p.memo[k] = gs
	}
	g := &gs[gi]
	i, found := slices.BinarySearchFunc(g.bounds, d, func(b memoBound, d time.Duration) int { return compareDur(b.d, d) })
	if !found {
		prev := time.Duration(0)
		if i > 0 {
			prev = g.bounds[i-1].at
		}
		g.bounds = slices.Insert(g.bounds, i, memoBound{d: d, at: prev})
	}
	for j := i; j < len(g.bounds) && g.bounds[j].at < at; j++ {
		g.bounds[j].at = at
	}
}

// forget drops every remembered answer: the profile loosened.
func (p *Profile) forget() {
	if len(p.memo) > 0 {
		clear(p.memo)
	}
}

// freeNow is the number of free GPUs in the index.
func (p *Profile) freeNow() int {
	return p.ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType)
}

// sync forgets remembered answers if GPUs were freed in the index since
// the profile last looked: only taking GPUs keeps them valid.
func (p *Profile) sync() {
	if f := p.freeNow(); f > p.lastFree {
		p.forget()
	}
}

// settle notes the free GPUs the index has after a profile operation.
func (p *Profile) settle() { p.lastFree = p.freeNow() }

func compareDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
