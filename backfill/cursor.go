package backfill

import (
	"sort"
	"time"

	"github.com/gpusched/gpusched/internal/changelog"
	"github.com/gpusched/gpusched/topology"
)

// A cursor is a copy of the live index that shows, for every node, the
// GPUs usable for a run [at, at+d): free now or released by at, and held
// by no reservation at any moment of the run. That view depends only on
// at and d, and it differs between two runs only on the nodes with a
// release or a reservation end between the two starts, or a reservation
// start between the two ends. So a query brings a cursor to its run by
// applying just those events (see [Profile.move]), and sweeps forward the
// same way; the next query, which usually starts near where an earlier
// one ended, finds a cursor close by instead of rebuilding the view of
// every node with events. When the events passed would cost more than
// recomputing the nodes with events, the cursor recomputes those nodes
// instead, so a move costs at most a constant factor more than a
// rebuild.
//
// A reservation only takes GPUs away, so it is applied to every cursor
// at once: a run it overlaps loses its GPUs. Other changes to the profile
// (releases) and to the live index (GPUs taken or freed between queries,
// which the index records) mark the changed nodes stale in every cursor;
// a cursor recomputes its stale nodes before it is used.
//
// A sweep moves a cursor over many runs and asks at each only whether the
// free GPUs of the job's class suffice; it places the job at few of them.
// So a cursor keeps the usable GPUs of every node and their count per
// class itself, and writes a changed node into its index only when the
// index is next read (flush): a node that changes at several steps of a
// sweep is written once, and the index's buckets are not kept in order
// for steps that only count.
type cursor struct {
	ix    *topology.Index
	at, d time.Duration // the run shown; at -1: the live view
	stale []bool
	list  []topology.NodeID // the stale nodes
	// use holds the GPUs shown usable per node (all GPUs but the held
	// ones the index should show), free their count per class among
	// the allocatable GPUs (AnyType: every node), nodes the number of
	// nodes per class and count of such GPUs (entry cl*(G+1)+k for G
	// the most GPUs of a node), and ahead the nodes whose use the index
	// does not show yet.
	use    []topology.GPUSet
	free   []int
	nodes  []int32
	behind []bool
	ahead  []topology.NodeID
	// dense is the profile's per-node arrays: every GPU of a node and the
	// allocatable ones, and its class.
	dense *denseNodes
}

// newCursor returns a cursor over a copy of ix that shows it as it is.
func (p *Profile) newCursor(ix *topology.Index, at, d time.Duration) *cursor {
	nn := ix.NumNodes()
	c := &cursor{ix: ix.Clone(), at: at, d: d, stale: make([]bool, nn), use: make([]topology.GPUSet, nn),
		free: make([]int, p.dense.classes), nodes: make([]int32, p.dense.classes*(ix.MaxGPUs()+1)), behind: make([]bool, nn),
		dense: &p.dense}
	for i := range c.use {
		n := topology.NodeID(i)
		c.use[i] = p.dense.all[i] &^ ix.Held(n)
		c.nodes[0]++ // as if it showed none, then as it does
		if cl := p.dense.class[n]; cl != topology.AnyType {
			c.nodes[int(cl)*(ix.MaxGPUs()+1)]++
		}
		c.countFree(n, 0, (c.use[i] & p.dense.alloc[i]).Len())
	}
	return c
}

// countFree records that node n shows k usable allocatable GPUs where it
// showed was: in c's counts of GPUs and of nodes by count, for its class
// and for every node.
func (c *cursor) countFree(n topology.NodeID, was, k int) {
	if was == k {
		return
	}
	g1 := c.ix.MaxGPUs() + 1
	c.free[topology.AnyType] += k - was
	c.nodes[was]--
	c.nodes[k]++
	if cl := c.dense.class[n]; cl != topology.AnyType {
		c.free[cl] += k - was
		c.nodes[int(cl)*g1+was]--
		c.nodes[int(cl)*g1+k]++
	}
}

// room reports whether the nodes of class cl that c shows can hold m
// members of g GPUs each, counting floor(k/g) members on a node with k
// usable GPUs: when they cannot, no placement of such a gang exists
// (members of a gang may share a node, never split across nodes). O(G).
func (c *cursor) room(cl topology.Class, m, g int) bool {
	g1 := c.ix.MaxGPUs() + 1
	if g <= 0 || int(cl) < 0 || int(cl) >= len(c.free) {
		return true // not a shape to judge here; the placer decides
	}
	have := 0
	for k := g; k < g1 && have < m; k++ {
		have += int(c.nodes[int(cl)*g1+k]) * (k / g)
	}
	return have >= m
}

// show makes c show u usable on node n.
func (c *cursor) show(n topology.NodeID, u topology.GPUSet) {
	old := c.use[n]
	if u == old {
		return
	}
	c.use[n] = u
	c.countFree(n, (old & c.dense.alloc[n]).Len(), (u & c.dense.alloc[n]).Len())
	if !c.behind[n] {
		c.behind[n] = true
		c.ahead = append(c.ahead, n)
	}
}

// flush brings c's index up to what c shows.
func (c *cursor) flush() {
	for _, n := range c.ahead {
		c.behind[n] = false
		c.ix.SetHeld(n, c.dense.all[n]&^c.use[n])
	}
	c.ahead = c.ahead[:0]
}

// freeGPUs is the count of GPUs of class cl that c shows usable.
func (c *cursor) freeGPUs(cl topology.Class) int {
	if int(cl) < 0 || int(cl) >= len(c.free) {
		return 0 // no node has that class
	}
	return c.free[cl]
}

// The view does not depend on the request, so any cursor serves any
// query. The profile keeps up to maxCursors of them: a query takes the
// one nearest to its run (a cursor behind it counting half as far as
// one ahead, since sweeps go forward) and leaves it at its answer. Until
// there are maxCursors, the nearest is copied first, so that its run
// stays covered: queries that alternate between early starts (small jobs
// filling holes) and late ones (large gangs behind the reservations)
// each find a cursor nearby.
const maxCursors = 8

// distance is how far a cursor at run (at, d) is from run (t, dt), in
// time, counting backward moves double.
func distance(at, d, t, dt time.Duration) time.Duration {
	gap := func(a, b time.Duration) time.Duration {
		switch {
		case a == b:
			return 0
		case a == Forever || b == Forever:
			return Forever / 4
		case a < b:
			return b - a
		}
		return 2 * (a - b)
	}
	return add(gap(at, t), gap(add(at, d), add(t, dt)))
}

// cursorFor returns a cursor for a query of a run [t, t+d), up to date
// with every change so far. It first puts waiting releases into the
// timeline, which the cursor's moves and the sweep read.
func (p *Profile) cursorFor(t, d time.Duration) *cursor {
	p.prepare()
	var best *cursor
	bestCost := time.Duration(0)
	for _, c := range p.cursors {
		if cost := distance(c.at, c.d, t, d); best == nil || cost < bestCost {
			best, bestCost = c, cost
		}
	}
	if len(p.cursors) < maxCursors {
		if best == nil {
			best = p.newCursor(p.ix, -1, 1)
		} else {
			p.refreshStale(best)
			best.flush()
			best = p.newCursor(best.ix, best.at, best.d)
		}
		p.cursors = append(p.cursors, best)
	}
	p.refreshStale(best)
	return best
}

// prepare readies the profile for a query that sweeps: it puts waiting
// releases into the timeline, builds the dense arrays, and brings the
// held GPUs of each node (seenHeld) up to date with the live index,
// tracking its changes from the first query on.
func (p *Profile) prepare() {
	p.flushTimeline()
	p.buildDense()
	if p.seenHeld == nil {
		p.seenHeld = make([]topology.GPUSet, p.ix.NumNodes())
		for n := range p.seenHeld {
			p.seenHeld[n] = p.ix.Held(topology.NodeID(n))
		}
		changelog.Track(changelog.Of[topology.NodeID](p.ix), true)
		return
	}
	p.drainChanges()
}

// refreshStale recomputes the stale nodes of c.
func (p *Profile) refreshStale(c *cursor) {
	for _, n := range c.list {
		c.stale[n] = false
		p.point(c, n)
	}
	c.list = c.list[:0]
}

// markStale marks node n stale in every cursor and in the whole-node
// windows.
func (p *Profile) markStale(n topology.NodeID) {
	p.wholeTouch(n)
	for _, c := range p.cursors {
		if !c.stale[n] {
			c.stale[n] = true
			c.list = append(c.list, n)
		}
	}
}

// blockCursors applies a new reservation of s on node n over
// [start, end) to every cursor: a run it overlaps loses those GPUs, and
// no other run changes, since a reservation only takes GPUs away.
// Cursors' runs are never empty (queries pass run(d) >= 1), so overlap
// is that of two half-open spans. O(cursors).
func (p *Profile) blockCursors(n topology.NodeID, s topology.GPUSet, start, end time.Duration) {
	for _, c := range p.cursors {
		if !c.stale[n] && start < add(c.at, c.d) && end > c.at {
			if u := c.use[n]; u&s != 0 {
				c.show(n, u&^s)
			}
		}
	}
}

// drainChanges marks stale the nodes whose held GPUs in the live index
// changed since the last look. Changes taken back (a trial placement
// released) leave a node as it was and are skipped.
func (p *Profile) drainChanges() {
	if p.seenHeld == nil {
		return
	}
	nodes, all := changelog.Drain(changelog.Of[topology.NodeID](p.ix), p.scratch.changed[:0])
	if all {
		// The record overflowed: the cursors go, and the whole-node
		// windows of the nodes whose held GPUs changed are recomputed.
		p.cursors = p.cursors[:0]
		for i, h := range p.seenHeld {
			n := topology.NodeID(i)
			if held := p.ix.Held(n); held != h {
				p.seenHeld[n] = held
				p.wholeTouch(n)
			}
		}
		return
	}
	for _, n := range nodes {
		if h := p.ix.Held(n); h != p.seenHeld[n] {
			p.seenHeld[n] = h
			p.markStale(n)
		}
	}
	p.scratch.changed = nodes[:0]
}

// point makes cursor c show node n as it is for c's run. The GPUs free
// now are read from the held GPUs last drained from the live index, which
// cursorFor has brought up to date.
func (p *Profile) point(c *cursor, n topology.NodeID) {
	c.show(n, p.usable(n, p.dense.alloc[n]&^p.seenHeld[n], c.at, c.d))
	p.pointUse(c, n)
}

// move brings cursor c to the run [t, t+d). It recomputes the nodes
// with an event passed, O(e) each for e events per node, except for the
// events applied in O(1) by the rules below. A recomputation costs
// recomputeUnits and an event applied in O(1) one unit; past
// recomputeUnits per node with events, the move stops and recomputes
// every node with events instead, and a move that would pass more
// entries than that does so at once, having counted them a run at a
// time. Writing the changed nodes into the index (O(L) each, for L
// levels) waits for the next flush.
//
// The events passed are the releases and reservation ends between the
// two starts and the reservation starts between the two ends. Four kinds
// of them cost O(1), read from the timeline entry, reservedAgainBy, the
// cursor's own view, and the node's GPUs free now and earliest release:
//
//	rule  event passed                as the run's          node left as it is when
//	1     release or reservation end  start moves later     reservedAgainBy < new end
//	2     reservation start           end moves later       always; its GPUs are removed
//	3     release or reservation end  start moves earlier   the cursor shows none of its GPUs usable
//	4     reservation start           end moves earlier     none of its GPUs is free now or released
//	                                                        by the new start, or new start < reservedAgainBy
//
// Each rests on this: an event changes the use of its own GPUs only, so
// a GPU of a node that no rule recomputes keeps its use unless some rule
// says otherwise.
//  1. A release or reservation end passed by a later start frees its
//     GPUs from then on, but a GPU reserved again before the run's new
//     end is unusable for the run from this event on. If that holds for
//     every GPU of the event, the node is left as it is: such a GPU's
//     use for the run is settled by the last event at or before the new
//     start that frees it, another entry passed and judged alike, and a
//     GPU of a node left alone was unusable before the move too, unless
//     the reservation that held it started at or after the old end,
//     which rule 2 handles.
//  2. A reservation start passed by a later run end (whichever way the
//     start moves) blocks its GPUs. On a node not recomputed, the events
//     passed moving the start take nothing away and free nothing usable,
//     so the starts are its only change: their GPUs are removed. (A
//     reservation that ended by the new start had its end passed and
//     judged unusable, so removing its GPUs changes nothing.)
//  3. A release or reservation end passed by an earlier start can only
//     take its GPUs away: they are no longer released by the start, or
//     held by a reservation the run now overlaps. If the cursor shows
//     none of them usable, nothing changes.
//  4. A reservation start passed by an earlier run end can only give its
//     GPUs back, and only those free now or released by the new start.
//     If none is, nothing changes: if the start moved later, the old run
//     could not use them either; if it moved earlier, a GPU of them that
//     the old run could use was released between the two starts, and
//     the pass over releases, which runs first, went over that release
//     with the GPU shown usable, so it recomputed the node (or ran out
//     of budget, and every node is recomputed). Nothing changes either
//     when the new start comes before the start's reservedAgainBy: each
//     of its GPUs is then held by an earlier reservation that ends after
//     the new start, which either overlaps the new run or starts at or
//     after its end; in that case its own start, earlier, was passed
//     first and either recomputed the node or was left alone by this
//     same rule, its GPUs unusable.
//
// Every other event passed recomputes its node.
func (p *Profile) move(c *cursor, t, d time.Duration) {
	oldEnd, newEnd := add(c.at, c.d), add(t, d)
	if t == c.at && oldEnd == newEnd {
		return
	}
	m := cursorMove{
		p: p, c: c, start: t, end: newEnd, forward: t > c.at,
		startLo: min(c.at, t), startHi: max(c.at, t),
		endLo: min(oldEnd, newEnd), endHi: max(oldEnd, newEnd), endLater: newEnd > oldEnd,
		stamp:  p.nextStamp(),
		budget: recomputeUnits * len(p.eventful),
	}
	c.at, c.d = t, d
	if m.passesTooMany() {
		for _, n := range p.eventful {
			p.point(c, n)
		}
		return
	}
	m.passFreeing()
	if m.budget >= 0 {
		m.passStarts()
	}
	if m.budget < 0 {
		m.recomputeRest()
	}
}

// recomputeUnits is what recomputing a node costs a move, in units of
// an event applied in O(1).
const recomputeUnits = 8

// cursorMove is one move of a cursor c to the run [start, end): it
// passes the releases and reservation ends in (startLo, startHi] and
// the reservation starts in [endLo, endHi), spending budget on them.
// A node recomputed carries stamp, so that it is recomputed once.
type cursorMove struct {
	p                *Profile
	c                *cursor
	start, end       time.Duration // the new run
	forward          bool          // the start moves later
	startLo, startHi time.Duration
	endLo, endHi     time.Duration
	endLater         bool // the end moves later
	stamp            uint32
	budget           int
}

// passesTooMany reports whether the move passes more entries than its
// budget has units, counting them a run at a time without walking them:
// then recomputing every node with events costs less.
func (m *cursorMove) passesTooMany() bool {
	k := 0
	if m.startLo != m.startHi {
		k = m.p.timeline.ends.Count(m.startLo+1, m.startHi, m.budget+1)
	}
	if m.endLo != m.endHi && k <= m.budget {
		k += m.p.timeline.starts.Count(m.endLo, m.endHi-1, m.budget+1-k)
	}
	return k > m.budget
}

// recompute recomputes e's node, once per move; false when the budget
// is spent.
func (m *cursorMove) recompute(e timelineEntry) bool {
	if m.p.scratch.stamp[e.n] == m.stamp {
		m.budget--
		return m.budget >= 0
	}
	if m.budget -= recomputeUnits; m.budget < 0 {
		return false
	}
	m.p.scratch.stamp[e.n] = m.stamp
	m.p.point(m.c, e.n)
	return true
}

// pass spends a unit on an entry a rule leaves alone (skip), or
// recomputes its node; false when the budget is spent.
func (m *cursorMove) pass(e timelineEntry, skip bool) bool {
	if skip {
		m.budget--
		return m.budget >= 0
	}
	return m.recompute(e)
}

// recomputed reports whether this move has recomputed node n.
func (m *cursorMove) recomputed(n topology.NodeID) bool { return m.p.scratch.stamp[n] == m.stamp }

// passFreeing passes the releases and reservation ends between the two
// starts (rules 1 and 3). Moving forward, a whole run of entries whose
// latest reservedAgainBy is before the new end costs a unit per entry
// without reading them.
func (m *cursorMove) passFreeing() {
	if m.startLo == m.startHi {
		return
	}
	p, hi := m.p, m.startHi
	p.timeline.ends.FromRuns(timelineEntry{at: m.startLo + 1, seq: -1}, func(run *entryRun, evs []timelineEntry) bool {
		if m.forward && p.latestReservedAgainBy(run) < m.end && !p.tracksUse() {
			k := len(evs)
			if evs[k-1].at > hi {
				k = sort.Search(k, func(i int) bool { return evs[i].at > hi })
			}
			m.budget -= k
			return m.budget >= 0 && k == len(evs)
		}
		for _, e := range evs {
			if e.at > hi {
				return false
			}
			var skip bool
			if m.forward {
				skip = p.timeline.reservedAgainBy[e.seq] < m.end // rule 1
			} else {
				skip = !m.recomputed(e.n) && m.c.use[e.n]&e.set == 0 // rule 3
			}
			// A release frees CPU and memory even where its GPUs stay
			// unusable, and an earlier start takes them back.
			skip = skip && !p.tracksUse()
			if !m.pass(e, skip) {
				return false
			}
		}
		return true
	})
}

// passStarts passes the reservation starts between the two ends (rules
// 2 and 4).
func (m *cursorMove) passStarts() {
	if m.endLo == m.endHi {
		return
	}
	p, c := m.p, m.c
	p.timeline.starts.From(timelineEntry{at: m.endLo, seq: -1}, func(evs []timelineEntry) bool {
		for _, e := range evs {
			if e.at >= m.endHi {
				return false
			}
			var skip bool
			if m.endLater {
				if !m.recomputed(e.n) { // rule 2
					if u := c.use[e.n]; u&e.set != 0 {
						c.show(e.n, u&^e.set)
					}
				}
				skip = true
			} else {
				skip = !m.recomputed(e.n) && (p.releasedNone(e.n, e.set, m.start) || m.start < p.timeline.reservedAgainBy[e.seq]) // rule 4
			}
			// A reservation's CPU and memory come and go with its start.
			skip = skip && !p.tracksUse()
			if !m.pass(e, skip) {
				return false
			}
		}
		return true
	})
}

// recomputeRest recomputes every node with events that the move has not
// recomputed, once its budget is spent.
func (m *cursorMove) recomputeRest() {
	for _, n := range m.p.eventful {
		if !m.recomputed(n) {
			m.p.point(m.c, n)
		}
	}
}
