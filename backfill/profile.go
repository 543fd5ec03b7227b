package backfill

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
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

// Profile is the availability of GPUs over time, from now on. Times are
// offsets from now (0 is now). It is layered over a live
// [topology.Index] that says which GPUs are free now; the profile adds
// when held GPUs become free (releases) and which GPUs are promised to
// whom from when to when (reservations).
//
// A GPU is usable for a job that would run during [t, t+d) when it is
// free now or released by t, and no reservation holds it at any moment of
// [t, t+d). Queries evaluate exactly that rule. Runs and reservations
// shorter than a nanosecond (d <= 0) are taken to last one, so that each
// holds its GPUs at its start.
//
// Releases and reservation ends are kept in a time-ordered B-tree
// (google/btree) of sorted runs of up to 128 entries, reservation
// starts in another, and each node keeps the short list of its own events
// (its releases, then its reservations in order of their ends, so that
// reading a node for a run stops at the reservations that ended by the
// run's start); releases wait in a list until the next query that takes a cursor, so
// that a profile that only places jobs never builds the first tree.
// [Profile.Earliest] works on cursors: copies of the index that show the
// usable GPUs for one run [t, t+d). A query takes the cursor nearest to
// its run and brings it there by applying the events between the two runs:
// many in O(1) from the event's own record, the cursor's view or the
// node's earliest release, the others by recomputing their node (or, if
// those would outnumber the nodes with events, those nodes). Then it
// sweeps forward over the moments at which capacity can grow (releases and
// reservation ends), adding up, without moving the cursor, the GPUs of the
// job's class that each event could free for the run, and moves the cursor
// only to the moments where they could make up what is missing; there it
// counts the usable GPUs and the members they leave room for (a node
// with k usable GPUs holds k/g members of g GPUs, rounded down; the
// cursor counts its nodes by k), and asks the gang placer whether the job
// fits only when both suffice. So a query costs O(B·c + E + T·(B'·c + G +
// P)): B events between the cursor and the query's start, c the cost of
// applying one (O(1), or O(e) to recompute a node of e events; never more
// in all than recomputing the M nodes with events), E events swept, T
// moments tried, B' events between two of them, G the most GPUs of a
// node, and P a fit check ([gang.Place]), made only where the GPUs and
// the room suffice. Before sweeping, Earliest counts the free GPUs of the job's
// class over time (a step function per class kept beside the events) and
// starts at the first moment from which enough of them stay free for the
// whole run: no earlier start can fit. Earliest also remembers its answers
// per request shape, and an answer bounds later queries of that shape or a
// stronger one (as many GPUs per member or more, a GPU type where the
// answer was for any, a required level where it was for none): they start
// their sweep there, and one already known never to fit costs O(S·b) for S
// shapes and b answers remembered per shape. A release moved earlier keeps
// those answers: a query whose answer was remembered before it first
// searches the starts at which the moved GPUs are free for its whole run,
// O(W) for W such moves since, plus a sweep of each span found. A
// reservation takes its GPUs from each cursor whose run it
// overlaps; other changes to the profile and to the live index between
// queries mark the changed nodes stale in each cursor, which recomputes
// them before use.
//
// A whole-node gang, whose members each take every GPU of a node of the
// largest size, needs no cursor: such a node holds a member for a run
// exactly when one of its whole-node free windows (the spans in which
// all its GPUs are usable) contains the run. The profile keeps those
// windows: a reservation cuts its span out of its nodes' windows, and a
// node whose releases or held GPUs change is recomputed from its events
// before the next such query (O(g·e + e log e) for its g GPUs and e
// events; either way O(log W + R) per window changed, for W windows in
// runs of R, and O(log N) for the node's last window). A query counts
// the nodes whose window holds its run from its first start, then sweeps
// the timeline for the windows that start later: O((T + H + S)·log) for
// T nodes free for good from its first start, H windows that end after
// its first run, and S entries swept. The same windows choose the nodes
// as the gang placer and the preference for GPUs busy now would on a
// cursor, unless a domain chooser, a preferred level inside the required
// one, spreading or a scorer choosing among GPU types could choose
// otherwise: then a cursor brought to the start places the gang.
//
// Only ready nodes are tracked; GPUs of draining and down nodes never
// become usable.
type Profile struct {
	ix       *topology.Index
	timeline *events // releases and reservation ends
	pending  []tev   // releases not in the timeline yet: see flushTimeline
	flushed  int32   // seq when pending was last flushed: later releases are pending
	// shrunkPending says that a move took GPUs from a pending release
	// (see shrunk).
	shrunkPending bool
	starts        *events         // reservation starts
	nodes         []nodeEvents    // per node: its events
	earliestRel   []time.Duration // per node: its earliest release (Forever: none), from dense on; see releasedNone
	againOf       []time.Duration // by seq: see tev
	seq           int32
	// Nodes with events, in the order of their first, and per node the
	// earliest reservation start (nil until the first reservation), which
	// lets Reserved skip a node no reservation holds in a window, and the
	// number of reservations made on it, which tells a loosened window
	// (see memo.go) that its gaps may have shrunk.
	eventful []topology.NodeID
	firstRes []time.Duration
	resCount []uint32
	// Sweep scratch, reused between queries: the held GPUs of each node
	// the current sweep changed, savedAt[n] its place in saved plus one
	// (0: not changed), and per-node stamps to refresh a node once per
	// step of a sweep (nil until dense).
	saved   []savedHeld
	savedAt []int32
	stamp   []uint32
	stampN  uint32
	nodeBuf []topology.NodeID
	prefBuf []preferred // preferBusy's candidates
	// Reserve's timeline entries, entered together.
	endBuf, startBuf, goneBuf []tev
	// Earliest answers remembered per request shape while the profile
	// only tightens; see [Profile.Earliest].
	memo     map[shape][]memoGroup
	loose    []loosened // see memo.go
	forgets  uint32     // how many times forget ran: see Unreserve
	winBuf   []window
	resBuf   []window
	lastFree int
	// within says that WithReservations' fn is running: the index shows
	// fewer GPUs than it holds free, and no answer is remembered.
	within bool
	// releasedNow says that some release is at 0: GPUs held now are
	// usable for a run from now (see preferBusy).
	releasedNow bool
	// Cursors for Earliest (see cursor), and the held GPUs of each node
	// in the live index when the cursors last looked.
	cursors  []*cursor
	seenHeld []topology.GPUSet
	chBuf    []topology.NodeID
	// The free GPUs over time, counted per class (index Class; 0 is
	// every node), which bound where a sweep may begin; see skyline.
	sky []*skyline
	// The whole-node free windows, for whole-node gangs (nil until the
	// first such query); see wholeIndex.
	wn *wholeIndex
	// wholeMisses counts the whole-node starts a cursor could not
	// place the gang at (none, unless the windows are wrong).
	wholeMisses int
	// Per node, dense for the sweep: all its GPUs, those that can be
	// allocated at all (healthy, on a ready node), and its GPU-type class
	// (classes is one more than the largest). Nil (and 0) until the first
	// query that sweeps builds them: see dense.
	all, alloc []topology.GPUSet
	class      []topology.Class
	classes    int
}

// tev is a timeline entry: at time at, node n changes. Three facts often
// let a cursor that passes an entry skip reading the node's events (see
// [Profile.move]):
//   - an entry carries the GPUs reserved, released, or freed by the end
//     of a reservation (set: always the GPUs its event frees now; see
//     shrunk for a release that [Profile.MoveRelease] takes GPUs from);
//   - for a release or reservation end, againOf[seq] is the moment by
//     which every GPU it frees is reserved again: the latest, over those
//     GPUs, of the start of the first reservation of that GPU at or after
//     at (Forever when one has none). A
//     run from at or later that ends after it cannot use any of them from
//     this event on. It is recorded with the event and recomputed for the
//     event that a later reservation of the GPU follows (see
//     reservedAgain); it may be later than the truth, which costs only a
//     recomputation or a fit check that was not needed, never earlier;
//   - for a reservation start, againOf[seq] is instead a moment by
//     which each GPU it reserves has an earlier reservation that ends at
//     or after it (and by the start): the earliest, over the GPUs, of the
//     end of each one's last earlier reservation. (It does not say that
//     every GPU is held all the way up to it: an earlier reservation may
//     start late.) A run that starts before it and ends by the start
//     overlaps such a reservation of each GPU unless that reservation
//     starts at or after the run's end. 0 when a GPU has no earlier
//     reservation. See heldBefore.
type tev struct {
	at  time.Duration
	seq int32
	n   topology.NodeID
	set topology.GPUSet
}

func tevLess(a, b tev) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// nev is one event of a node: a release (start == end == at) or a
// reservation of [start, end).
type nev struct {
	start, end time.Duration
	set        topology.GPUSet
	seq        int32 // of its timeline entry: the release, or the reservation's end
	sseq       int32 // of a reservation's entry among the starts
	reserve    bool
}

// nodeEvents is the events of one node: its releases in ev[:rel], in
// the order recorded, then its reservations, ordered by end (those with
// equal ends in the order made). A reservation that ended by a run's
// start cannot hold a GPU during the run, so a scan for the
// reservations a run overlaps walks them from the last and stops at the
// first that ended by its start.
//
// Beside them, a summary that answers most runs without reading the
// events (see [Profile.usable]): the GPUs of all releases and the latest
// release time (0 when none), the earliest reservation start and the
// latest reservation end (0 when none).
type nodeEvents struct {
	ev               []nev
	rel              int
	relSet           topology.GPUSet
	relLast          time.Duration
	resFirst, resEnd time.Duration
	// listed says that the node is in Profile.eventful: ev can be empty
	// again after a move drops its only release (see MoveRelease).
	listed bool
}

// addRelease appends release e.
func (ne *nodeEvents) addRelease(e nev) {
	ne.ev = slices.Insert(ne.ev, ne.rel, e)
	ne.rel++
	ne.relSet |= e.set
	ne.relLast = max(ne.relLast, e.start)
}

// releasesChanged recomputes relSet and relLast after the releases
// changed.
func (ne *nodeEvents) releasesChanged() {
	ne.relSet, ne.relLast = 0, 0
	for _, e := range ne.releases() {
		ne.relSet |= e.set
		ne.relLast = max(ne.relLast, e.start)
	}
}

// releaseSet returns the GPUs of the release with timeline entry seq,
// and false when the node has no such release any more.
func (ne *nodeEvents) releaseSet(seq int32) (topology.GPUSet, bool) {
	for _, e := range ne.releases() {
		if e.seq == seq {
			return e.set, true
		}
	}
	return 0, false
}

// releases returns the releases.
func (ne *nodeEvents) releases() []nev { return ne.ev[:ne.rel] }

// reservations returns the reservations, ordered by end.
func (ne *nodeEvents) reservations() []nev { return ne.ev[ne.rel:] }

// addReservation inserts reservation e after those that end by its end.
func (ne *nodeEvents) addReservation(e nev) {
	if len(ne.ev) == ne.rel {
		ne.resFirst = e.start
	}
	ne.resFirst = min(ne.resFirst, e.start)
	ne.resEnd = max(ne.resEnd, e.end)
	i := ne.rel + sort.Search(len(ne.ev)-ne.rel, func(i int) bool { return ne.ev[ne.rel+i].end > e.end })
	ne.ev = slices.Insert(ne.ev, i, e)
}

// freedAt is when e frees its GPUs in the timeline: a release's time or a
// reservation's end; false for a reservation that never ends.
func (e *nev) freedAt() (time.Duration, bool) {
	if !e.reserve {
		return e.start, true
	}
	return e.end, e.end != Forever
}

// releasedNone reports whether no GPU of s on node n is free now or
// released by t, so that none of them is usable for a run from t. It
// reads the node's earliest release, which a release moved later leaves
// earlier than the truth: that only answers false more often. O(1), after
// dense.
func (p *Profile) releasedNone(n topology.NodeID, s topology.GPUSet, t time.Duration) bool {
	return s&p.alloc[n]&^p.seenHeld[n] == 0 && t < p.earliestRel[n]
}

type savedHeld struct {
	n    topology.NodeID
	held topology.GPUSet
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
		timeline: newEvents(runLen),
		starts:   newEvents(runLen),
		nodes:    make([]nodeEvents, ix.NumNodes()),
		savedAt:  make([]int32, ix.NumNodes()),
		memo:     map[shape][]memoGroup{},
	}
	p.lastFree = p.freeNow()
	return p
}

// dense builds, on the first query that sweeps, the per-node arrays the
// sweeps read: all GPUs, the allocatable ones, the class, the earliest
// release, and the stamps. A profile that only places jobs now never
// needs them. O(N + E) for E events.
func (p *Profile) dense() {
	if p.all != nil {
		return
	}
	nn := p.ix.NumNodes()
	p.all = make([]topology.GPUSet, nn)
	p.alloc = make([]topology.GPUSet, nn)
	p.class = make([]topology.Class, nn)
	p.stamp = make([]uint32, nn)
	p.earliestRel = make([]time.Duration, nn)
	for i := range nn {
		p.earliestRel[i] = Forever
		for _, e := range p.nodes[i].releases() {
			p.earliestRel[i] = min(p.earliestRel[i], e.start) // every release frees GPUs: see MoveRelease
		}
		n := topology.NodeID(i)
		p.all[i] = topology.FirstN(p.ix.GPUs(n))
		if p.ix.State(n) == topology.Ready {
			p.alloc[i] = p.ix.Healthy(n)
		}
		p.class[i] = p.ix.NodeClass(n)
		p.classes = max(p.classes, int(p.class[i])+1)
	}
}

// count adds k GPUs of node n to the skylines on [from, to), once they
// are built.
func (p *Profile) count(n topology.NodeID, from, to time.Duration, k int) {
	if p.sky == nil {
		return
	}
	p.sky[topology.AnyType].add(from, to, int32(k))
	if c := p.class[n]; c != topology.AnyType {
		p.sky[c].add(from, to, int32(k))
	}
}

// countSlots takes the GPUs of slots from the skylines on [from, to),
// once they are built: one update per class the slots' nodes change
// between, rather than one per slot, since a sum does not depend on the
// order of its terms.
func (p *Profile) countSlots(slots []gang.Slot, from, to time.Duration) {
	if p.sky == nil {
		return
	}
	all := 0
	for i := 0; i < len(slots); {
		c, k := p.class[slots[i].Node], 0
		for ; i < len(slots) && p.class[slots[i].Node] == c; i++ {
			k += slots[i].GPUs.Len()
		}
		if all += k; c != topology.AnyType {
			p.sky[c].add(from, to, -int32(k))
		}
	}
	p.sky[topology.AnyType].add(from, to, -int32(all))
}

// buildSky builds the skylines from every event so far, on the first
// query: a Step that records thousands of releases and asks few queries
// then pays one sort instead of an update per release. O(E log E).
func (p *Profile) buildSky() {
	p.dense()
	type delta struct {
		at time.Duration
		c  topology.Class
		k  int32
	}
	var ds []delta
	put := func(n topology.NodeID, at time.Duration, k int) {
		if at == Forever || k == 0 {
			return
		}
		ds = append(ds, delta{at, topology.AnyType, int32(k)})
		if c := p.class[n]; c != topology.AnyType {
			ds = append(ds, delta{at, c, int32(k)})
		}
	}
	for _, n := range p.eventful {
		h := p.ix.Healthy(n)
		for _, e := range p.nodes[n].ev {
			if !e.reserve {
				put(n, e.start, (e.set & h).Len())
				continue
			}
			put(n, e.start, -e.set.Len())
			put(n, e.end, e.set.Len())
		}
	}
	slices.SortFunc(ds, func(a, b delta) int {
		if a.c != b.c {
			return int(a.c) - int(b.c)
		}
		return compareDur(a.at, b.at)
	})
	p.sky = make([]*skyline, 1+len(p.ix.Types()))
	for c := range p.sky {
		var at []time.Duration
		var v []int32
		cur, zero := int32(0), int32(0)
		for len(ds) > 0 && ds[0].c == topology.Class(c) {
			d := ds[0]
			ds = ds[1:]
			cur += d.k
			if d.at <= 0 {
				zero = cur // in force from now on: the value at 0
				continue
			}
			if k := len(at) - 1; k >= 0 && at[k] == d.at {
				v[k] = cur
				continue
			}
			at, v = append(at, d.at), append(v, cur)
		}
		p.sky[c] = newSkylineFrom(zero, at, v)
	}
}

// freeBound returns the first t >= t0 at which the free GPUs of r's
// class, counted over time, stay at r.GPUs() or more during [t, t+d): no
// run of r fits before it. Forever when there is none. Inside
// WithReservations it returns t0: the index then hides GPUs for the
// reservations that the count over time takes away again.
func (p *Profile) freeBound(r gang.Request, d, t0 time.Duration) time.Duration {
	if p.within {
		return t0
	}
	if p.sky == nil {
		p.buildSky()
	}
	if int(r.Class) < 0 || int(r.Class) >= len(p.sky) {
		return t0
	}
	short := r.GPUs() - p.ix.FreeGPUs(topology.ClusterLevel, 0, r.Class)
	return p.sky[r.Class].firstFit(t0, d, int32(short))
}

// Index returns the live index the profile is layered over.
func (p *Profile) Index() *topology.Index { return p.ix }

// AddRelease records that the held GPUs s of node n become free at
// offset at. A release at or before now (at <= 0) is recorded at 0: the
// GPUs stay held in the index, so no job is placed on them now, but they
// are usable for any run from now on (a job being evicted whose grace is
// over is gone, though its GPUs are not yet seen free). Releases at
// Forever, or on nodes that are not ready, are ignored. GPUs that already
// have a release are free from the earlier of the two: to replace a
// release (GPUs freed early and taken again), use [Profile.MoveRelease].
// O(e + log E) for e events of the node.
func (p *Profile) AddRelease(n topology.NodeID, s topology.GPUSet, at time.Duration) {
	if p.addRelease(n, s, at) {
		p.forget()
	}
}

// addRelease records a release and reports whether it did.
func (p *Profile) addRelease(n topology.NodeID, s topology.GPUSet, at time.Duration) bool {
	if at == Forever || s == 0 || p.ix.State(n) != topology.Ready {
		return false
	}
	if at <= 0 {
		at = 0
		p.releasedNow = true
	}
	p.noteEvent(n)
	p.markStale(n)
	p.seq++
	p.nodes[n].addRelease(nev{start: at, end: at, set: s, seq: p.seq})
	if p.earliestRel != nil {
		p.earliestRel[n] = min(p.earliestRel[n], at)
	}
	p.count(n, at, Forever, (s & p.ix.Healthy(n)).Len())
	p.pending = append(p.pending, tev{at: at, seq: p.seq, n: n, set: s})
	p.setAgain(p.seq, p.again(n, s, at))
	return true
}

// flushTimeline puts the releases recorded since the last query into the
// timeline. Only Earliest reads the timeline (moving its cursor and
// sweeping), after cursorFor has called this, so a Step that places jobs
// and asks no query never pays for the B-tree.
func (p *Profile) flushTimeline() {
	for _, e := range p.pending {
		if p.shrunkPending {
			// A move took GPUs from some of these releases: enter
			// each as its node's events have it now (see shrunk).
			set, ok := p.nodes[e.n].releaseSet(e.seq)
			if !ok {
				continue // it frees nothing any more
			}
			if set != e.set {
				e.set = set
				p.againOf[e.seq] = p.again(e.n, set, e.at)
			}
		}
		p.timeline.Insert(e)
	}
	p.pending = p.pending[:0]
	p.flushed, p.shrunkPending = p.seq, false
}

// setAgain records againOf for the timeline entry seq.
func (p *Profile) setAgain(seq int32, at time.Duration) {
	if k := int(seq) + 1 - len(p.againOf); k > 0 {
		// Doubling: append grows a long slice by a quarter, and copies
		// it each time; seq grows by one or two per event.
		p.againOf = append(p.againOf, make([]time.Duration, max(k, len(p.againOf)))...)
	}
	p.againOf[seq] = at
}

// again returns, for GPUs s of node n freed at at, the latest over them
// of the start of the first reservation of that GPU at or after at
// (Forever when one has none); reservations last at least a nanosecond,
// so each holds its GPUs in a run from at. O(events of n).
func (p *Profile) again(n topology.NodeID, s topology.GPUSet, at time.Duration) time.Duration {
	var next [64]time.Duration
	for i := range next {
		next[i] = Forever
	}
	// A reservation from at or later ends after at: the walk stops at
	// the first, from the last, that ended by at.
	ne := &p.nodes[n]
	for i := len(ne.ev) - 1; i >= ne.rel; i-- {
		e := &ne.ev[i]
		if e.end <= at {
			break
		}
		if e.start < at {
			continue
		}
		for g := e.set & s; g != 0; g &= g - 1 {
			i := bits.TrailingZeros64(uint64(g))
			next[i] = min(next[i], e.start)
		}
	}
	latest := time.Duration(0)
	for g := s; g != 0; g &= g - 1 {
		latest = max(latest, next[bits.TrailingZeros64(uint64(g))])
	}
	return latest
}

// reservedAgain recomputes againOf for the events of node n that a
// reservation of s from start may lower: per GPU of s, the last event at
// or before start that frees it. (An earlier event that frees the GPU is
// usually followed by a reservation of it before this one; where it is
// not, its againOf stays later than the truth, which is allowed.)
// O(events of n × (1 + events recomputed)).
func (p *Profile) reservedAgain(n topology.NodeID, s topology.GPUSet, start time.Duration) {
	ne := &p.nodes[n]
	evs := ne.ev
	var last [64]int32
	var lastAt [64]time.Duration
	for i := range last {
		last[i] = -1
	}
	for k := range evs {
		at, ok := evs[k].freedAt()
		if !ok || at > start {
			if k >= ne.rel {
				break // reservations ordered by end: the rest end later
			}
			continue
		}
		for g := evs[k].set & s; g != 0; g &= g - 1 {
			if i := bits.TrailingZeros64(uint64(g)); last[i] < 0 || at > lastAt[i] {
				last[i], lastAt[i] = int32(k), at
			}
		}
	}
	done := topology.GPUSet(0)
	for g := s; g != 0; g &= g - 1 {
		i := bits.TrailingZeros64(uint64(g))
		k := last[i]
		if k < 0 || done&(1<<i) != 0 {
			continue
		}
		for h := g; h != 0; h &= h - 1 {
			if j := bits.TrailingZeros64(uint64(h)); last[j] == k {
				done |= 1 << j
			}
		}
		e := &evs[k]
		at, _ := e.freedAt()
		p.againOf[e.seq] = p.again(n, e.set, at)
	}
}

// Reserve promises the GPUs of pl for [start, start+d). The caller must
// have found them usable for that window (with [Profile.Earliest]).
// A reservation of the same GPUs of a node that ends when this one starts
// is extended instead, which answers every query alike (a GPU is usable
// when no reservation holds it at any moment of a run) with half the
// events: queued gangs stack this way on the nodes they share.
// O(nodes of pl × (e·(1+g) + log E)) for e events per node and g GPUs per
// node, plus, once a whole-node gang has been queried, the cut of each
// node's whole-node free windows.
func (p *Profile) Reserve(pl gang.Placement, start, d time.Duration) {
	// An extension adds no reservation start, so no againOf of a release
	// or reservation end changes, each being the first start of a
	// reservation of its GPUs at or after it; only a new reservation
	// lowers them (reservedAgain, the e·g term). wholeReserve cuts the
	// windows.
	end := add(start, run(d))
	p.countSlots(pl.Slots, start, end)
	// The timeline entries go in together after the loop, which reads
	// only the nodes' events: every end of this reservation is at end
	// with a new seq, and every start at start, so each set lies in one
	// place in its tree (see [events.InsertSorted]).
	ends, starts, gone := p.endBuf[:0], p.startBuf[:0], p.goneBuf[:0]
	for _, s := range pl.Slots {
		p.noteEvent(s.Node)
		p.wholeReserve(s.Node, start, end)
		p.blockCursors(s.Node, s.GPUs, start, end)
		p.noteStart(s.Node, start)
		if old, ok := p.extend(s.Node, s.GPUs, start, end); ok {
			gone = append(gone, old)
			if end != Forever {
				ends = append(ends, tev{at: end, seq: p.seq, n: s.Node, set: s.GPUs})
			}
			continue
		}
		p.seq++
		starts = append(starts, tev{at: start, seq: p.seq, n: s.Node, set: s.GPUs})
		p.setAgain(p.seq, p.heldBefore(s.Node, s.GPUs, start))
		e := nev{reserve: true, start: start, end: end, set: s.GPUs, sseq: p.seq}
		if end != Forever {
			p.seq++
			e.seq = p.seq
			ends = append(ends, tev{at: end, seq: p.seq, n: s.Node, set: s.GPUs})
			p.setAgain(p.seq, p.again(s.Node, s.GPUs, end))
		}
		p.nodes[s.Node].addReservation(e)
		p.reservedAgain(s.Node, s.GPUs, start)
	}
	if len(gone) > 0 {
		slices.SortFunc(gone, func(a, b tev) int { return cmp.Compare(a.seq, b.seq) }) // all at start
		p.timeline.DeleteSorted(gone)
	}
	p.timeline.InsertSorted(ends)
	p.starts.InsertSorted(starts)
	p.endBuf, p.startBuf, p.goneBuf = ends[:0], starts[:0], gone[:0]
}

// heldBefore returns, for a reservation of s on node n from start, the
// earliest over the GPUs of s of the end of the last reservation of that
// GPU that ends by start; 0 when a GPU of s has none. Reservations are
// never taken back, and one is extended only up to the next reservation
// of its GPUs, so each of those reservations stays, ending no earlier.
// O(e·g) for e events of the node and g GPUs of s.
func (p *Profile) heldBefore(n topology.NodeID, s topology.GPUSet, start time.Duration) time.Duration {
	var last [64]time.Duration
	var have topology.GPUSet
	for _, e := range p.nodes[n].reservations() {
		if e.end > start {
			break // ordered by end: the rest end later
		}
		if e.set&s == 0 {
			continue
		}
		for g := e.set & s; g != 0; g &= g - 1 {
			i := bits.TrailingZeros64(uint64(g))
			if have&(1<<i) == 0 || e.end > last[i] {
				last[i] = e.end
				have |= 1 << i
			}
		}
	}
	if have != s {
		return 0
	}
	until := Forever
	for g := s; g != 0; g &= g - 1 {
		until = min(until, last[bits.TrailingZeros64(uint64(g))])
	}
	return until
}

// extend lengthens to end a reservation of exactly set on node n that
// ends at start, and reports whether there was one, with the timeline
// entry of its old end, which the caller deletes; the new end, when there
// is one, has seq p.seq, for the caller to enter. It moves the
// reservation to its place among those ordered by end.
func (p *Profile) extend(n topology.NodeID, set topology.GPUSet, start, end time.Duration) (tev, bool) {
	ne := &p.nodes[n]
	evs := ne.ev
	for i := len(evs) - 1; i >= ne.rel; i-- {
		e := evs[i]
		if e.end < start {
			return tev{}, false // ordered by end: none earlier ends at start
		}
		if e.end != start || e.set != set {
			continue
		}
		old := tev{at: e.end, seq: e.seq, n: n}
		e.end = end
		if end != Forever {
			p.seq++
			e.seq = p.seq
		}
		j := i + 1
		for j < len(evs) && evs[j].end <= end {
			j++
		}
		copy(evs[i:j-1], evs[i+1:j])
		evs[j-1] = e
		ne.resEnd = max(ne.resEnd, end)
		if end != Forever {
			p.setAgain(p.seq, p.again(n, set, end))
		}
		return old, true
	}
	return tev{}, false
}

// noteStart records a reservation of node n from start.
func (p *Profile) noteStart(n topology.NodeID, start time.Duration) {
	if p.firstRes == nil {
		p.firstRes = make([]time.Duration, p.ix.NumNodes())
		for i := range p.firstRes {
			p.firstRes[i] = Forever
		}
		p.resCount = make([]uint32, p.ix.NumNodes())
	}
	p.firstRes[n] = min(p.firstRes[n], start)
	p.resCount[n]++
}

// reservations is the number of reservations made on node n so far
// (wrapping around).
func (p *Profile) reservations(n topology.NodeID) uint32 {
	if p.resCount == nil {
		return 0
	}
	return p.resCount[n]
}

// noteEvent lists node n among the nodes with events, once.
func (p *Profile) noteEvent(n topology.NodeID) {
	if ne := &p.nodes[n]; !ne.listed {
		ne.listed = true
		p.eventful = append(p.eventful, n)
	}
}

// usable is the rule of the type comment for node n, whose free GPUs now
// are base.
func (p *Profile) usable(n topology.NodeID, base topology.GPUSet, t, d time.Duration) topology.GPUSet {
	u := base
	ne := &p.nodes[n]
	if ne.relLast <= t {
		u |= ne.relSet
	} else {
		for _, e := range ne.releases() {
			if e.start <= t {
				u |= e.set
			}
		}
	}
	end := add(t, d)
	if u == 0 || ne.resEnd <= t || ne.resFirst >= end {
		return u
	}
	return u &^ p.reservedIn(ne, t, end)
}

// touch saves node n's held GPUs the first time a sweep changes it.
func (p *Profile) touch(n topology.NodeID) topology.GPUSet {
	if p.savedAt[n] == 0 {
		p.saved = append(p.saved, savedHeld{n: n, held: p.ix.Held(n)})
		p.savedAt[n] = int32(len(p.saved))
	}
	return p.ix.Healthy(n) &^ p.saved[p.savedAt[n]-1].held
}

// touched reports whether the current sweep changed node n.
func (p *Profile) touched(n topology.NodeID) bool { return p.savedAt[n] > 0 }

// setUsable makes the index show exactly u free on node n.
func (p *Profile) setUsable(n topology.NodeID, u topology.GPUSet) {
	p.ix.SetHeld(n, topology.FirstN(p.ix.GPUs(n))&^u)
}

// restore undoes every change of the current sweep.
func (p *Profile) restore() {
	for i := len(p.saved) - 1; i >= 0; i-- {
		s := p.saved[i]
		p.ix.SetHeld(s.n, s.held)
		p.savedAt[s.n] = 0
	}
	p.saved = p.saved[:0]
}

// blockNow applies, for a window [0, d), every reservation that starts
// before d. Only nodes with free GPUs now can change (at time 0 a node's
// usable GPUs are its free ones minus reserved ones), so it walks
// whichever is shorter: the nodes with free GPUs, or the reservation
// starts.
func (p *Profile) blockNow(d time.Duration) {
	if p.starts.Len() == 0 {
		return
	}
	withFree := 0
	for f := 1; f <= p.ix.MaxGPUs(); f++ {
		withFree += p.ix.NodesWithFree(topology.ClusterLevel, 0, topology.AnyType, f)
	}
	if withFree < p.starts.Len() {
		nodes := p.nodeBuf[:0]
		for f := 1; f <= p.ix.MaxGPUs(); f++ {
			for n := range p.ix.Bucket(topology.ClusterLevel, 0, topology.AnyType, f) {
				nodes = append(nodes, n)
			}
		}
		slices.Sort(nodes)
		for _, n := range nodes {
			p.blockNode(n, d)
		}
		p.nodeBuf = nodes[:0]
		return
	}
	p.starts.All(func(evs []tev) bool {
		for _, e := range evs {
			if e.at >= d {
				return false
			}
			if !p.touched(e.n) && p.ix.FreeSet(e.n) != 0 {
				p.blockNode(e.n, d)
			}
		}
		return true
	})
}

// blockNode removes from node n's free GPUs those reserved before d.
// GPUs released at 0 stay out: they are held now.
func (p *Profile) blockNode(n topology.NodeID, d time.Duration) {
	free := p.ix.FreeSet(n)
	if u := p.usable(n, free, 0, d) & free; u != free {
		p.touch(n)
		p.setUsable(n, u)
	}
}

// Start is the answer of [Profile.Earliest].
type Start struct {
	// At is the offset from now at which the job can start.
	At time.Duration
	// Placement is where it would run, in the profile's index.
	Placement gang.Placement
}

// PlaceNow places r for a run of d starting now on GPUs that are free now
// and reserved by nobody before now+d, holds them in the index, and
// records their release at d, in place of any release they still had (of
// a job that ended early). When r does not fit that way, it returns
// an outcome other than gang.Placed and changes nothing. Cost: O(G) when
// the free GPUs of r's class cannot hold it; otherwise O(min(F, R)·e·L)
// for the F nodes with free GPUs and the R reservations that start
// before d, plus one [gang.Place] and one [Profile.AddRelease] per node
// placed on.
func (p *Profile) PlaceNow(r gang.Request, d time.Duration, s binpack.Scorer) (gang.Placement, gang.Outcome) {
	if !r.Valid(p.ix) {
		return gang.Placement{}, gang.Invalid
	}
	d = run(d)
	p.sync()
	defer p.settle()
	if p.cannotFitNow(r) {
		return gang.Placement{}, gang.NoCapacity
	}
	if p.starts.Len() == 0 {
		pl, out := gang.Place(p.ix, r, s)
		if out == gang.Placed {
			p.recordRelease(pl, d)
		}
		return pl, out
	}
	p.blockNow(d)
	pl, out := gang.Place(p.ix, r, s)
	if out == gang.Placed {
		if r.Avoid == nil && !r.Distinct {
			pl = p.preferReserved(pl, r, d, s)
		}
		pl.Release(p.ix)
	}
	p.restore()
	if out != gang.Placed {
		return pl, out
	}
	for _, sl := range pl.Slots {
		if err := p.ix.TakeSet(sl.Node, sl.GPUs); err != nil {
			panic("backfill: profile lost track of free GPUs: " + err.Error())
		}
	}
	p.recordRelease(pl, d)
	return pl, out
}

// cannotFitNow reports whether r, well formed, has fewer members' room
// on the free GPUs of its class than it needs: then no placement now
// exists, whatever the reservations, and [gang.Place] would say
// NoCapacity. O(G).
func (p *Profile) cannotFitNow(r gang.Request) bool {
	if _, ok := p.memoShape(gang.Request{Members: r.Members, GPUsPerMember: r.GPUsPerMember, Class: r.Class, Required: r.Required, Preferred: r.Preferred}); !ok {
		return false
	}
	return p.ix.Capacity(topology.ClusterLevel, 0, r.Class, r.GPUsPerMember) < r.Members
}

// recordRelease records the release at d of the GPUs pl took now. They
// were free, so a release they still have is of a job that ended early:
// it goes, or they would count as free from then on while pl holds them
// until d. Dropping it only tightens the profile.
func (p *Profile) recordRelease(pl gang.Placement, d time.Duration) {
	for _, sl := range pl.Slots {
		if p.nodes[sl.Node].relSet&sl.GPUs != 0 {
			p.dropReleases(sl.Node, sl.GPUs)
		}
		p.addRelease(sl.Node, sl.GPUs, d)
	}
}

// FitsNow reports whether r would fit for a run of d starting now, as
// PlaceNow would find, without changing anything.
func (p *Profile) FitsNow(r gang.Request, d time.Duration, s binpack.Scorer) gang.Outcome {
	if !r.Valid(p.ix) {
		return gang.Invalid
	}
	d = run(d)
	if p.cannotFitNow(r) {
		return gang.NoCapacity
	}
	p.blockNow(d)
	pl, out := gang.Place(p.ix, r, s)
	if out == gang.Placed {
		pl.Release(p.ix)
	}
	p.restore()
	return out
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
	lb, floor := p.lowerBound(k, r.Members, d)
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

// Forget drops the answers [Profile.Earliest] remembered. A caller that
// frees held GPUs in the index between queries without the count of free
// GPUs rising above what the last query saw (taking as many or more
// elsewhere) must call it; the profile notices other loosening itself.
func (p *Profile) Forget() { p.forget() }

// nextStamp starts a step of a sweep in which each node is refreshed at
// most once.
func (p *Profile) nextStamp() uint32 {
	p.stampN++
	if p.stampN == 0 {
		clear(p.stamp)
		p.stampN = 1
	}
	return p.stampN
}

// WithReservations runs fn while the index shows, for a run of d starting
// now, only the GPUs that no reservation holds before now+d, then restores
// the index. fn must leave the index as it found it. A query fn makes
// ([Profile.Earliest] and the like) answers for the index as it shows
// then, and the profile remembers none of those answers.
func (p *Profile) WithReservations(d time.Duration, fn func()) {
	d = run(d)
	p.sync()
	defer p.settle()
	p.blockNow(d)
	defer p.restore()
	was := p.within
	p.within = true
	defer func() { p.within = was }()
	fn()
}

// Reserved returns the GPUs of node n that some reservation holds at any
// moment of [t0, t1). O(1) when no reservation of n starts before t1,
// else O(events of n).
func (p *Profile) Reserved(n topology.NodeID, t0, t1 time.Duration) topology.GPUSet {
	if p.firstRes == nil || p.firstRes[n] >= t1 {
		return 0
	}
	return p.reservedIn(&p.nodes[n], t0, t1)
}

// reservedIn returns the GPUs that some reservation of ne holds at any
// moment of [t0, t1): it walks the reservations from the last ended and
// stops at the first that ended by t0.
func (p *Profile) reservedIn(ne *nodeEvents, t0, t1 time.Duration) topology.GPUSet {
	var s topology.GPUSet
	for i := len(ne.ev) - 1; i >= ne.rel; i-- {
		e := &ne.ev[i]
		if e.end <= t0 {
			break
		}
		if e.start < t1 {
			s |= e.set
		}
	}
	return s
}
