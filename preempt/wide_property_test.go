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
				w.other = append(w.other, Hold{h.Node, drop})
			}
			if rest := h.GPUs &^ drop; rest != 0 {
				keep = append(keep, Hold{h.Node, rest})
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
		_, sub, victims, pl, ok := w.run(t)
		want, wantOK := greedyOracle(t, w, sub)
		if ok != wantOK || !slices.Equal(victims, want) {
			t.Fatalf("Select: %v %v; oracle: %v %v", ids(sub, victims), ok, ids(sub, want), wantOK)
		}
		if !ok {
			return
		}
		freed := w.index(t, sub, victims...)
		if msg := checkPlacement(freed, w.r, pl); msg != "" {
			t.Fatalf("placement: %s", msg)
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
	ix, err := topology.NewIndex(w.c)
	if err != nil {
		t.Fatalf("NewIndex: %v", err)
	}
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
		w := genBigWorld(t)
		_, sub, victims, pl, ok := w.run(t)
		want, wantOK := greedyOracle(t, w, sub)
		if ok != wantOK || !slices.Equal(victims, want) {
			t.Fatalf("Select: %v %v; oracle: %v %v", ids(sub, victims), ok, ids(sub, want), wantOK)
		}
		if ok {
			if msg := checkPlacement(w.index(t, sub, victims...), w.r, pl); msg != "" {
				t.Fatalf("placement: %s", msg)
			}
		}
	})
}
