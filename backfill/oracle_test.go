package backfill_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// oracle is a slow, obviously correct availability profile: it keeps
// every event in plain lists and evaluates the usability rule node by
// node at each candidate time.
type oracle struct {
	ix       *topology.Index // read only for node facts
	freeNow  []topology.GPUSet
	releases []event
	reserved []event
	// placing: judge a start now by GPUs free now alone, as PlaceNow
	// does; GPUs released at 0 stay held in the index.
	placing bool
}

// firstReserved is the first start of a reservation of a GPU of s on
// node n (Forever when none): a release of s may move no later.
func (o *oracle) firstReserved(n topology.NodeID, s topology.GPUSet) time.Duration {
	at := backfill.Forever
	for _, e := range o.reserved {
		if e.n == n && e.set&s != 0 {
			at = min(at, e.start)
		}
	}
	return at
}

type event struct {
	n          topology.NodeID
	set        topology.GPUSet
	start, end time.Duration // a release has start == end == its time
}

func plus(a, b time.Duration) time.Duration {
	if a == backfill.Forever || b == backfill.Forever || a > backfill.Forever-b {
		return backfill.Forever
	}
	return a + b
}

// usable is the rule: free now or released by t, and reserved at no
// moment of [t, t+d); healthy GPUs of ready nodes only. A release at or
// before 0 counts from 0 on, except for a start now by PlaceNow.
func (o *oracle) usable(n topology.NodeID, t, d time.Duration) topology.GPUSet {
	if o.ix.State(n) != topology.Ready {
		return 0
	}
	u := o.freeNow[n]
	for _, e := range o.releases {
		if e.n == n && e.start <= t && !o.placing {
			u |= e.set
		}
	}
	for _, e := range o.reserved {
		if e.n == n && e.start < plus(t, d) && e.end > t {
			u &^= e.set
		}
	}
	return u & o.ix.Healthy(n)
}

// fits reports whether r fits at t for d: some domain of its outermost
// allowed level holds Members members on usable GPUs of its class.
func (o *oracle) fits(r gang.Request, t, d time.Duration) bool {
	level := topology.ClusterLevel
	if r.Required != gang.NoLevel {
		level = r.Required
	}
	for dom := range topology.DomainID(o.ix.NumDomains(level)) {
		members := 0
		for n := range topology.NodeID(o.ix.NumNodes()) {
			if o.ix.InClass(n, r.Class) && (level == topology.ClusterLevel || o.ix.DomainOf(level, n) == dom) && (r.Avoid == nil || !r.Avoid(n)) {
				members += o.usable(n, t, d).Len() / r.GPUsPerMember
			}
		}
		if members >= r.Members {
			return true
		}
	}
	return false
}

// earliest tries every moment at which capacity can grow: notBefore,
// each release and each reservation end after it.
func (o *oracle) earliest(r gang.Request, d, notBefore time.Duration) (time.Duration, bool) {
	var ends []time.Duration
	for _, e := range append(slices.Clone(o.releases), o.reserved...) {
		ends = append(ends, e.end)
	}
	return firstFitting(notBefore, ends, func(t time.Duration) bool { return o.fits(r, t, d) })
}

// firstFitting returns the first of notBefore and the moments of ends
// after it (Forever left out) at which fits holds: the moments at which
// capacity can grow, tried in order.
func firstFitting(notBefore time.Duration, ends []time.Duration, fits func(time.Duration) bool) (time.Duration, bool) {
	ts := []time.Duration{notBefore}
	for _, e := range ends {
		if e > notBefore && e != backfill.Forever {
			ts = append(ts, e)
		}
	}
	slices.Sort(ts)
	for _, t := range ts {
		if fits(t) {
			return t, true
		}
	}
	return 0, false
}

// checkPlacement fails unless pl is r, whole, on GPUs usable at t for d,
// inside one domain of r's required level.
func (o *oracle) checkPlacement(t *rapid.T, r gang.Request, pl gang.Placement, at, d time.Duration) {
	members := 0
	for _, s := range pl.Slots {
		if s.GPUs.Len() != s.Members*r.GPUsPerMember {
			t.Fatalf("slot %+v: %d GPUs for %d members of %d", s, s.GPUs.Len(), s.Members, r.GPUsPerMember)
		}
		if u := o.usable(s.Node, at, d); s.GPUs&^u != 0 {
			t.Fatalf("slot on %s at %s uses GPUs %v, usable are %v", o.ix.Name(s.Node), at, s.GPUs.Indices(), u.Indices())
		}
		if !o.ix.InClass(s.Node, r.Class) {
			t.Fatalf("slot on %s of the wrong class", o.ix.Name(s.Node))
		}
		if r.Avoid != nil && r.Avoid(s.Node) {
			t.Fatalf("slot on %s, which the request avoids", o.ix.Name(s.Node))
		}
		if r.Required != gang.NoLevel && o.ix.DomainOf(r.Required, s.Node) != o.ix.DomainOf(r.Required, pl.Slots[0].Node) {
			t.Fatalf("slots in two domains of level %d", r.Required)
		}
		members += s.Members
	}
	if members != r.Members {
		t.Fatalf("placed %d members, want %d", members, r.Members)
	}
}

// placeNow asks p to start r now for d, checks the answer against the
// oracle, and records the placement in the oracle too.
func (o *oracle) placeNow(t *rapid.T, p *backfill.Profile, r gang.Request, d time.Duration) {
	o.placing = true
	defer func() { o.placing = false }()
	want := o.fits(r, 0, d)
	pl, out := p.PlaceNow(r, d, nil)
	if (out == gang.Placed) != want {
		t.Fatalf("PlaceNow(%+v, %s) = %s, oracle says fits %v", r, d, out, want)
	}
	if out != gang.Placed {
		return
	}
	o.checkPlacement(t, r, pl, 0, d)
	for _, s := range pl.Slots {
		o.freeNow[s.Node] &^= s.GPUs
		// A release the GPUs still had is of a job that ended early:
		// the placed job holds them until d.
		o.moveRelease(s.Node, s.GPUs, d)
	}
}

// moveRelease records what MoveRelease(n, s, at) records: s is released
// reserve reserves pl from at for a run of d in p, and records it.
func (o *oracle) reserve(p *backfill.Profile, pl gang.Placement, at, d time.Duration) {
	p.Reserve(pl, at, d)
	for _, s := range pl.Slots {
		o.reserved = append(o.reserved, event{n: s.Node, set: s.GPUs, start: at, end: plus(at, max(d, 1))})
	}
}

// at at (never, at Forever), and by no earlier release.
func (o *oracle) moveRelease(n topology.NodeID, s topology.GPUSet, at time.Duration) {
	for i := range o.releases {
		if o.releases[i].n == n {
			o.releases[i].set &^= s
		}
	}
	if at != backfill.Forever {
		o.releases = append(o.releases, event{n: n, set: s, start: at, end: at})
	}
}

// query draws a start not before which to look (now, mostly) and, a
// third of the time, a horizon, asks p for r's earliest start for d, and
// checks it against the oracle, the index left as it was and p's
// invariants. Two times in three it then reserves the answer in both.
func (o *oracle) query(t *rapid.T, p *backfill.Profile, r gang.Request, d time.Duration) {
	notBefore := time.Duration(0)
	if rapid.IntRange(0, 3).Draw(t, "later") == 0 {
		notBefore = time.Duration(rapid.IntRange(1, 20).Draw(t, "notBefore")) * 15 * time.Minute
	}
	before := heldAll(o.ix)
	at, want := o.earliest(r, d, notBefore)
	var st backfill.Start
	var ok bool
	if rapid.IntRange(0, 2).Draw(t, "bounded") == 0 {
		// A bounded query: a start no later than by, or none. Its misses
		// are remembered as bounds for later queries.
		by := time.Duration(rapid.IntRange(0, 24).Draw(t, "by")) * 15 * time.Minute
		st, ok = p.EarliestBy(r, d, nil, notBefore, by)
		if want && at > by {
			want = false
		}
		if ok != want || ok && st.At != at {
			t.Fatalf("EarliestBy(%+v, %s, from %s, by %s) = %s (ok %v), oracle %s (ok %v)", r, d, notBefore, by, st.At, ok, at, want)
		}
	} else {
		st, ok = p.Earliest(r, d, nil, notBefore)
		if ok != want || ok && st.At != at {
			t.Fatalf("Earliest(%+v, %s, from %s) = %s (ok %v), oracle %s (ok %v)", r, d, notBefore, st.At, ok, at, want)
		}
	}
	if !slices.Equal(before, heldAll(o.ix)) {
		t.Fatalf("Earliest changed the index")
	}
	if err := backfill.CheckInvariants(p); err != nil {
		t.Fatal(err)
	}
	if !ok || rapid.IntRange(0, 2).Draw(t, "skipReserve") == 0 {
		return
	}
	o.checkPlacement(t, r, st.Placement, st.At, d)
	p.Reserve(st.Placement, st.At, d)
	for _, s := range st.Placement.Slots {
		o.reserved = append(o.reserved, event{n: s.Node, set: s.GPUs, start: st.At, end: plus(st.At, d)})
	}
}

func heldAll(ix *topology.Index) []topology.GPUSet {
	out := make([]topology.GPUSet, ix.NumNodes())
	for n := range out {
		out[n] = ix.Held(topology.NodeID(n))
	}
	return out
}

func drawDuration(t *rapid.T, label string) time.Duration {
	if rapid.IntRange(0, 4).Draw(t, label+"Forever") == 0 {
		return backfill.Forever
	}
	return time.Duration(rapid.IntRange(1, 20).Draw(t, label)) * 30 * time.Minute
}

func drawRequest(t *rapid.T, ix *topology.Index) gang.Request {
	g := min(rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus"), ix.MaxGPUs())
	r := gang.NewRequest(rapid.IntRange(1, 12).Draw(t, "members"), g)
	if rapid.Bool().Draw(t, "typed") {
		r.Class, _ = ix.Class(rapid.SampledFrom(ix.Types()).Draw(t, "type"))
	}
	if nl := ix.NumLevels(); nl > 0 && rapid.Bool().Draw(t, "topo") {
		r.Required = rapid.IntRange(0, nl-1).Draw(t, "required")
		if rapid.Bool().Draw(t, "prefers") {
			r.Preferred = rapid.IntRange(r.Required, nl-1).Draw(t, "preferred")
		}
	}
	if rapid.IntRange(0, 5).Draw(t, "avoids") == 0 {
		// Avoiding nodes: no answer is remembered, and no count of free
		// GPUs over time need be built before a reservation.
		avoid := rapid.Uint64().Draw(t, "avoided")
		r.Avoid = func(n topology.NodeID) bool { return n < 64 && avoid&(1<<n) != 0 }
	}
	return r
}

// TestProfileAgreesWithOracle: over a random index with random releases,
// a random sequence of PlaceNow and Earliest+Reserve calls gives the same
// answers as the oracle (same earliest time, a placement usable by its
// rule), and Earliest leaves the index as it was.
func TestProfileAgreesWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix, p, o := drawWorld(t)
		for range rapid.IntRange(1, 8).Draw(t, "calls") {
			r := drawRequest(t, ix)
			d := drawDuration(t, "limit")
			if rapid.Bool().Draw(t, "now") {
				o.placeNow(t, p, r, d)
				continue
			}
			notBefore := time.Duration(0)
			if rapid.Bool().Draw(t, "later") {
				notBefore = time.Duration(rapid.IntRange(1, 20).Draw(t, "notBefore")) * 15 * time.Minute
			}
			before := heldAll(ix)
			st, ok := p.Earliest(r, d, nil, notBefore)
			if !slices.Equal(before, heldAll(ix)) {
				t.Fatalf("Earliest changed the index")
			}
			if err := backfill.CheckInvariants(p); err != nil {
				t.Fatal(err)
			}
			at, want := o.earliest(r, d, notBefore)
			if ok != want || ok && st.At != at {
				t.Fatalf("Earliest(%+v, %s, from %s) = %s (ok %v), oracle %s (ok %v)", r, d, notBefore, st.At, ok, at, want)
			}
			if !ok {
				continue
			}
			o.checkPlacement(t, r, st.Placement, st.At, d)
			p.Reserve(st.Placement, st.At, d)
			for _, s := range st.Placement.Slots {
				o.reserved = append(o.reserved, event{n: s.Node, set: s.GPUs, start: st.At, end: plus(st.At, d)})
			}
			// Now and then the same GPUs again, right after: a stacked
			// reservation, which the profile keeps as one longer event.
			end := plus(st.At, d)
			if end == backfill.Forever || !rapid.Bool().Draw(t, "stack") {
				continue
			}
			d2 := drawDuration(t, "stacked")
			usable := true
			for _, s := range st.Placement.Slots {
				if s.GPUs&^o.usable(s.Node, end, d2) != 0 {
					usable = false
				}
			}
			if !usable {
				continue
			}
			p.Reserve(st.Placement, end, d2)
			for _, s := range st.Placement.Slots {
				o.reserved = append(o.reserved, event{n: s.Node, set: s.GPUs, start: end, end: plus(end, d2)})
			}
		}
	})
}

// newWorld indexes c, every GPU free, and returns the index, a profile
// over it and an oracle that knows nothing yet.
func newWorld(t *rapid.T, c *topology.Cluster) (*topology.Index, *backfill.Profile, *oracle) {
	ix, err := topology.NewIndex(c)
	if err != nil {
		t.Fatal(err)
	}
	p := backfill.NewProfile(ix)
	if k := rapid.IntRange(1, 9).Draw(t, "runs"); k <= 8 {
		backfill.ShortRuns(p, k) // several runs even with few events
	}
	return ix, p, &oracle{ix: ix, freeNow: make([]topology.GPUSet, ix.NumNodes())}
}

// drawWorld draws a cluster with random held GPUs, each node's held GPUs
// split into two jobs with random release times, and returns its index,
// a profile over it and the oracle that knows the same releases.
func drawWorld(t *rapid.T) (*topology.Index, *backfill.Profile, *oracle) {
	c := gen.Cluster(t)
	return drawHolds(t, &c)
}

// drawHolds is drawWorld on the cluster c.
func drawHolds(t *rapid.T, c *topology.Cluster) (*topology.Index, *backfill.Profile, *oracle) {
	return drawHoldsReleased(t, c, func(t *rapid.T) time.Duration {
		at := drawDuration(t, "release")
		if rapid.IntRange(0, 5).Draw(t, "releasedNow") == 0 {
			at = time.Duration(rapid.IntRange(-1, 0).Draw(t, "nowOrBefore")) // released now: held, usable from 0
		}
		return at
	})
}

// drawHoldsReleased is drawHolds with the moment of each release drawn by
// release (Forever: never).
func drawHoldsReleased(t *rapid.T, c *topology.Cluster, release func(t *rapid.T) time.Duration) (*topology.Index, *backfill.Profile, *oracle) {
	ix, p, o := newWorld(t, c)
	for n := range topology.NodeID(ix.NumNodes()) {
		busy := topology.GPUSet(rapid.Uint64Range(0, uint64(topology.FirstN(ix.GPUs(n)))).Draw(t, "held"))
		if rapid.Bool().Draw(t, "idle") {
			busy = 0
		}
		if err := ix.TakeSet(n, busy); err != nil {
			t.Fatal(err)
		}
		first := busy.Lowest(rapid.IntRange(0, busy.Len()).Draw(t, "split"))
		for _, s := range []topology.GPUSet{first, busy &^ first} {
			if s == 0 {
				continue
			}
			at := release(t)
			p.AddRelease(n, s, at)
			if at != backfill.Forever {
				o.releases = append(o.releases, event{n: n, set: s, start: at, end: at})
			}
		}
		o.freeNow[n] = ix.FreeSet(n)
	}
	return ix, p, o
}

// TestCrowdedProfileAgreesWithOracle: dozens of reservations on one to
// three nodes, for runs of random lengths, so that the cursors move both
// ways past reservations stacked behind earlier ones on the same GPUs
// (where a move leaves nodes alone on the word of the entries it
// passes), and every answer agrees with the oracle. (Moved releases and
// live changes are TestMovesKeepCursorsExact's.)
func TestCrowdedProfileAgreesWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c topology.Cluster
		for i := range rapid.IntRange(1, 3).Draw(t, "nodes") {
			c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8, GPUType: "H100"})
		}
		ix, p, o := drawHolds(t, &c)
		for range rapid.IntRange(20, 80).Draw(t, "calls") {
			g := rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")
			r := gang.NewRequest(rapid.IntRange(1, max(1, ix.NumNodes()*8/g/2)).Draw(t, "members"), g)
			d := time.Duration(rapid.IntRange(1, 16).Draw(t, "limit")) * 15 * time.Minute
			if rapid.IntRange(0, 9).Draw(t, "forever") == 0 {
				d = backfill.Forever
			}
			o.query(t, p, r, d)
		}
	})
}
