package preempt

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
	"pgregory.net/rapid"
)

// genDenseWorld draws a small, nearly full world where several victims
// are often needed: one to six nodes of two to eight GPUs of one or two
// types, zero to two levels, any node draining or down and any GPU
// unhealthy, and up to eight running jobs holding most GPUs in runs of
// one or two, each job on one or more nodes.
func genDenseWorld(t *rapid.T) *world {
	w := &world{c: &topology.Cluster{}}
	nl := rapid.IntRange(0, 2).Draw(t, "levels")
	w.c.Levels = []string{"spine", "leaf"}[:nl]
	types := []string{"H100", "A100"}[:rapid.IntRange(1, 2).Draw(t, "types")]
	nn := rapid.IntRange(1, 6).Draw(t, "nodes")
	for i := range nn {
		n := topology.Node{
			Name:    fmt.Sprintf("n%d", i),
			GPUs:    rapid.SampledFrom([]int{2, 3, 4, 4, 8, 8}).Draw(t, "gpus"),
			GPUType: rapid.SampledFrom(types).Draw(t, "type"),
			Domains: map[string]string{},
			State:   rapid.SampledFrom([]topology.NodeState{topology.Ready, topology.Ready, topology.Ready, topology.Ready, topology.Ready, topology.Draining, topology.Down}).Draw(t, "state"),
		}
		for _, l := range w.c.Levels {
			n.Domains[l] = fmt.Sprintf("d%d", rapid.IntRange(0, 2).Draw(t, "dom"))
		}
		for g := range n.GPUs {
			if rapid.IntRange(0, 15).Draw(t, "sick") == 0 {
				n.Unhealthy = append(n.Unhealthy, g)
			}
		}
		w.c.Nodes = append(w.c.Nodes, n)
	}
	ix := w.newIndex(t)
	k := rapid.IntRange(1, 8).Draw(t, "jobs")
	for j := range k {
		w.cands = append(w.cands, Candidate{
			ID:       fmt.Sprintf("j%d", j),
			Tier:     rapid.SampledFrom([]int{0, 1, 2, 2, 2, 3, 3, 3, 3, 3}).Draw(t, "tier"),
			WorkLost: time.Duration(rapid.IntRange(0, 2).Draw(t, "lost")) * time.Hour,
			Grace:    time.Duration(rapid.IntRange(0, 3).Draw(t, "grace")) * time.Minute,
			Borrowed: rapid.IntRange(0, 5).Draw(t, "borrowed") == 0,
		})
	}
	// Runs of one or two GPUs: mostly candidates', now and then free (-2)
	// or another job's (-1).
	w.cutIntoHolds(t, ix, 2, func() int {
		o := rapid.IntRange(-2, 2*k-1).Draw(t, "owner")
		if o >= k {
			o -= k
		}
		return o
	})
	w.r = gang.NewRequest(rapid.IntRange(1, 4).Draw(t, "members"), rapid.SampledFrom([]int{1, 2, 2, 3, 4}).Draw(t, "per"))
	if typ := rapid.SampledFrom(append([]string{""}, types...)).Draw(t, "want"); typ != "" {
		w.r.Class, _ = ix.Class(typ)
	}
	if nl > 0 {
		w.r.Required = level(t, nl, "required")
		w.r.Preferred = level(t, nl, "preferred")
	}
	w.s = rapid.SampledFrom([]binpack.Scorer{nil, binpack.Pack{}, binpack.Spread{}}).Draw(t, "scorer")
	w.tier = rapid.SampledFrom([]int{0, 0, 1, 2}).Draw(t, "preemptor")
	w.m = DefaultMatrix()
	return w
}

// level draws gang.NoLevel or one of nl levels.
func level(t *rapid.T, nl int, label string) int {
	if l := rapid.IntRange(-1, nl-1).Draw(t, label); l >= 0 {
		return l
	}
	return gang.NoLevel
}

// genOracleWorld is genWorld or genDenseWorld with the request options
// the plain worlds leave out: nodes to avoid, members on distinct nodes
// or domains, and a domain chooser.
func genOracleWorld(t *rapid.T) *world {
	var w *world
	if rapid.Bool().Draw(t, "dense") {
		w = genDenseWorld(t)
	} else {
		w = genWorld(t)
	}
	if rapid.Bool().Draw(t, "avoids") {
		avoid := map[topology.NodeID]bool{}
		for n := range len(w.c.Nodes) {
			if rapid.IntRange(0, 3).Draw(t, "avoid") == 0 {
				avoid[topology.NodeID(n)] = true
			}
		}
		w.r.Avoid = func(n topology.NodeID) bool { return avoid[n] }
	}
	if rapid.IntRange(0, 3).Draw(t, "distinct") == 0 {
		w.r.Distinct = true
		w.r.SpreadLevel = level(t, len(w.c.Levels), "spreadLevel")
	}
	if len(w.c.Levels) > 0 && rapid.IntRange(0, 3).Draw(t, "chooser") == 0 {
		w.r.Chooser = gang.ChooserFunc(func(_ *topology.Index, _ int, _ gang.Request, fits []topology.DomainID) topology.DomainID {
			return fits[len(fits)-1] // the worst fit
		})
	}
	return w
}

// fitsWithout reports whether the world's gang fits once the candidates
// sub[i], i in stopped, are stopped: every GPU they hold released, on a
// fresh index.
func (w *world) fitsWithout(t *rapid.T, sub []Candidate, stopped []int) bool {
	return placed(w.index(t, sub, stopped...), w)
}

// greedyOracle is the victim choice the package documents, computed by
// brute force on fresh indices: every eligible candidate but tier 0 in
// cost order (no filter of those that cannot help), freed one by one
// until the gang fits; then each victim, most expensive first, kept
// running when the gang still fits, in passes until none is kept. It
// returns the victims cheapest first and whether the gang fits at all.
func greedyOracle(t *rapid.T, w *world, sub []Candidate) ([]int, bool) {
	if w.fitsWithout(t, sub, nil) {
		return nil, true
	}
	var order []int
	for i := range sub {
		if sub[i].Tier != 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(Compare(&sub[a], &sub[b]), cmp.Compare(a, b))
	})
	var chosen []int
	fit := false
	for _, i := range order {
		chosen = append(chosen, i)
		if fit = w.fitsWithout(t, sub, chosen); fit {
			break
		}
	}
	if !fit {
		return nil, false
	}
	for dropped := true; dropped; {
		dropped = false
		for j := len(chosen) - 1; j >= 0; j-- {
			rest := slices.Delete(slices.Clone(chosen), j, j+1)
			if w.fitsWithout(t, sub, rest) {
				chosen, dropped = rest, true
			}
		}
	}
	return chosen, true
}

// Select chooses exactly the victims of the documented greedy and drop
// passes, replayed by brute force on fresh indices (for requests with
// and without Avoid, Distinct or a Chooser): its filter of candidates
// that cannot help and its counting from capacities change nothing.
func TestPropertySelectMatchesGreedyOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { selectAsGreedy(t, genOracleWorld(t)) })
}

// selectAsGreedy runs Select in w and fails t unless it answers as the
// documented greedy does by brute force and, when it makes room, places
// the gang validly; it returns the candidates, the victims and whether
// there was room.
func selectAsGreedy(t *rapid.T, w *world) ([]Candidate, []int, bool) {
	_, sub, victims, pl, ok := w.run(t)
	want, wantOK := greedyOracle(t, w, sub)
	if ok != wantOK || !slices.Equal(victims, want) {
		t.Fatalf("Select: %v %v; documented greedy by brute force: %v %v", ids(sub, victims), ok, ids(sub, want), wantOK)
	}
	if ok {
		if msg := checkPlacement(w.index(t, sub, victims...), w.r, pl); msg != "" {
			t.Fatalf("placement: %s", msg)
		}
	}
	return sub, victims, ok
}

// Select's victims are the cheapest set that makes room, comparing sets
// by their most expensive victim, then their next most expensive, and so
// on (a set that runs out first is cheaper). Cheap check: stopping every
// candidate cheaper than the dearest victim does not make room. Brute
// force, when at most eight candidates may be stopped: no subset of them
// that makes room is cheaper.
func TestPropertyVictimsCheapestSet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genOracleWorld(t)
		_, sub, victims, _, ok := w.run(t)
		if !ok || len(victims) == 0 {
			return
		}
		// key lists a set dearest first; cheaper compares two keys.
		key := func(set []int) []int {
			set = slices.Clone(set)
			slices.SortFunc(set, func(a, b int) int { return Compare(&sub[b], &sub[a]) })
			return set
		}
		cheaper := func(a, b []int) bool {
			for k := range min(len(a), len(b)) {
				if c := Compare(&sub[a[k]], &sub[b[k]]); c != 0 {
					return c < 0
				}
			}
			return len(a) < len(b)
		}
		got := key(victims)
		var below, all []int
		for i := range sub {
			if sub[i].Tier != 0 {
				all = append(all, i)
				if Compare(&sub[i], &sub[got[0]]) < 0 {
					below = append(below, i)
				}
			}
		}
		if w.fitsWithout(t, sub, below) {
			t.Fatalf("victims %v: stopping the %d candidates cheaper than %s makes room", ids(sub, got), len(below), sub[got[0]].ID)
		}
		if len(all) > 8 {
			return
		}
		for mask := 1; mask < 1<<len(all); mask++ {
			var set []int
			for k, i := range all {
				if mask&(1<<k) != 0 {
					set = append(set, i)
				}
			}
			if set = key(set); cheaper(set, got) && w.fitsWithout(t, sub, set) {
				t.Fatalf("victims %v: %v is cheaper and makes room", ids(sub, got), ids(sub, set))
			}
		}
	})
}

// The placement Select returns is where gang.Place puts the gang once
// the victims stop (every GPU they hold released, on a fresh index), as
// the package documents: with and without Avoid, Distinct or a Chooser.
func TestPropertyPlacementIsWhereGangLands(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genOracleWorld(t)
		_, sub, victims, pl, ok := w.run(t)
		if !ok {
			return
		}
		freed := w.index(t, sub, victims...)
		want, out := gang.Place(freed, w.r, w.s)
		if out != gang.Placed {
			t.Fatalf("victims %v: the gang does not fit once they stop (%v)", ids(sub, victims), out)
		}
		if want.Level != pl.Level || want.Domain != pl.Domain || !slices.Equal(want.Slots, pl.Slots) {
			t.Fatalf("victims %v: Select places the gang at %+v, gang.Place once they stop at %+v", ids(sub, victims), pl, want)
		}
	})
}

// trim drops a random part of each candidate's holds from Holds (as the
// scheduler leaves out GPUs reserved for others); the dropped GPUs stay
// held in the index (they move to w.other) and Size keeps the count.
func trim(t *rapid.T, w *world) {
	for i := range w.cands {
		c := &w.cands[i]
		n := c.NumGPUs()
		var keep []Hold
		for _, h := range c.Holds {
			var drop topology.GPUSet
			for _, g := range h.GPUs.Indices() {
				if rapid.IntRange(0, 3).Draw(t, "drop") == 0 {
					drop |= topology.SetOf(g)
				}
			}
			if drop != 0 {
				w.other = append(w.other, Hold{Node: h.Node, GPUs: drop})
			}
			if rest := h.GPUs &^ drop; rest != 0 {
				keep = append(keep, Hold{Node: h.Node, GPUs: rest, CPUMillis: h.CPUMillis, MemoryMiB: h.MemoryMiB})
			} else if h.CPUMillis != 0 || h.MemoryMiB != 0 {
				w.other = append(w.other, Hold{Node: h.Node, CPUMillis: h.CPUMillis, MemoryMiB: h.MemoryMiB})
			}
		}
		if got := (&Candidate{Holds: keep}).NumGPUs(); got != n {
			c.Holds, c.Size = keep, n
		}
	}
}

// genTrimmedWorld is genOracleWorld with holds trimmed (see trim) and,
// now and then, a request for distinct nodes that some nodes already
// hold a member of (Occupied).
func genTrimmedWorld(t *rapid.T) *world {
	w := genOracleWorld(t)
	if rapid.IntRange(0, 3).Draw(t, "occupied") == 0 {
		occ := map[topology.NodeID]bool{}
		for n := range len(w.c.Nodes) {
			occ[topology.NodeID(n)] = rapid.IntRange(0, 2).Draw(t, "occ") == 0
		}
		w.r.Distinct = true
		w.r.SpreadLevel = gang.NoLevel
		w.r.Occupied = func(n topology.NodeID) bool { return occ[n] }
	}
	trim(t, w)
	return w
}

// TestTrimmedHoldsMatchGreedyOracle: with candidates whose Holds leave
// out GPUs they still hold (Size keeps the count, as the scheduler's do
// for GPUs reserved for others) and occupied nodes, Select agrees with the
// greedy oracle, places validly, and needs every victim it names.
func TestTrimmedHoldsMatchGreedyOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genTrimmedWorld(t)
		sub, victims, ok := selectAsGreedy(t, w)
		if !ok {
			return
		}
		for k, v := range victims {
			rest := slices.Delete(slices.Clone(victims), k, k+1)
			if w.fitsWithout(t, sub, rest) {
				t.Fatalf("victims %v: fits without %s", ids(sub, victims), sub[v].ID)
			}
		}
	})
}

// genBigWorld draws nodes of 16 to 64 GPUs (up to the top of a GPUSet)
// and members of up to 64.
func genBigWorld(t *rapid.T) *world {
	w := &world{c: &topology.Cluster{}}
	nl := rapid.IntRange(0, 2).Draw(t, "levels")
	w.c.Levels = []string{"spine", "leaf"}[:nl]
	nn := rapid.IntRange(1, 8).Draw(t, "nodes")
	for i := range nn {
		n := topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: rapid.SampledFrom([]int{16, 33, 63, 64}).Draw(t, "gpus"),
			GPUType: "H100", Domains: map[string]string{}}
		for _, l := range w.c.Levels {
			n.Domains[l] = fmt.Sprintf("d%d", rapid.IntRange(0, 1).Draw(t, "dom"))
		}
		if rapid.IntRange(0, 5).Draw(t, "sick") == 0 {
			n.Unhealthy = []int{n.GPUs - 1}
		}
		w.c.Nodes = append(w.c.Nodes, n)
	}
	ix := w.newIndex(t)
	k := rapid.IntRange(1, 8).Draw(t, "jobs")
	for j := range k {
		w.cands = append(w.cands, Candidate{ID: fmt.Sprintf("j%d", j), Tier: rapid.IntRange(1, 3).Draw(t, "tier"),
			WorkLost: time.Duration(rapid.IntRange(0, 2).Draw(t, "lost")) * time.Hour})
	}
	w.cutIntoHolds(t, ix, 0, func() int { return rapid.IntRange(-2, k-1).Draw(t, "owner") })
	w.r = gang.NewRequest(rapid.IntRange(1, 4).Draw(t, "members"), rapid.SampledFrom([]int{1, 7, 16, 32, 63, 64}).Draw(t, "per"))
	if nl > 0 {
		w.r.Required = level(t, nl, "required")
	}
	w.s = rapid.SampledFrom([]binpack.Scorer{nil, binpack.Spread{}}).Draw(t, "scorer")
	w.tier = 0
	w.m = DefaultMatrix()
	return w
}

// TestBigNodesMatchGreedyOracle: on nodes of up to 64 GPUs Select agrees
// with the greedy oracle and places validly.
func TestBigNodesMatchGreedyOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		selectAsGreedy(t, genBigWorld(t))
	})
}
