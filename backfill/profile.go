package backfill

import (
	"math"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Forever is the offset of an end that never comes: a job without a time
// limit, or a reservation for one.
const Forever = time.Duration(math.MaxInt64)

// run returns the length of a run of d: a run holds its GPUs for at least
// a nanosecond, so that it has a moment at which it holds them.
func run(d time.Duration) time.Duration { return max(d, 1) }

// add returns a+b, saturating at Forever.
func add(a, b time.Duration) time.Duration {
	if a == Forever || b == Forever || a > Forever-b {
		return Forever
	}
	return a + b
}

// Profile is the availability of GPUs over time, from now on, layered
// over a live [topology.Index] that says which GPUs are free now: the
// profile adds when held GPUs become free (releases) and which GPUs are
// promised to whom from when to when (reservations). Times are offsets
// from now.
//
// A GPU is usable for a run [t, t+d) when it is free now or released by
// t, and no reservation holds it at any moment of [t, t+d) (the package
// documentation has a worked example). Queries evaluate exactly that
// rule. Runs and reservations shorter than a nanosecond (d <= 0) are
// taken to last one, so that each holds its GPUs at its start. Only ready
// nodes are tracked: GPUs of draining and down nodes never become usable.
//
// The cost of [Profile.Earliest] for a request of G GPUs: O(B·c + E +
// T·(B'·c + G + P)) for B events between the nearest cursor (see
// cursor.go) and the query's start, c the cost of applying one (O(1), or
// O(e) to recompute a node of e events; never more in all than
// recomputing the M nodes with events), E events swept, T starts tried,
// B' events between two of them, and P a fit check ([gang.Place]), made
// only where the usable GPUs and the room for members suffice. A start
// ruled out by an answer remembered for the request's shape costs O(S·b)
// for S shapes and b answers per shape (see memo.go). A whole-node gang
// costs O((T + H + S)·log) instead, for T nodes free for good from its
// first start, H whole-node windows that end after its first run and S
// entries swept (see whole.go).
type Profile struct {
	ix       *topology.Index
	timeline timeline     // releases, reservation ends and starts, in time order
	nodes    []nodeEvents // per node: its events
	// Nodes with events, in the order of their first.
	eventful []topology.NodeID
	reserved reservedNodes // per node: its first reservation start and its count
	dense    denseNodes    // per-node arrays for sweeps, from the first query on
	memo     memo          // Earliest's answers, while the profile only tightens
	// Cursors for Earliest (see cursor), and the held GPUs of each node
	// in the live index when the cursors last looked.
	cursors  []*cursor
	seenHeld []topology.GPUSet
	// The free GPUs over time, counted per class (index Class; 0 is
	// every node), which bound where a sweep may begin; see skyline.
	skylines []*skyline
	// The whole-node free windows, for whole-node gangs (nil until the
	// first such query); see wholeIndex.
	wholeWins *wholeIndex
	// within says that WithReservations' fn is running: the index shows
	// fewer GPUs than it holds free, and no answer is remembered.
	within bool
	// releasedNow says that some release is at 0: GPUs held now are
	// usable for a run from now (see preferBusy).
	releasedNow bool
	undo        undoLog   // the live index's changes during a query "now"
	shares      useShares // CPU and memory per held GPU (see resources.go)
	scratch     scratch
}

// reservedNodes holds, per node, the earliest reservation start, which
// lets Reserved skip a node no reservation holds in a window, and the
// number of reservations made on it (wrapping around), which tells a
// loosened window (see memo.go) that its gaps may have shrunk. Both are
// nil until the first reservation.
type reservedNodes struct {
	firstStart []time.Duration
	count      []uint32
}

// denseNodes holds, per node, what sweeps read: all its GPUs, those
// that can be allocated at all (healthy, on a ready node), its GPU-type
// class (classes is one more than the largest), and its earliest release
// (Forever: none; see releasedNone). Nil (and 0) until the first query
// that sweeps builds them: see [Profile.buildDense].
type denseNodes struct {
	all, alloc      []topology.GPUSet
	class           []topology.Class
	classes         int
	earliestRelease []time.Duration
}

// scratch is memory reused between queries; nothing in it outlives one.
type scratch struct {
	// Per-node stamps, to refresh a node once per step of a sweep (nil
	// until buildDense), and the current stamp.
	stamp  []uint32
	stampN uint32
	nodes  []topology.NodeID // blockNow's nodes with free GPUs
	// preferBusy's candidates.
	preferred []preferred
	// Reserve's timeline entries, entered together.
	ends, starts, gone []timelineEntry
	windows, reserved  []window          // windowsBelow's and gapsOf's
	changed            []topology.NodeID // drainChanges' nodes
}

// NewProfile returns an empty profile over ix. The profile reads and
// temporarily changes ix during queries, always restoring it; between
// queries the caller may change ix (place jobs) as it likes, and must
// tell the profile when placed GPUs will be released. Answers rely on no
// GPU being promised twice at one moment: a reservation only on GPUs
// found usable for its run, and no release moved past a reservation of
// the same GPUs. The profile reads the index's record of changes, so an
// index serves one profile at a time.
func NewProfile(ix *topology.Index) *Profile {
	p := &Profile{
		ix:       ix,
		timeline: timeline{ends: newEvents(runLen), starts: newEvents(runLen)},
		nodes:    make([]nodeEvents, ix.NumNodes()),
		undo:     undoLog{at: make([]int32, ix.NumNodes())},
		memo:     memo{answers: map[shape][]memoGroup{}},
	}
	p.memo.lastFree = p.freeNow()
	return p
}

// buildDense builds, on the first query that sweeps, the per-node arrays the
// sweeps read: all GPUs, the allocatable ones, the class, the earliest
// release, and the stamps. A profile that only places jobs now never
// needs them. O(N + E) for E events.
func (p *Profile) buildDense() {
	if p.dense.all != nil {
		return
	}
	nn := p.ix.NumNodes()
	p.dense.all = make([]topology.GPUSet, nn)
	p.dense.alloc = make([]topology.GPUSet, nn)
	p.dense.class = make([]topology.Class, nn)
	p.scratch.stamp = make([]uint32, nn)
	p.dense.earliestRelease = make([]time.Duration, nn)
	for i := range nn {
		p.dense.earliestRelease[i] = Forever
		for _, e := range p.nodes[i].releases() {
			p.dense.earliestRelease[i] = min(p.dense.earliestRelease[i], e.start) // every release frees GPUs: see MoveRelease
		}
		n := topology.NodeID(i)
		p.dense.all[i] = topology.FirstN(p.ix.GPUs(n))
		if p.ix.State(n) == topology.Ready {
			p.dense.alloc[i] = p.ix.Healthy(n)
		}
		p.dense.class[i] = p.ix.NodeClass(n)
		p.dense.classes = max(p.dense.classes, int(p.dense.class[i])+1)
	}
}

// Index returns the live index the profile is layered over.
func (p *Profile) Index() *topology.Index { return p.ix }

// Start is the answer of [Profile.Earliest].
type Start struct {
	// At is the offset from now at which the job can start.
	At time.Duration
	// Placement is where it would run, in the profile's index.
	Placement gang.Placement
}

// Earliest returns the earliest offset t >= notBefore at which r fits for
// a run of d, and the GPUs it would use, preferring GPUs that are busy
// now and free by t so that GPUs free now stay available for backfill
// (a request that avoids nodes or wants its members on distinct nodes
// keeps the gang placer's choice).
// It reports false when r never fits (before Forever). The index is left
// as it was. See the type comment for its cost.
//
// Answers are remembered by request shape (class, GPUs per member,
// required level; requests that avoid nodes are not remembered): while the
// profile only tightens, a later query with at least as many members and
// at least as long a run starts its sweep at the remembered answer, and
// one remembered never to fit is answered at once (unless a release has
// moved earlier since, below). A remembered answer also bounds queries of
// stronger shapes: as many GPUs per member or more, the same GPU type
// where the answer was for one, and the same required level where the
// answer was for one. Those shortcuts are exact; [Profile.AddRelease],
// [Profile.Forget] and GPUs freed in the index between queries drop what
// was remembered. [Profile.MoveRelease] keeps it: a release moved earlier
// helps only runs that start while the moved GPUs are newly free, so a
// later query first searches the starts at which one of them is usable for
// its run, and then starts at the remembered answer.
func (p *Profile) Earliest(r gang.Request, d time.Duration, s binpack.Scorer, notBefore time.Duration) (Start, bool) {
	return p.earliestUpTo(r, d, s, notBefore, Forever)
}

// EarliestBy is [Profile.Earliest] for starts no later than by: it
// reports false when r fits at no t in [notBefore, by], and it sweeps no
// further than by, so it is cheaper than Earliest when the answer lies
// beyond. A miss is remembered as a lower bound for the request's shape
// and the shapes stronger than it, so repeating it costs O(S·b) for S
// shapes and b answers remembered per shape, while no release moves
// earlier.
func (p *Profile) EarliestBy(r gang.Request, d time.Duration, s binpack.Scorer, notBefore, by time.Duration) (Start, bool) {
	return p.earliestUpTo(r, d, s, notBefore, by)
}

func (p *Profile) earliestUpTo(r gang.Request, d time.Duration, s binpack.Scorer, notBefore, by time.Duration) (Start, bool) {
	if !r.Valid(p.ix) {
		return Start{}, false // it fits nowhere, ever
	}
	d = run(d)
	p.sync()
	defer p.settle()
	t := max(notBefore, 0)
	k, memo := p.memoShape(r)
	if !memo {
		return p.earliest(r, d, s, t, by)
	}
	lb, floor := p.memo.lowerBound(k, r.Members, d)
	// Before the bound, only windows loosened since it was found can
	// hold an answer (see memo.go). An answer found from no later than
	// them (or the bound) is the answer from 0, which bounds later
	// queries; so is a miss up to by, as a bound past by.
	ws, first := p.windowsBelow(lb.epoch, r, d, max(t, floor), min(lb.at, add(by, 1)))
	exact := t <= min(first, lb.at)
	remember := func(at time.Duration) {
		if exact {
			p.remember(k, r.Members, d, at)
		}
	}
	for _, w := range ws {
		from := p.freeBound(r, d, w.from)
		if from >= w.to {
			continue
		}
		if st, ok := p.earliest(r, d, s, from, w.to-1); ok {
			remember(st.At)
			return st, true
		}
	}
	if lb.at == Forever || lb.at > by {
		if len(ws) > 0 {
			remember(min(lb.at, add(by, 1)))
		}
		return Start{}, false
	}
	// No start comes before the free GPUs, counted, suffice.
	from := p.freeBound(r, d, max(t, lb.at))
	if from > by || from == Forever {
		remember(from)
		return Start{}, false
	}
	st, ok := p.earliest(r, d, s, from, by)
	at := st.At
	switch {
	case ok:
	case by == Forever:
		at = Forever
	default:
		at = by + 1
	}
	remember(at)
	return st, ok
}

// Reserved returns the GPUs of node n that some reservation holds at any
// moment of [t0, t1). O(1) when no reservation of n starts before t1,
// else O(events of n).
func (p *Profile) Reserved(n topology.NodeID, t0, t1 time.Duration) topology.GPUSet {
	if p.reserved.firstStart == nil || p.reserved.firstStart[n] >= t1 {
		return 0
	}
	return p.reservedIn(&p.nodes[n], t0, t1)
}
