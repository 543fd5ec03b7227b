package preempt

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
	"pgregory.net/rapid"
)

// world is a random cluster with running jobs. Every held GPU belongs to
// one job; jobs listed in cands are candidates, the rest (owner -1) are
// held by jobs that are not.
type world struct {
	c     *topology.Cluster
	cands []Candidate // Holds use NodeIDs of an index built from c
	other []Hold      // GPUs held by non-candidates
	r     gang.Request
	s     binpack.Scorer
	tier  int
	m     Matrix
}

// cutIntoHolds cuts each node of ix into runs of GPUs, of at most maxRun
// GPUs each (0: any length), and gives each run to owner(): candidate
// k >= 0, another job (-1, into w.other), or nobody (-2).
func (w *world) cutIntoHolds(t *rapid.T, ix *topology.Index, maxRun int, owner func() int) {
	for n := topology.NodeID(0); int(n) < ix.NumNodes(); n++ {
		byOwner := map[int]topology.GPUSet{}
		for g := 0; g < ix.GPUs(n); {
			hi := ix.GPUs(n) - g
			if maxRun > 0 {
				hi = min(hi, maxRun)
			}
			run := rapid.IntRange(1, hi).Draw(t, "run")
			if o := owner(); o >= -1 {
				byOwner[o] |= topology.FirstN(g+run) &^ topology.FirstN(g)
			}
			g += run
		}
		for o := -1; o < len(w.cands); o++ {
			if set := byOwner[o]; set != 0 {
				if o < 0 {
					w.other = append(w.other, Hold{Node: n, GPUs: set})
				} else {
					w.cands[o].Holds = append(w.cands[o].Holds, Hold{Node: n, GPUs: set})
				}
			}
		}
	}
}

func genWorld(t *rapid.T) *world {
	w := &world{c: &topology.Cluster{}}
	nl := rapid.IntRange(0, 2).Draw(t, "levels")
	w.c.Levels = []string{"spine", "leaf"}[:nl]
	types := rapid.SampledFrom([][]string{{"H100"}, {"H100", "A100"}}).Draw(t, "types")
	nn := rapid.IntRange(1, 32).Draw(t, "nodes")
	for i := 0; i < nn; i++ {
		n := topology.Node{
			Name:    fmt.Sprintf("n%02d", i),
			GPUs:    rapid.SampledFrom([]int{4, 8}).Draw(t, "gpus"),
			GPUType: rapid.SampledFrom(types).Draw(t, "type"),
			Domains: map[string]string{},
		}
		if nl > 0 {
			n.Domains["spine"] = fmt.Sprintf("s%d", rapid.IntRange(0, 1).Draw(t, "spine"))
		}
		if nl > 1 {
			n.Domains["leaf"] = fmt.Sprintf("l%d", rapid.IntRange(0, 2).Draw(t, "leaf"))
		}
		if rapid.IntRange(0, 9).Draw(t, "odd") == 0 {
			n.State = rapid.SampledFrom([]topology.NodeState{topology.Draining, topology.Down}).Draw(t, "state")
		}
		if rapid.IntRange(0, 9).Draw(t, "sick") == 0 {
			n.Unhealthy = []int{rapid.IntRange(0, n.GPUs-1).Draw(t, "bad")}
		}
		w.c.Nodes = append(w.c.Nodes, n)
	}
	ix := w.newIndex(t)

	k := rapid.IntRange(1, 12).Draw(t, "jobs")
	for j := 0; j < k; j++ {
		w.cands = append(w.cands, Candidate{
			ID:       fmt.Sprintf("j%02d", j),
			Tier:     rapid.SampledFrom([]int{0, 1, 2, 2, 3, 3, 3}).Draw(t, "tier"),
			WorkLost: time.Duration(rapid.IntRange(0, 5).Draw(t, "lost")) * time.Hour,
			Grace:    time.Duration(rapid.IntRange(0, 10).Draw(t, "grace")) * time.Minute,
			Borrowed: rapid.IntRange(0, 4).Draw(t, "borrowed") == 0,
		})
	}
	// Each node is cut into runs of GPUs; each run is free, held by a
	// candidate, or held by some other job.
	w.cutIntoHolds(t, ix, 0, func() int { return rapid.IntRange(-2, k-1).Draw(t, "owner") })

	w.r = gang.NewRequest(rapid.IntRange(1, min(6, nn)).Draw(t, "members"), rapid.SampledFrom([]int{1, 2, 3, 4, 8}).Draw(t, "per"))
	if typ := rapid.SampledFrom(append([]string{""}, types...)).Draw(t, "want"); typ != "" {
		w.r.Class, _ = ix.Class(typ)
	}
	if nl > 0 {
		w.r.Required = rapid.IntRange(gang.NoLevel, nl-1).Draw(t, "required")
		if w.r.Required == -1 {
			w.r.Required = gang.NoLevel
		}
		w.r.Preferred = rapid.IntRange(gang.NoLevel, nl-1).Draw(t, "preferred")
		if w.r.Preferred == -1 {
			w.r.Preferred = gang.NoLevel
		}
	}
	w.s = rapid.SampledFrom([]binpack.Scorer{nil, binpack.Pack{}, binpack.Spread{}}).Draw(t, "scorer")
	w.tier = rapid.SampledFrom([]int{0, 0, 0, 1, 1, 2, 3}).Draw(t, "preemptor")
	w.m = DefaultMatrix()
	if rapid.Bool().Draw(t, "custom") {
		w.m = Ordered(4)
		for p := range w.m {
			for v := 1; v < 4; v++ {
				w.m[p][v] = p != v && rapid.Bool().Draw(t, "cell")
			}
		}
	}
	return w
}

// index builds the world's index with every GPU held except those of the
// candidates cands[i] for i in without (cands is a subset of w.cands).
func (w *world) index(t *rapid.T, cands []Candidate, without ...int) *topology.Index {
	skip := map[string]bool{}
	for _, i := range without {
		skip[cands[i].ID] = true
	}
	ix := w.newIndex(t)
	for _, h := range w.other {
		if err := ix.TakeSet(h.Node, h.GPUs); err != nil {
			t.Fatalf("TakeSet: %v", err)
		}
		ix.AddUse(h.Node, h.CPUMillis, h.MemoryMiB)
	}
	for _, c := range w.cands {
		if skip[c.ID] {
			continue
		}
		for _, h := range c.Holds {
			if err := ix.TakeSet(h.Node, h.GPUs); err != nil {
				t.Fatalf("TakeSet: %v", err)
			}
			ix.AddUse(h.Node, h.CPUMillis, h.MemoryMiB)
		}
	}
	return ix
}

// run filters the candidates with Eligible and runs Select on the rest.
func (w *world) run(t *rapid.T) (ix *topology.Index, sub []Candidate, victims []int, pl gang.Placement, ok bool) {
	ix = w.index(t, w.cands)
	for _, i := range Eligible(w.m, w.tier, w.cands) {
		sub = append(sub, w.cands[i])
	}
	victims, pl, ok = Select(ix, w.r, w.s, sub)
	return ix, sub, victims, pl, ok
}

func placed(ix *topology.Index, w *world) bool {
	p, out := gang.Place(ix, w.r, w.s)
	if out == gang.Placed {
		p.Release(ix)
	}
	return out == gang.Placed
}

// (a) Victims obey the matrix and tier 0 is never a victim.
func TestPropertyVictimsObeyMatrix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		_, sub, victims, _, _ := w.run(t)
		for _, v := range victims {
			if sub[v].Tier == 0 || !w.m.CanPreempt(w.tier, sub[v].Tier) {
				t.Fatalf("victim %s of tier %d for a tier-%d preemptor (matrix %v)", sub[v].ID, sub[v].Tier, w.tier, w.m)
			}
		}
		if len(slices.Compact(slices.Sorted(slices.Values(victims)))) != len(victims) {
			t.Fatalf("victim listed twice: %v", victims)
		}
	})
}

// (b) Removing any one victim leaves the preemptor unable to fit.
func TestPropertyVictimsMinimal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		_, sub, victims, _, ok := w.run(t)
		if !ok {
			return
		}
		for k, v := range victims {
			rest := slices.Delete(slices.Clone(victims), k, k+1)
			if placed(w.index(t, sub, rest...), w) {
				t.Fatalf("victims %v: the gang fits without stopping %s", ids(sub, victims), sub[v].ID)
			}
		}
	})
}

// (c) A gang that fits without preemption gets no victims.
func TestPropertyNoVictimsWhenItFits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		ix := w.index(t, w.cands)
		fits := placed(ix, w)
		_, sub, victims, _, ok := w.run(t)
		if fits && (!ok || len(victims) > 0) {
			t.Fatalf("fits now, but Select = %v, %v", ids(sub, victims), ok)
		}
	})
}

// (d) Select leaves the index as it found it.
func TestPropertyIndexUnchanged(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		ix := w.index(t, w.cands)
		before := snap(ix)
		var sub []Candidate
		for _, i := range Eligible(w.m, w.tier, w.cands) {
			sub = append(sub, w.cands[i])
		}
		Select(ix, w.r, w.s, sub)
		after := snap(ix)
		for n := range before.free {
			if before.free[n] != after.free[n] || before.held[n] != after.held[n] {
				t.Fatalf("node %d: free %v -> %v, held %v -> %v", n,
					before.free[n].Indices(), after.free[n].Indices(), before.held[n].Indices(), after.held[n].Indices())
			}
		}
		if !slices.Equal(before.counts, after.counts) {
			t.Fatalf("domain counts changed")
		}
	})
}

// (e) The placement is valid on the index minus the victims; and (f)
// when Select finds nothing, stopping every eligible job would not help.
func TestPropertyPlacementValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		_, sub, victims, pl, ok := w.run(t)
		if !ok {
			var all []int
			for i := range sub {
				if sub[i].Tier != 0 {
					all = append(all, i)
				}
			}
			if placed(w.index(t, sub, all...), w) {
				t.Fatalf("no victims found, but stopping all %d eligible jobs makes room", len(all))
			}
			return
		}
		freed := w.index(t, sub, victims...)
		if msg := checkPlacement(freed, w.r, pl); msg != "" {
			t.Fatalf("placement %v after stopping %v: %s", pl.Slots, ids(sub, victims), msg)
		}
	})
}

// The answer does not depend on the order of the candidates.
func TestPropertyOrderIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		ix, sub, victims, _, ok := w.run(t)
		perm := rapid.Permutation(sub).Draw(t, "perm")
		victims2, _, ok2 := Select(ix, w.r, w.s, perm)
		a, b := ids(sub, victims), ids(perm, victims2)
		if ok != ok2 || !slices.Equal(a, b) {
			t.Fatalf("victims %v (%v), after shuffling %v (%v)", a, ok, b, ok2)
		}
	})
}

// The upper bound counted from capacities agrees with the one found by
// releasing every candidate's GPUs in the index: whether the gang would
// fit, and which nodes would help.
func TestPropertyUpperBoundCounted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		ix := w.index(t, w.cands)
		if placed(ix, w) {
			return // Select answers at once; the bound is not used
		}
		var holds []hold
		for _, c := range w.cands {
			for _, h := range c.Holds {
				if ix.State(h.Node) == topology.Ready && ix.InClass(h.Node, w.r.Class) {
					if set := h.GPUs & ix.Held(h.Node) & ix.Healthy(h.Node); set != 0 {
						holds = append(holds, hold{node: h.Node, set: set})
					}
				}
			}
		}
		var sc Selector
		helps, ok := sc.upperBound(ix, w.r, holds)
		v := &view{ix: ix}
		v.release(holds)
		want := placed(ix, w)
		if ok != want {
			t.Fatalf("upperBound says fits %v, releasing every candidate says %v", ok, want)
		}
		if !ok {
			return
		}
		released := helpsReleased(ix, w.r)
		for _, h := range holds {
			if helps(h.node) != released(h.node) {
				t.Fatalf("node %d: counted helps %v, released helps %v", h.node, helps(h.node), released(h.node))
			}
		}
		v.restore()
	})
}

// Select's answer does not depend on which path it takes: a request that
// avoids no node takes the release-and-place path, and gets the same
// victims and placement as the plain request, which is counted.
func TestPropertyAvoidNothingSameAnswer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		ix, sub, victims, pl, ok := w.run(t)
		r := w.r
		r.Avoid = func(topology.NodeID) bool { return false }
		v2, pl2, ok2 := Select(ix, r, w.s, sub)
		if ok != ok2 || !slices.Equal(victims, v2) || !slices.EqualFunc(pl.Slots, pl2.Slots, func(a, b gang.Slot) bool { return a == b }) {
			t.Fatalf("plain: %v %v %+v; avoiding nothing: %v %v %+v", ok, victims, pl.Slots, ok2, v2, pl2.Slots)
		}
	})
}

// A Selector used for many searches answers each as a fresh Select does:
// its scratch space carries nothing from one search to the next, and
// what it returned earlier does not change under later searches.
func TestPropertySelectorReuse(t *testing.T) {
	type answer struct {
		victims []int
		pl      gang.Placement
		ok      bool
	}
	same := func(a, b answer) bool {
		return a.ok == b.ok && slices.Equal(a.victims, b.victims) && a.pl.Level == b.pl.Level && a.pl.Domain == b.pl.Domain &&
			slices.EqualFunc(a.pl.Slots, b.pl.Slots, func(x, y gang.Slot) bool { return x == y })
	}
	clone := func(a answer) answer {
		a.victims = slices.Clone(a.victims)
		a.pl.Slots = slices.Clone(a.pl.Slots)
		return a
	}
	rapid.Check(t, func(t *rapid.T) {
		var sc Selector
		var got, want []answer
		for range rapid.IntRange(1, 4).Draw(t, "searches") {
			w := genWorld(t)
			ix, sub, victims, pl, ok := w.run(t)
			before := ix.Clone()
			v2, pl2, ok2 := sc.Select(ix, w.r, w.s, sub)
			fresh, reused := answer{victims, pl, ok}, answer{v2, pl2, ok2}
			if !same(fresh, reused) {
				t.Fatalf("fresh: %+v; reused: %+v", fresh, reused)
			}
			for n := range topology.NodeID(ix.NumNodes()) {
				if ix.Held(n) != before.Held(n) {
					t.Fatalf("node %d: held %v after a reused search, %v before", n, ix.Held(n), before.Held(n))
				}
			}
			got, want = append(got, reused), append(want, clone(fresh))
		}
		for i := range got {
			if !same(got[i], want[i]) {
				t.Fatalf("search %d: its answer changed to %+v under later searches, was %+v", i, got[i], want[i])
			}
		}
	})
}

// newIndex indexes w's cluster, failing t if it is not valid.
func (w *world) newIndex(t *rapid.T) *topology.Index {
	ix, err := topology.NewIndex(w.c)
	if err != nil {
		t.Fatalf("NewIndex: %v", err)
	}
	return ix
}
