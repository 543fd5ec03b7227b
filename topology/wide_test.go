package topology_test

import (
	"maps"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// TestWideIndexMatchesModel holds the index, and a clone of it changed
// apart, to the model through takes, releases and whole 64-bit SetHeld
// calls on nodes of up to 64 GPUs (GPU 63 among them), up to six GPU
// types and three levels, any node state and health.
func TestWideIndexMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := gen.WideCluster(t)
		ix, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(&c)
		var cl *topology.Index
		var mc *model
		for range rapid.IntRange(1, 40).Draw(t, "ops") {
			if cl == nil && rapid.IntRange(0, 10).Draw(t, "clone") == 0 {
				m.check(t, ix)
				cl = ix.Clone()
				mc = &model{c: m.c, healthy: m.healthy, held: maps.Clone(m.held)}
			}
			tix, tm := ix, m
			if cl != nil && rapid.Bool().Draw(t, "onClone") {
				tix, tm = cl, mc
			}
			if rapid.IntRange(0, 3).Draw(t, "setHeld") == 0 {
				n := rapid.SampledFrom(c.Nodes).Draw(t, "node")
				s := topology.GPUSet(rapid.Uint64().Draw(t, "set"))
				tix.SetHeld(mustLookup(t, tix, n.Name), s)
				tm.held[n.Name] = s & topology.FirstN(n.GPUs)
			} else {
				o := drawOp(t, &c)
				if rapid.Bool().Draw(t, "bigset") {
					o.set = topology.GPUSet(rapid.Uint64().Draw(t, "big"))
				}
				tm.apply(t, tix, o)
			}
			if rapid.IntRange(0, 5).Draw(t, "q") == 0 {
				tm.check(t, tix)
				tm.checkOrder(t, tix)
			}
		}
		m.check(t, ix)
		m.checkOrder(t, ix)
		if cl != nil {
			mc.check(t, cl)
			mc.checkOrder(t, cl)
		}
	})
}
