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
// checkpoint grace instead of its time limit, or ever) loosens the
// profile, but only for runs that start while the moved GPUs are newly
// free: a GPU released at b before (Forever for a job without a limit)
// and at a < b now is usable for a run from t exactly as before unless
// a <= t < b, since before a it is released neither way and from b on it
// is released both ways. So the profile keeps, for each move, the window
// [a, b) with b the latest old release of the GPUs moved, and a bound
// remembered before a window was added still holds outside it, in this
// stronger form: every start below the bound at which a request of that
// shape, or a stronger one with as many members or more and as long a
// run or longer, fits now uses a moved GPU that is free for its whole run
// and lies in a window added since. A query searches those starts below
// its bound first (each span a sweep of its own), then starts at the
// bound; it needs no search below the largest bound remembered since the
// last window was added. Windows and bounds are dropped together when
// anything else loosens the profile, or when there are too many windows.

// shape is what, besides members and run length, decides whether a gang
// fits.
type shape struct {
	class         topology.Class
	gpusPerMember int32
	required      int32
	cpu, mem      int64 // per member
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

// loosened is a moved release: runs that start in [from, to) may use the
// GPUs set of node n, which they could not use before. gaps holds,
// once a query first needs them (known), the spans from a start in
// [from, to) during which one of those GPUs is not reserved, as of the
// node's count of reservations seen. Later reservations only shorten
// such spans, so they stay a superset; a query recomputes them when the
// node has been reserved since, so that it does not sweep spans that
// later reservations filled.
type loosened struct {
	n        topology.NodeID
	set      topology.GPUSet
	from, to time.Duration
	gaps     []window
	known    bool
	seen     uint32
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
	return shape{class: r.Class, gpusPerMember: int32(r.GPUsPerMember), required: int32(r.Required), cpu: r.CPUMillis, mem: r.MemoryMiB}, true
}

// implies reports a sufficient condition for a gang of shape w with as
// many members to fit wherever one of shape k fits: the same GPUs serve
// it when w's members need no more GPUs each (take that many of each
// member's), w takes any GPU type or k's, and w requires k's level or
// none. (Other pairs may imply each other too, such as a required level
// above k's; they are not used.)
func (k shape) implies(w shape) bool {
	return (w.class == k.class || w.class == topology.AnyType) && w.gpusPerMember <= k.gpusPerMember &&
		(w.required == k.required || w.required == gang.NoLevel) && w.cpu <= k.cpu && w.mem <= k.mem
}

// lowerBound returns the largest bound remembered for m members and a run
// of d of shape k or of a shape k implies (among bounds as large, the one
// that leaves the fewest loosened windows to search), and the largest of
// those bounds that leave none: no start comes before it. O(shapes ×
// groups × bounds).
func (mm *memo) lowerBound(k shape, m int, d time.Duration) (lb memoBound, floor time.Duration) {
	now := int32(len(mm.loose))
	lb.epoch = now
	for w, gs := range mm.answers {
		if k.implies(w) {
			b, f := boundIn(gs, m, d, now)
			lb, floor = later(lb, b), max(floor, f)
		}
	}
	return lb, floor
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
// members and a run of at most d, and the largest of them found since the
// last loosening (epoch now).
func boundIn(gs []memoGroup, m int, d time.Duration, now int32) (lb memoBound, floor time.Duration) {
	for _, g := range gs {
		if g.members > m {
			break
		}
		i, found := slices.BinarySearchFunc(g.bounds, d, func(b memoBound, d time.Duration) int { return compareDur(b.d, d) })
		if !found {
			i--
		}
		if i < 0 {
			continue
		}
		lb = later(lb, g.bounds[i])
		// Bounds grow with d: the last one found since then is the
		// largest.
		for j := i; j >= 0; j-- {
			if g.bounds[j].epoch == now {
				floor = max(floor, g.bounds[j].at)
				break
			}
		}
	}
	return lb, floor
}

// remember records that m members for d start no earlier than at
// (Forever: never), given every window loosened so far; nothing inside
// WithReservations, whose index shows fewer GPUs than are free. O(groups
// + bounds).
func (p *Profile) remember(k shape, m int, d, at time.Duration) {
	if p.within {
		return
	}
	gs := p.memo.answers[k]
	gi, found := slices.BinarySearchFunc(gs, m, func(g memoGroup, m int) int { return g.members - m })
	if !found {
		gs = slices.Insert(gs, gi, memoGroup{members: m})
		p.memo.answers[k] = gs
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
	now := int32(len(p.memo.loose))
	for j := i; j < len(g.bounds) && g.bounds[j].at <= at; j++ {
		g.bounds[j].at, g.bounds[j].epoch = at, now
	}
}

// maxLoose bounds the loosened windows kept: a query with an old bound
// reads every window added since, so past this many the profile forgets
// instead, as it does when it loosens in other ways.
const maxLoose = 4096

// loosen records that runs from from until to may use the GPUs s of node
// n, which they could not use before. O(1).
func (mm *memo) loosen(n topology.NodeID, s topology.GPUSet, from, to time.Duration) {
	switch {
	case len(mm.answers) == 0 || from >= to:
	case len(mm.loose) >= maxLoose:
		mm.forget()
	default:
		// A window dropped by Restore or forget leaves its gaps' storage
		// behind in the slice's spare capacity: the new one reuses it.
		var gaps []window
		if k := len(mm.loose); k < cap(mm.loose) {
			gaps = mm.loose[:k+1][k].gaps[:0]
		}
		mm.loose = append(mm.loose, loosened{n: n, set: s, from: from, to: to, gaps: gaps})
	}
}

// windowsBelow returns, merged and in order, the starts in [t, end) at
// which a run of r for d could use a GPU loosened in a window numbered
// epoch or more: the GPU is of r's class and was not reserved for the
// run when the window was last searched. Only there can r start before
// its remembered bound. It also returns the earliest start of those
// windows, uncut (end when there are none). O(W·s) for W windows of s
// spans each, after O(g·e log e) for a window's g GPUs and e events of
// its node the first time and after each reservation of its node.
func (p *Profile) windowsBelow(epoch int32, r gang.Request, d, t, end time.Duration) ([]window, time.Duration) {
	ws, first := p.scratch.windows[:0], end
	for i := int(epoch); i < len(p.memo.loose); i++ {
		l := &p.memo.loose[i]
		first = min(first, l.from)
		if r.Class != topology.AnyType && p.ix.NodeClass(l.n) != r.Class {
			continue
		}
		lo, hi := max(l.from, t), min(l.to, end)
		if lo >= hi {
			continue
		}
		if c := p.reservations(l.n); !l.known || l.seen != c {
			l.gaps, l.known, l.seen = p.gapsOf(l, l.gaps[:0]), true, c
		}
		for _, g := range l.gaps {
			// A run from s fits in the span when s+d <= its end.
			last := hi
			if g.to != Forever {
				last = min(last, g.to-d+1)
			}
			if from := max(g.from, lo); from < last {
				ws = append(ws, window{from, last})
			}
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
	p.scratch.windows = out
	return out, first
}

// gapsOf returns, for each healthy GPU of l, the spans that start in
// [l.from, l.to) and during which no reservation holds it (the last one
// ends at Forever).
func (p *Profile) gapsOf(l *loosened, gaps []window) []window {
	for g := l.set & p.ix.Healthy(l.n); g != 0; g &= g - 1 {
		res := p.scratch.reserved[:0]
		ne := &p.nodes[l.n]
		for i := len(ne.events) - 1; i >= ne.numReleases && ne.events[i].end > l.from; i-- {
			if e := &ne.events[i]; e.set&g&-g != 0 {
				res = append(res, window{e.start, e.end})
			}
		}
		slices.SortFunc(res, func(a, b window) int { return compareDur(a.from, b.from) })
		cur := l.from
		for _, h := range res {
			if cur >= l.to {
				break
			}
			if h.from > cur {
				gaps = append(gaps, window{cur, h.from})
			}
			cur = max(cur, h.to)
		}
		if cur < l.to {
			gaps = append(gaps, window{cur, Forever})
		}
		p.scratch.reserved = res[:0]
	}
	return gaps
}

// forget drops every remembered answer and the loosened windows: the
// profile loosened in a way the windows do not describe, or they grew
// too many.
func (mm *memo) forget() {
	if len(mm.answers) > 0 {
		clear(mm.answers)
	}
	mm.loose = mm.loose[:0]
	mm.forgets++
}

// freeNow is the number of free GPUs in the index.
func (p *Profile) freeNow() int {
	return p.ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType)
}

// sync forgets remembered answers if GPUs were freed in the index since
// the profile last looked: only taking GPUs keeps them valid.
func (p *Profile) sync() {
	if f := p.freeNow(); f > p.memo.lastFree {
		p.memo.forget()
	}
}

// settle notes the free GPUs the index has after a profile operation.
func (p *Profile) settle() { p.memo.lastFree = p.freeNow() }

func compareDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// memo is what [Profile.Earliest] remembers (see memo.go): lower bounds
// per request shape, the windows loosened since they were found, and the
// free GPUs of the index when the profile last looked, which tells it
// that GPUs were freed behind its back.
type memo struct {
	answers  map[shape][]memoGroup
	loose    []loosened
	lastFree int
	forgets  uint32 // how many times forget ran: see Profile.Unreserve
}

// Forget drops the answers [Profile.Earliest] remembered. A caller that
// frees held GPUs in the index between queries without the count of free
// GPUs rising above what the last query saw (taking as many or more
// elsewhere) must call it; the profile notices other loosening itself.
// O(S) for S shapes remembered.
func (p *Profile) Forget() { p.memo.forget() }
