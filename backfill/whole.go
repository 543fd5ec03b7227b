package backfill

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// A gang whose members each take every GPU of the largest nodes (a
// whole-node gang: GPUsPerMember equal to the index's MaxGPUs) can use a
// node for a run [t, t+d) only if all of the node's GPUs are allocatable
// and usable for the run: each free now or released by t, and none held
// by a reservation at any moment of the run. That holds exactly when one
// of the node's whole-node free windows contains the run: the spans
// between the moment its last held GPU is released (0 when none is held;
// never when one has no release) and the reservations of any of its
// GPUs. So such a gang fits at t exactly when some domain of its required
// level (the cluster when none) holds at least Members nodes of its class
// with a window [a, b) such that a <= t and t+d <= b. Between two window
// starts the windows that hold a run only drop out, so the earliest
// t >= t0 at which the gang fits is t0 or a window's start; and a window
// that starts after now starts where a blocking span ends, at a release
// or a reservation end: an entry of the timeline.
//
// wholeIndex keeps those windows per node that can hold such a member,
// and finds that earliest start without a cursor (see
// [Profile.wholeEarliest]). Of the windows it indexes only what a query
// needs to count the nodes that hold its run from t0: the windows that
// end, in a B-tree by end (see events), and the start of each node's last
// window, which never ends, in a tree of minima over the nodes. The
// starts after t0 come from the timeline. It is built on the first such
// query, O(N·(g·e + e log e)) for N nodes of g GPUs and e events per
// node. Afterwards a
// reservation takes its span out of its nodes' windows at once, which
// reads no events, and another change to a node (a release added or
// moved, GPUs taken or freed in the live index) marks it dirty, so that
// the next query recomputes its windows, O(g·e + e log e). Either way the
// windows that end and changed are entered anew, O(log W + R) each for W
// such windows in runs of R, and the node's last window's start, O(log
// N).
type wholeIndex struct {
	// wins holds each node's windows in order of start, the one that
	// never ends (if any) last; nil for a node that cannot hold a
	// whole-node member.
	wins  [][]wholeWin
	dirty []bool
	list  []topology.NodeID // the dirty nodes
	// ends holds the windows that end, by end; an entry's seq is the
	// window's id, whose span is from[id], to[id].
	ends     *events
	from, to []time.Duration
	freeIDs  []int32
	// tail is a tree of minima over the nodes: leaf size+n is the start
	// of node n's window that never ends (Forever when it has none),
	// and each inner entry the least of its two children.
	tail []time.Duration
	size int
	// seen holds, per window id, the sweep (numbered by stamp) that
	// last counted it: several timeline entries can start one window.
	seen  []uint32
	stamp uint32
	// Query scratch: members counted per domain, and the windows that
	// end counted, as a heap by the first start whose run they no
	// longer hold.
	count []int32
	heap  []wholeExpiry
	buf   []window
	kept  []wholeWin
	nodes []topology.NodeID
	doms  []topology.DomainID
	// misses counts the whole-node starts a cursor could not place the
	// gang at (none, unless the windows are wrong).
	misses int
}

// wholeWin is a window [from, to) of a node and its id.
type wholeWin struct {
	from, to time.Duration
	id       int32
}

// wholeExpiry is a window counted in a sweep: from past on, it no longer
// holds the run, and its domain dom loses a member.
type wholeExpiry struct {
	past time.Duration
	dom  int32
}

// whole reports whether r is a whole-node gang that wholeEarliest
// answers: every member takes all the GPUs of a node of the largest
// size, and no node is avoided.
func (p *Profile) whole(r gang.Request) bool {
	return r.GPUsPerMember == p.ix.MaxGPUs() && r.Avoid == nil && !limited(p.ix, r)
}

// wholeTouch marks node n's whole-node windows out of date.
func (p *Profile) wholeTouch(n topology.NodeID) {
	if w := p.wholeWins; w != nil && w.wins[n] != nil && !w.dirty[n] {
		w.dirty[n] = true
		w.list = append(w.list, n)
	}
}

// wholeReserve takes [start, end) out of node n's windows for a
// reservation of its GPUs over that span: the windows its events now
// give, without reading them. A dirty node is left to its
// recomputation. O(w + changes) for w windows of the node; see update.
func (p *Profile) wholeReserve(n topology.NodeID, start, end time.Duration) {
	w := p.wholeWins
	if w == nil || w.wins[n] == nil || w.dirty[n] {
		return
	}
	ws := w.buf[:0]
	for _, x := range w.wins[n] {
		if x.to <= start || x.from >= end {
			ws = append(ws, window{x.from, x.to})
			continue
		}
		if x.from < start {
			ws = append(ws, window{x.from, start})
		}
		if end < x.to {
			ws = append(ws, window{end, x.to})
		}
	}
	w.buf = ws
	w.update(n, ws)
}

// wholeBuild builds the index from every node's events, the windows of
// all nodes in one array (a node's grows apart once it gains one). The
// caller has brought seenHeld up to date.
func (p *Profile) wholeBuild() {
	nn := p.ix.NumNodes()
	size := 1
	for size < nn {
		size *= 2
	}
	w := &wholeIndex{wins: make([][]wholeWin, nn), dirty: make([]bool, nn), ends: newEvents(p.timeline.ends.runMax),
		tail: make([]time.Duration, 2*size), size: size}
	for i := range w.tail {
		w.tail[i] = Forever
	}
	p.wholeWins = w
	g := p.ix.MaxGPUs()
	all := make([]wholeWin, 0, nn)
	end := make([]int, nn) // per node, the end of its windows in all
	for i := range nn {
		n := topology.NodeID(i)
		if p.dense.alloc[n].Len() == g {
			w.buf = p.wholeWindows(n, w.buf[:0])
			for _, x := range w.buf {
				all = append(all, w.put(n, x))
				if x.to == Forever {
					w.tail[size+i] = x.from
				}
			}
		}
		end[i] = len(all)
	}
	for i := range nn {
		if p.dense.alloc[i].Len() == g {
			from := 0
			if i > 0 {
				from = end[i-1]
			}
			w.wins[i] = all[from:end[i]:end[i]]
		}
	}
	for j := size - 1; j >= 1; j-- {
		w.tail[j] = min(w.tail[2*j], w.tail[2*j+1])
	}
}

// wholeRefresh recomputes the windows of the dirty nodes.
func (p *Profile) wholeRefresh() {
	w := p.wholeWins
	for _, n := range w.list {
		w.dirty[n] = false
		w.buf = p.wholeWindows(n, w.buf[:0])
		w.update(n, w.buf)
	}
	w.list = w.list[:0]
}

// wholeWindows appends to ws the whole-node free windows of node n, in
// order: the complement of the span until its last held GPU is released
// and of its reservations.
func (p *Profile) wholeWindows(n topology.NodeID, ws []window) []window {
	ne := &p.nodes[n]
	alloc := p.dense.alloc[n]
	rel := time.Duration(0)
	for held := alloc & p.seenHeld[n]; held != 0; held &= held - 1 {
		gpu := held & -held
		at := Forever
		for _, e := range ne.releases() {
			if e.set&gpu != 0 {
				at = min(at, e.start)
			}
		}
		if rel = max(rel, at); rel == Forever {
			return ws
		}
	}
	blocked := p.scratch.reserved[:0]
	for _, e := range ne.reservations() {
		if e.set&alloc != 0 {
			blocked = append(blocked, window{e.start, e.end})
		}
	}
	slices.SortFunc(blocked, func(a, b window) int { return compareDur(a.from, b.from) })
	cur := rel
	for _, b := range blocked {
		if b.from > cur {
			ws = append(ws, window{cur, b.from})
		}
		cur = max(cur, b.to)
	}
	if cur != Forever {
		ws = append(ws, window{cur, Forever})
	}
	p.scratch.reserved = blocked[:0]
	return ws
}

// update makes ws, in order, the windows of node n: those that did not
// change keep their ids and entries.
func (w *wholeIndex) update(n topology.NodeID, ws []window) {
	old := w.wins[n]
	kept := w.kept[:0]
	i := 0
	for _, x := range ws {
		for i < len(old) && (old[i].from < x.from || old[i].from == x.from && old[i].to != x.to) {
			w.drop(n, old[i])
			i++
		}
		if i < len(old) && old[i].from == x.from && old[i].to == x.to {
			kept = append(kept, old[i])
			i++
			continue
		}
		kept = append(kept, w.put(n, x))
	}
	for ; i < len(old); i++ {
		w.drop(n, old[i])
	}
	w.wins[n] = append(old[:0], kept...)
	w.kept = kept[:0]
	last := Forever
	if k := len(ws) - 1; k >= 0 && ws[k].to == Forever {
		last = ws[k].from
	}
	if j := w.size + int(n); w.tail[j] != last {
		w.tail[j] = last
		for j /= 2; j > 0; j /= 2 {
			w.tail[j] = min(w.tail[2*j], w.tail[2*j+1])
		}
	}
}

// put enters window x of node n and returns it with its id.
func (w *wholeIndex) put(n topology.NodeID, x window) wholeWin {
	var id int32
	if k := len(w.freeIDs); k > 0 {
		id = w.freeIDs[k-1]
		w.freeIDs = w.freeIDs[:k-1]
	} else {
		id = int32(len(w.from))
		w.from, w.to, w.seen = append(w.from, 0), append(w.to, 0), append(w.seen, 0)
	}
	w.from[id], w.to[id] = x.from, x.to
	if x.to != Forever {
		w.ends.Insert(timelineEntry{at: x.to, seq: id, n: n})
	}
	return wholeWin{from: x.from, to: x.to, id: id}
}

// drop removes window x of node n.
func (w *wholeIndex) drop(n topology.NodeID, x wholeWin) {
	if x.to != Forever {
		w.ends.Delete(timelineEntry{at: x.to, seq: x.id, n: n})
	}
	w.freeIDs = append(w.freeIDs, x.id)
}

// tails calls f, in node order, with each node whose window that never
// ends starts at t or earlier, until f returns false, and reports
// whether f never did. O((k+1)·log N) for the k nodes passed.
func (w *wholeIndex) tails(t time.Duration, f func(n topology.NodeID) bool) bool {
	j := 1
	if w.tail[j] > t {
		return true
	}
	for {
		// Down to the first leaf at or under j that starts by t.
		for j < w.size {
			if j *= 2; w.tail[j] > t {
				j++
			}
		}
		if !f(topology.NodeID(j - w.size)) {
			return false
		}
		// Up to the next subtree to the right that holds one.
		for {
			for j&1 == 1 {
				j /= 2
			}
			if j == 0 {
				return true
			}
			if j++; w.tail[j] <= t {
				break
			}
		}
	}
}

// holes calls f with each node whose window that ends holds a run of d
// from t, until f returns false. The windows are read by end from t+d
// on, and runs of them that all start after t are skipped: O(H/R·log +
// H') for H windows that end at t+d or later, in runs of R, and H' of
// them in runs not skipped.
func (w *wholeIndex) holes(t, d time.Duration, f func(n topology.NodeID, id int32) bool) {
	w.ends.FromRuns(timelineEntry{at: add(t, d), seq: -1}, func(run *entryRun, evs []timelineEntry) bool {
		if w.runFrom(run) > t {
			return true
		}
		for _, e := range evs {
			if w.from[e.seq] <= t && !f(e.n, e.seq) {
				return false
			}
		}
		return true
	})
}

// runFrom returns a bound on the earliest start of the windows of run r
// of ends: no later than it. The run keeps minus that bound as its
// bound, which the events keep valid (see entryRun): a delete leaves it a
// bound, an insert clears it, and joining two runs takes the greater of
// the two negatives. O(1), or O(R) after an insert.
func (w *wholeIndex) runFrom(r *entryRun) time.Duration {
	if !r.boundKnown {
		lo := Forever
		for _, e := range r.entries {
			lo = min(lo, w.from[e.seq])
		}
		r.bound, r.boundKnown = -lo, true
	}
	return -r.bound
}

// wholeEarliest returns the earliest t in [t0, limit] at which the
// whole-node gang r fits for a run of d (see wholeIndex), and false when
// there is none, for t0 <= limit (the caller, earliest, checks it); with
// place, it also returns the placement there (see wholePlaces). The
// caller has brought seenHeld and the timeline up to date.
//
// It counts, per domain, the nodes whose window holds the run from t0
// (the windows that never end from t0 or earlier, and the others that
// start by t0 and end at t0+d or later), then sweeps the timeline after
// t0, counting each window that starts at an entry and is long enough
// for the run, and dropping those that end too soon for a run from the
// entry reached. Entries whose GPUs are all reserved again before a run
// from their moment would end start no such window (see reservedAgainBy), and
// runs of them are skipped whole. O((T + H + S)·log) for T windows that
// never end from t0 or earlier, H windows that end at t0+d or later, and
// S entries swept to the answer.
func (p *Profile) wholeEarliest(r gang.Request, d, t0, limit time.Duration, place bool) (time.Duration, gang.Placement, bool) {
	if p.wholeWins == nil {
		p.wholeBuild()
	} else {
		p.wholeRefresh()
	}
	w := p.wholeWins
	level := r.Required
	if level == gang.NoLevel {
		level = topology.ClusterLevel
	}
	nd := 1
	if level != topology.ClusterLevel {
		nd = p.ix.NumDomains(level)
	}
	w.count = slices.Grow(w.count[:0], nd)[:nd]
	clear(w.count)
	w.heap = w.heap[:0]
	if w.stamp++; w.stamp == 0 {
		clear(w.seen)
		w.stamp = 1
	}
	m := int32(r.Members)
	// count counts window x of node n, and reports whether its domain
	// then holds the gang.
	count := func(n topology.NodeID, x wholeWin) bool {
		if !p.ix.InClass(n, r.Class) {
			return false
		}
		w.seen[x.id] = w.stamp
		dom := int32(0)
		if level != topology.ClusterLevel {
			dom = int32(p.ix.DomainOf(level, n))
		}
		w.count[dom]++
		if x.to != Forever {
			w.push(wholeExpiry{past: x.to - d + 1, dom: dom})
		}
		return w.count[dom] >= m
	}
	fits := !w.tails(t0, func(n topology.NodeID) bool {
		ws := w.wins[n]
		return !count(n, ws[len(ws)-1])
	})
	if !fits {
		w.holes(t0, d, func(n topology.NodeID, id int32) bool {
			fits = count(n, wholeWin{from: w.from[id], to: w.to[id], id: id})
			return !fits
		})
	}
	at := t0
	if !fits {
		at, fits = Forever, false
		p.freeing(t0, d, limit, func(e timelineEntry) bool {
			x, ok := w.startsAt(e.n, e.at)
			if !ok || w.seen[x.id] == w.stamp || add(e.at, d) > x.to {
				return true
			}
			for len(w.heap) > 0 && w.heap[0].past <= e.at {
				w.count[w.pop().dom]--
			}
			if count(e.n, x) {
				at, fits = e.at, true
				return false
			}
			return true
		})
		if !fits {
			return 0, gang.Placement{}, false
		}
	}
	if !place {
		return at, gang.Placement{}, true
	}
	return at, p.wholePlace(r, d, at), true
}

// startsAt returns the window of node n that starts at t, if any. O(log
// w) for w windows of the node.
func (w *wholeIndex) startsAt(n topology.NodeID, t time.Duration) (wholeWin, bool) {
	ws := w.wins[n]
	k := len(ws)
	if k == 0 {
		return wholeWin{}, false
	}
	if ws[k-1].from == t {
		return ws[k-1], true
	}
	i := sort.Search(k-1, func(i int) bool { return ws[i].from >= t })
	if i < k-1 && ws[i].from == t {
		return ws[i], true
	}
	return wholeWin{}, false
}

// wholePlaces reports whether wholePlace chooses the GPUs of r as a
// cursor at its start would ([gang.Place], then preferBusy): no
// [gang.DomainChooser] picks its domain, it prefers no level inside its
// required one, it does not spread its members, and the nodes it may use
// are all of one GPU type, or s consolidates. Then the gang goes to the
// domain of its required level that [topology.Index.BestDomains] puts
// first among those with room for it, as they would be for the run
// (fewest GPUs usable for it, then most GPUs not, then by domain), and
// takes there, in node order, the nodes whose window holds its run,
// those whose GPUs are all held now first (see preferBusy).
func (p *Profile) wholePlaces(r gang.Request, s binpack.Scorer) bool {
	if r.Chooser != nil && r.Required != gang.NoLevel || r.Preferred > r.Required || r.Distinct {
		return false
	}
	if c, ok := s.(binpack.Consolidator); s == nil || ok && c.Consolidate() {
		return true // the fewest-nodes rule: the first node with room
	}
	// A scorer chooses among GPU types, then the first node of the
	// type.
	return r.Class != topology.AnyType || p.ix.NumTypes() <= 1
}

// wholePlace returns the placement of r at at, where wholeEarliest found
// that it fits: the nodes whose window holds the run from at, in the
// domain and the order of wholePlaces. O((T + H)·log + k log k) for T
// windows that never end from at or earlier (without a required level,
// only those up to the Members-th node that ranks first), H windows that
// end at at+d or later, and the k nodes taken, plus, with a required
// level, O(n·e) to count the usable GPUs of the n nodes of each domain
// with room for the gang.
func (p *Profile) wholePlace(r gang.Request, d, at time.Duration) gang.Placement {
	w := p.wholeWins
	cs := w.nodes[:0]
	// Busy nodes, all of whose GPUs are held now, first, when GPUs
	// released by the start may be used (see preferBusy); then by node.
	prefer := at > 0 || p.releasedNow
	busy := func(n topology.NodeID) bool { return prefer && p.dense.alloc[n]&^p.ix.Held(n) == 0 }
	take := func(n topology.NodeID) bool {
		if p.ix.InClass(n, r.Class) {
			cs = append(cs, n)
			return true
		}
		return false
	}
	w.holes(at, d, func(n topology.NodeID, _ int32) bool {
		take(n)
		return true
	})
	// The windows that never end come in node order: without a required
	// level, once they have given Members nodes that rank first (busy
	// ones, or any when none is preferred), no later node can take a
	// place among the first Members. (With one, every domain's count
	// matters.)
	enough, first := r.Members, 0
	w.tails(at, func(n topology.NodeID) bool {
		if take(n) && (!prefer || busy(n)) {
			first++
		}
		return r.Required != gang.NoLevel || first < enough
	})
	pl := gang.Placement{Level: topology.ClusterLevel, Slots: make([]gang.Slot, 0, r.Members)}
	if r.Required != gang.NoLevel {
		pl.Level, pl.Domain = r.Required, p.wholeDomain(r, d, at, cs)
		in := cs[:0]
		for _, n := range cs {
			if p.ix.DomainOf(pl.Level, n) == pl.Domain {
				in = append(in, n)
			}
		}
		cs = in
	}
	slices.SortFunc(cs, func(a, b topology.NodeID) int {
		if ba, bb := busy(a), busy(b); ba != bb {
			if ba {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	for _, n := range cs[:r.Members] {
		pl.Slots = append(pl.Slots, gang.Slot{Node: n, GPUs: p.dense.alloc[n], Members: 1})
	}
	w.nodes = cs[:0]
	return pl
}

// wholeDomain returns the domain of r's required level that
// [gang.Place] would choose for r at at for a run of d, given the nodes
// cs whose window holds the run: among the domains where at least
// r.Members of them lie, the one with the fewest GPUs of r's class
// usable for the run, then the most GPUs not usable, then the first.
// Those GPUs are counted node by node only when two domains or more have
// room, and then in order of the GPUs their nodes in cs bring (a lower
// bound: every GPU of such a node is usable), a domain's count stopping
// once it exceeds the best so far, and none begun once that bound does
// or where the bound is every GPU of the domain.
func (p *Profile) wholeDomain(r gang.Request, d, at time.Duration, cs []topology.NodeID) topology.DomainID {
	w := p.wholeWins
	level := r.Required
	nd := p.ix.NumDomains(level)
	w.count = slices.Grow(w.count[:0], nd)[:nd]
	clear(w.count)
	fit := w.doms[:0]
	for _, n := range cs {
		dom := p.ix.DomainOf(level, n)
		if w.count[dom]++; w.count[dom] == int32(r.Members) {
			fit = append(fit, dom)
		}
	}
	w.doms = fit[:0]
	if len(fit) == 1 {
		return fit[0]
	}
	slices.SortFunc(fit, func(a, b topology.DomainID) int {
		if w.count[a] != w.count[b] {
			return int(w.count[a] - w.count[b])
		}
		return int(a - b)
	})
	g := p.ix.MaxGPUs()
	best, bestFree, bestUsed := topology.DomainID(-1), math.MaxInt, 0
	for _, dom := range fit {
		if g*int(w.count[dom]) > bestFree {
			break // this domain and the rest have more usable GPUs
		}
		total := p.ix.FreeGPUs(level, dom, r.Class) + p.ix.UsedGPUs(level, dom, r.Class)
		free := g * int(w.count[dom])
		if free < total { // else every GPU of the domain is on such a node
			if free = p.usableIn(r.Class, level, dom, at, d, bestFree); free > bestFree {
				continue
			}
		}
		if used := total - free; best < 0 || free < bestFree || used > bestUsed || used == bestUsed && dom < best {
			best, bestFree, bestUsed = dom, free, used
		}
	}
	return best
}

// usableIn returns the GPUs of class cl in domain dom of level usable
// for a run of d from at, counted node by node, or some count above
// stop once the count passes it. O(n·e) for n nodes of e events.
func (p *Profile) usableIn(cl topology.Class, level int, dom topology.DomainID, at, d time.Duration, stop int) int {
	free := 0
	for f := range p.ix.MaxGPUs() + 1 {
		for n := range p.ix.Bucket(level, dom, cl, f) {
			if free += (p.usable(n, p.dense.alloc[n]&^p.seenHeld[n], at, d) & p.dense.alloc[n]).Len(); free > stop {
				return free
			}
		}
	}
	return free
}

// push adds x to the heap of counted windows.
func (w *wholeIndex) push(x wholeExpiry) {
	h := append(w.heap, x)
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if h[up].past <= h[i].past {
			break
		}
		h[up], h[i] = h[i], h[up]
		i = up
	}
	w.heap = h
}

// pop removes and returns the counted window that stops holding the run
// first.
func (w *wholeIndex) pop() wholeExpiry {
	h := w.heap
	x := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].past < h[c].past {
			c++
		}
		if h[i].past <= h[c].past {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	w.heap = h
	return x
}
