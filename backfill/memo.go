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
//
// Moving a release earlier (a preempted job freeing its GPUs at its
// checkpoint grace instead of its time limit) loosens the profile, but
// only for runs that start while the moved GPUs are newly free: a GPU
// released at b before and at a < b now is usable for a run from t
// exactly as before unless a <= t < b, since before a it is released
// neither way and from b on it is released both ways. So the profile
// keeps such windows [a, b) in a list, and a bound remembered before
// window w was added still holds outside w: a later answer lies at the
// bound or later, or inside a window added since. A query searches those
// windows below the bound first, each a sweep of its own, and then
// starts at the bound. Windows and bounds are dropped together when
// anything else loosens the profile.

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

// A memoBound holds for runs of d or longer: they start at at or later,
// or inside one of the loosened windows numbered epoch or more.
type memoBound struct {
	d, at time.Duration
	epoch int32
}

// window is a span of times [from, to).
type window struct{ from, to time.Duration }

// loosened is a release moved earlier: runs that start in [from, to) may
// use the GPUs set of node n, which they could not use before.
type loosened struct {
	n        topology.NodeID
	set      topology.GPUSet
	from, to time.Duration
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
// of d of shape k or of a shape k implies, and the first loosened window
// that bound does not rule out (among bounds as large, the one that rules
// out the most). O(shapes × groups × log bounds).
func (p *Profile) lowerBound(k shape, m int, d time.Duration) memoBound {
	lb := memoBound{epoch: int32(len(p.loose))}
	for w, gs := range p.memo {
		if k.implies(w) {
			lb = later(lb, boundIn(gs, m, d))
		}
	}
	return lb
}

// later returns the stronger of two bounds: the later one, or of two
// alike the one that leaves fewer windows to search.
func later(a, b memoBound) memoBound {
	if b.at > a.at || b.at == a.at && b.epoch > a.epoch {
		return b
	}
	return a
}

// boundIn returns the largest of the bounds gs remembers for at most m
// members and a run of at most d.
func boundIn(gs []memoGroup, m int, d time.Duration) memoBound {
	var lb memoBound
	for _, g := range gs {
		if g.members > m {
			break
		}
		i, found := slices.BinarySearchFunc(g.bounds, d, func(b memoBound, d time.Duration) int { return compareDur(b.d, d) })
		if !found {
			i--
		}
		if i >= 0 {
			lb = later(lb, g.bounds[i])
		}
	}
	return lb
}

// remember records that m members for d start no earlier than at
// (Forever: never), given every window loosened so far. O(groups +
// bounds).
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
		prev := memoBound{d: d}
		if i > 0 {
			prev.at, prev.epoch = g.bounds[i-1].at, g.bounds[i-1].epoch
		}
		g.bounds = slices.Insert(g.bounds, i, prev)
	}
	now := int32(len(p.loose))
	for j := i; j < len(g.bounds) && g.bounds[j].at <= at; j++ {
		g.bounds[j].at, g.bounds[j].epoch = at, now
	}
}

// loosen records that runs from from until to may use the GPUs s of node
// n, which they could not use before. O(1).
func (p *Profile) loosen(n topology.NodeID, s topology.GPUSet, from, to time.Duration) {
	if len(p.memo) > 0 && from < to {
		p.loose = append(p.loose, loosened{n: n, set: s, from: from, to: to})
	}
}

// firstWindow returns the earliest start of the loosened windows
// numbered epoch or more, or end when none begins before it.
func (p *Profile) firstWindow(epoch int32, end time.Duration) time.Duration {
	first := end
	for _, l := range p.loose[epoch:] {
		first = min(first, l.from)
	}
	return first
}

// windowsBelow returns, merged and in order, the starts in [t, end) at
// which a run of r for d could use a GPU loosened in a window numbered
// epoch or more: the GPU is of r's class and no reservation holds it
// during the run. Only there can r start before its remembered bound.
// O(W·g·e log e) for W windows, g GPUs each, and e events per node.
func (p *Profile) windowsBelow(epoch int32, r gang.Request, d, t, end time.Duration) []window {
	ws := p.winBuf[:0]
	for _, l := range p.loose[epoch:] {
		if r.Class != topology.AnyType && p.ix.NodeClass(l.n) != r.Class {
			continue
		}
		from, to := max(l.from, t), min(l.to, end)
		if from >= to {
			continue
		}
		for g := l.set & p.ix.Healthy(l.n); g != 0; g &= g - 1 {
			ws = p.startsOn(ws, l.n, g&-g, d, from, to)
		}
	}
	slices.SortFunc(ws, func(a, b window) int { return compareDur(a.from, b.from) })
	out := ws[:0]
	for _, w := range ws {
		if k := len(out) - 1; k >= 0 && w.from <= out[k].to {
			out[k].to = max(out[k].to, w.to)
			continue
		}
		out = append(out, w)
	}
	p.winBuf = out
	return out
}

// startsOn appends to ws the starts in [from, to) at which no
// reservation holds GPU g of node n during a run of d.
func (p *Profile) startsOn(ws []window, n topology.NodeID, g topology.GPUSet, d, from, to time.Duration) []window {
	res := p.resBuf[:0]
	for _, e := range p.nodes[n] {
		if e.reserve && e.set&g != 0 && e.end > from {
			res = append(res, window{e.start, e.end})
		}
	}
	slices.SortFunc(res, func(a, b window) int { return compareDur(a.from, b.from) })
	cur := from
	for _, h := range res {
		if cur >= to {
			break
		}
		// Starts s with s+d <= h.from run before it.
		if last := h.from - d; last >= cur {
			ws = append(ws, window{cur, min(last+1, to)})
		}
		cur = max(cur, h.to)
	}
	if cur < to {
		ws = append(ws, window{cur, to})
	}
	p.resBuf = res[:0]
	return ws
}

// forget drops every remembered answer: the profile loosened.
func (p *Profile) forget() {
	if len(p.memo) > 0 {
		clear(p.memo)
	}
	p.loose = p.loose[:0]
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
