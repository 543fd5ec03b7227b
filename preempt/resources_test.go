package preempt

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/topology"
)

// withResources gives w's nodes CPU and memory capacities (most of them;
// some unlimited), every hold a share of them, and the request CPU and
// memory per member, so that what the preemptor lacks is often CPU or
// memory rather than GPUs.
func withResources(t *rapid.T, w *world) *world {
	for i := range w.c.Nodes {
		if rapid.IntRange(0, 3).Draw(t, "limitCPU") > 0 {
			w.c.Nodes[i].CPUMillis = rapid.IntRange(2, 16).Draw(t, "cpuCap") * 1000
		}
		if rapid.IntRange(0, 3).Draw(t, "limitMem") > 0 {
			w.c.Nodes[i].MemoryMiB = rapid.IntRange(2, 16).Draw(t, "memCap") * 1024
		}
	}
	draw := func(h *Hold) {
		h.CPUMillis = int64(rapid.IntRange(0, 6).Draw(t, "holdCPU")) * 1000
		h.MemoryMiB = int64(rapid.IntRange(0, 6).Draw(t, "holdMem")) * 1024
	}
	for i := range w.cands {
		for k := range w.cands[i].Holds {
			draw(&w.cands[i].Holds[k])
		}
	}
	for k := range w.other {
		draw(&w.other[k])
	}
	w.r.CPUMillis = int64(rapid.IntRange(0, 4).Draw(t, "cpu")) * 1000
	w.r.MemoryMiB = int64(rapid.IntRange(0, 4).Draw(t, "mem")) * 1024
	return w
}

// TestResourcesMatchGreedyOracle: when nodes limit CPU and memory and
// running jobs use them, Select frees what the preemptor lacks (GPUs,
// CPU or memory): it agrees with the documented greedy and drop passes
// replayed by brute force on fresh indices, places validly (no node's
// CPU or memory over-committed by the placement), and every victim is
// needed: stopping all but any one leaves the gang unable to fit
// (invariant 4). Planted once: victims' CPU and memory not freed in the
// working view (release without AddUse); the oracle failed at once.
func TestResourcesMatchGreedyOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var w *world
		if rapid.Bool().Draw(t, "trimmed") {
			w = genTrimmedWorld(t)
		} else {
			w = genOracleWorld(t)
		}
		w = withResources(t, w)
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
		_, _, _, pl, _ := w.run(t)
		freed := w.index(t, sub, victims...)
		for _, s := range pl.Slots {
			freed.AddUse(s.Node, s.CPUMillis, s.MemoryMiB)
		}
		for n := range topology.NodeID(freed.NumNodes()) {
			var cpu, mem int64
			for _, s := range pl.Slots {
				if s.Node == n {
					cpu, mem = cpu+s.CPUMillis, mem+s.MemoryMiB
				}
			}
			if (cpu > 0 && freed.UsedCPU(n) > freed.CPUCapacity(n)) || (mem > 0 && freed.UsedMemory(n) > freed.MemoryCapacity(n)) {
				t.Fatalf("node %s over-committed by the preemptor: CPU %d of %d, memory %d of %d", freed.Name(n), freed.UsedCPU(n), freed.CPUCapacity(n), freed.UsedMemory(n), freed.MemoryCapacity(n))
			}
		}
	})
}
