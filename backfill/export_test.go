package backfill

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// CheckInvariants reports the first way p's internal state disagrees
// with its definitions: a cursor node that is not stale showing other
// GPUs than the usability rule gives for the cursor's run; a cursor's
// per-class counts of GPUs, or of nodes by usable GPUs, that are not
// what it shows; a node listed twice among the nodes with events, or one
// with events not listed; a timeline entry that does not free its
// node's event's GPUs, or an event that frees GPUs without an entry; or
// a release or reservation end whose reservedAgainBy is earlier than the truth.
// It puts waiting releases into the timeline first.
func CheckInvariants(p *Profile) error {
	if w := p.wholeWins; w != nil && w.misses > 0 {
		return fmt.Errorf("%d whole-node starts the cursor could not place the gang at", w.misses)
	}
	for ci, c := range p.cursors {
		free := make([]int, len(c.free))
		nodes := make([]int32, len(c.nodes))
		g1 := p.ix.MaxGPUs() + 1
		stale := false
		for i := range c.use {
			n := topology.NodeID(i)
			k := (c.use[i] & p.dense.alloc[i]).Len()
			free[topology.AnyType] += k
			nodes[k]++
			if cl := p.dense.class[n]; cl != topology.AnyType {
				free[cl] += k
				nodes[int(cl)*g1+k]++
			}
			if c.stale[i] {
				stale = true
				continue
			}
			want := p.usable(n, p.dense.alloc[n]&^p.seenHeld[n], c.at, c.d) & p.dense.alloc[n]
			if got := c.use[i] & p.dense.alloc[i]; got != want {
				return fmt.Errorf("cursor %d at [%s, +%s): node %d shows %v, the rule gives %v", ci, c.at, c.d, n, got.Indices(), want.Indices())
			}
		}
		if stale {
			continue // stale nodes are recomputed before the counts are read
		}
		for cl := range free {
			if free[cl] != c.free[cl] {
				return fmt.Errorf("cursor %d: class %d counts %d GPUs, shows %d", ci, cl, c.free[cl], free[cl])
			}
		}
		for i := range nodes {
			if nodes[i] != c.nodes[i] {
				return fmt.Errorf("cursor %d: class %d counts %d nodes with %d usable GPUs, shows %d", ci, i/g1, c.nodes[i], i%g1, nodes[i])
			}
		}
	}
	listed := make([]bool, len(p.nodes))
	for _, n := range p.eventful {
		if listed[n] {
			return fmt.Errorf("node %d is listed twice among the nodes with events", n)
		}
		listed[n] = true
	}
	for n := range p.nodes {
		if len(p.nodes[n].events) > 0 && !listed[n] {
			return fmt.Errorf("node %d has events but is not listed among the nodes with events", n)
		}
	}
	var err error
	p.flushTimeline()
	p.timeline.ends.runs.Ascend(func(r *entryRun) bool {
		for _, e := range r.entries {
			if r.boundKnown && p.timeline.reservedAgainBy[e.seq] > r.bound {
				err = fmt.Errorf("timeline run at %s: bound %s below the reservedAgainBy %s of node %d's entry at %s", r.first.at, r.bound, p.timeline.reservedAgainBy[e.seq], e.n, e.at)
				return false
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	entries := 0
	p.timeline.ends.All(func(evs []timelineEntry) bool {
		for _, e := range evs {
			entries++
			found := false
			for _, v := range p.nodes[e.n].events {
				if v.seq != e.seq {
					continue
				}
				found = true
				if v.set != e.set || v.set == 0 {
					err = fmt.Errorf("node %d, event at %s: its timeline entry frees %v, the event %v", e.n, e.at, e.set.Indices(), v.set.Indices())
					return false
				}
				if truth := againTruth(p, e.n, v.set, e.at); p.timeline.reservedAgainBy[e.seq] < truth {
					err = fmt.Errorf("node %d, event at %s of %v: reservedAgainBy %s is earlier than %s", e.n, e.at, v.set.Indices(), p.timeline.reservedAgainBy[e.seq], truth)
					return false
				}
			}
			if !found {
				err = fmt.Errorf("node %d: a timeline entry at %s frees %v, but the node has no such event", e.n, e.at, e.set.Indices())
				return false
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	// A reservation start's value may be earlier than its definition
	// gives (a reservation made later can hold its GPUs longer), never
	// later: a cursor passing the start skips the node's events on it.
	for n := range p.nodes {
		for _, v := range p.nodes[n].reservations() {
			if truth := heldTruth(p, topology.NodeID(n), v.set, v.start); p.timeline.reservedAgainBy[v.startSeq] > truth {
				return fmt.Errorf("node %d, reservation from %s of %v: its start's value %s is later than %s", n, v.start, v.set.Indices(), p.timeline.reservedAgainBy[v.startSeq], truth)
			}
		}
	}
	// And every event that frees GPUs at some time has its entry.
	want := 0
	for _, ne := range p.nodes {
		for _, v := range ne.events {
			if _, ok := v.freedAt(); ok && v.set != 0 {
				want++
			}
		}
	}
	if want != entries {
		return fmt.Errorf("the timeline holds %d entries, the nodes %d events that free GPUs", entries, want)
	}
	return checkWhole(p)
}

// checkWhole reports the first way the whole-node windows disagree with
// their definition: a node that can hold a whole-node member without
// windows kept, or one that cannot with some; a node not marked dirty
// whose windows are not those its events give (as of the held GPUs last
// seen); a tree of minima whose leaf is not its node's last window's
// start, or whose inner entry is not the least of its children; or
// windows that end that are not, each once, in the tree by end, under a
// run bound no later than its start.
func checkWhole(p *Profile) error {
	w := p.wholeWins
	if w == nil {
		return nil
	}
	finite := map[int32]topology.NodeID{}
	for i, ws := range w.wins {
		n := topology.NodeID(i)
		if can := p.dense.alloc[n].Len() == p.ix.MaxGPUs(); can != (ws != nil) {
			return fmt.Errorf("node %d: can hold a whole-node member %v, has windows kept %v", n, can, ws != nil)
		}
		last := Forever
		for _, x := range ws {
			if x.to == Forever {
				last = x.from
				continue
			}
			finite[x.id] = n
			if w.from[x.id] != x.from || w.to[x.id] != x.to {
				return fmt.Errorf("node %d: window [%s, %s) has id %d of [%s, %s)", n, x.from, x.to, x.id, w.from[x.id], w.to[x.id])
			}
		}
		if got := w.tail[w.size+i]; got != last {
			return fmt.Errorf("node %d: the tree of minima has %s for its last window's start %s", n, got, last)
		}
		if ws == nil || w.dirty[n] {
			continue
		}
		truth := p.wholeWindows(n, nil)
		if len(truth) != len(ws) {
			return fmt.Errorf("node %d: %d windows kept, its events give %d", n, len(ws), len(truth))
		}
		for k, x := range ws {
			if x.from != truth[k].from || x.to != truth[k].to {
				return fmt.Errorf("node %d: window [%s, %s) kept, its events give [%s, %s)", n, x.from, x.to, truth[k].from, truth[k].to)
			}
		}
	}
	for j := w.size - 1; j >= 1; j-- {
		if w.tail[j] != min(w.tail[2*j], w.tail[2*j+1]) {
			return fmt.Errorf("the tree of minima has %s at %d, its children %s and %s", w.tail[j], j, w.tail[2*j], w.tail[2*j+1])
		}
	}
	var err error
	entries := 0
	w.ends.runs.Ascend(func(r *entryRun) bool {
		for _, e := range r.entries {
			entries++
			if n, ok := finite[e.seq]; !ok || n != e.n || e.at != w.to[e.seq] {
				err = fmt.Errorf("node %d: an entry by end at %s, id %d, is no window of it that ends then", e.n, e.at, e.seq)
				return false
			}
			if r.boundKnown && -r.bound > w.from[e.seq] {
				err = fmt.Errorf("run by end at %s: bound %s after the start %s of node %d's window", r.first.at, -r.bound, w.from[e.seq], e.n)
				return false
			}
		}
		return true
	})
	if err == nil && entries != len(finite) {
		err = fmt.Errorf("the tree by end holds %d entries, the nodes %d windows that end", entries, len(finite))
	}
	return err
}

// Sweep is Earliest's search by a cursor alone, from notBefore on: what
// the whole-node windows must agree with.
func Sweep(p *Profile, r gang.Request, d time.Duration, s binpack.Scorer, notBefore time.Duration) (Start, bool) {
	return p.sweep(r, run(d), s, max(notBefore, 0), Forever)
}

// againTruth is reservedAgainBy by its definition, one GPU at a time.
func againTruth(p *Profile, n topology.NodeID, s topology.GPUSet, at time.Duration) time.Duration {
	latest := time.Duration(0)
	for g := s; g != 0; g &= g - 1 {
		i := bits.TrailingZeros64(uint64(g))
		first := Forever
		for _, e := range p.nodes[n].events {
			if e.reserve && e.start >= at && e.set&(1<<i) != 0 {
				first = min(first, e.start)
			}
		}
		latest = max(latest, first)
	}
	return latest
}

// heldTruth is a reservation start's value by its definition (see
// heldBefore), one GPU at a time: the earliest, over the GPUs of s, of
// the end of the last reservation of that GPU that ends by start; 0 when
// one has none.
func heldTruth(p *Profile, n topology.NodeID, s topology.GPUSet, start time.Duration) time.Duration {
	earliest := Forever
	for g := s; g != 0; g &= g - 1 {
		i := bits.TrailingZeros64(uint64(g))
		last := time.Duration(-1)
		for _, e := range p.nodes[n].reservations() {
			if e.end <= start && e.set&(1<<i) != 0 {
				last = max(last, e.end)
			}
		}
		if last < 0 {
			return 0
		}
		earliest = min(earliest, last)
	}
	return earliest
}

// AgainOf returns reservedAgainBy of node n's timeline entries at at.
func AgainOf(p *Profile, n topology.NodeID, at time.Duration) []time.Duration {
	var out []time.Duration
	p.flushTimeline()
	p.timeline.ends.From(timelineEntry{at: at, seq: -1}, func(evs []timelineEntry) bool {
		for _, e := range evs {
			if e.at > at {
				return false
			}
			if e.n == n {
				out = append(out, p.timeline.reservedAgainBy[e.seq])
			}
		}
		return true
	})
	return out
}

// LooseWindows returns how many loosened windows p keeps.
func LooseWindows(p *Profile) int { return len(p.memo.loose) }

// MaxLoose is maxLoose.
const MaxLoose = maxLoose

// WindowsBelow returns the spans that p.windowsBelow gives r for a run
// of d within [t, end), over every loosened window.
func WindowsBelow(p *Profile, r gang.Request, d, t, end time.Duration) [][2]time.Duration {
	ws, _ := p.windowsBelow(0, r, d, t, end)
	out := make([][2]time.Duration, len(ws))
	for i, w := range ws {
		out[i] = [2]time.Duration{w.from, w.to}
	}
	return out
}

// ShortRuns makes p, which must have no events yet, keep its timeline,
// its reservation starts and the ends of its whole-node windows (whose
// index takes the timeline's run length when it is built) in runs of at
// most k entries, so that tests with few events exercise what spans
// several runs.
func ShortRuns(p *Profile, k int) {
	p.timeline.ends, p.timeline.starts = newEvents(k), newEvents(k)
}

// EarliestWithin is the query Earliest makes once its remembered
// answers and counts have chosen where to start: the first start in
// [t, limit] (limit Forever: none), from the whole-node windows for a
// whole-node gang.
func EarliestWithin(p *Profile, r gang.Request, d time.Duration, s binpack.Scorer, t, limit time.Duration) (Start, bool) {
	d = run(d)
	p.sync()
	defer p.settle()
	return p.earliest(r, d, s, max(t, 0), limit)
}

// SweepWithin is Sweep up to limit.
func SweepWithin(p *Profile, r gang.Request, d time.Duration, s binpack.Scorer, t, limit time.Duration) (Start, bool) {
	return p.sweep(r, run(d), s, max(t, 0), limit)
}
