package topology_test

import (
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// TestSmallIndexAgreesWithScan applies random Take, TakeSet, Release and
// SetHeld to an index of a small cluster, clones it at a random moment
// (with best-fit orders possibly stale), goes on changing both, and checks
// every query of both, and the changes each records, against scans.
func TestSmallIndexAgreesWithScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := gen.SmallCluster(t)
		ix, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(&c)
		trackChanges(ix, true)
		var changed []topology.NodeID
		step := func(m *model, ix *topology.Index, rec bool) {
			if rapid.IntRange(0, 3).Draw(t, "setHeld") == 0 {
				n := rapid.SampledFrom(c.Nodes).Draw(t, "node")
				s := topology.GPUSet(rapid.Uint64Range(0, 1<<9-1).Draw(t, "set"))
				id := mustLookup(t, ix, n.Name)
				ix.SetHeld(id, s)
				m.held[n.Name] = s & topology.FirstN(n.GPUs)
				if rec {
					changed = append(changed, id)
				}
				return
			}
			o := drawOp(t, &c)
			before := maps.Clone(m.held)
			m.apply(t, ix, o)
			// Every call that sets held GPUs is recorded, even to what the
			// node held; a failed one is not.
			var n *topology.Node
			for i := range c.Nodes {
				if c.Nodes[i].Name == o.node {
					n = &c.Nodes[i]
				}
			}
			ok := o.kind == "release" || !maps.Equal(before, m.held) ||
				o.kind == "takeSet" && o.set == 0 && o.set&^topology.FirstN(n.GPUs) == 0
			if rec && ok {
				changed = append(changed, mustLookup(t, ix, o.node))
			}
		}
		for range rapid.IntRange(0, 12).Draw(t, "before") {
			step(m, ix, true)
			if rapid.IntRange(0, 3).Draw(t, "query") == 0 {
				m.check(t, ix)
			}
		}
		cl := ix.Clone()
		mc := &model{c: m.c, healthy: m.healthy, held: maps.Clone(m.held)}
		if got, all := drainChanges(cl); len(got) != 0 || all {
			t.Fatalf("clone records changes %v, %v", got, all)
		}
		for range rapid.IntRange(0, 12).Draw(t, "after") {
			if rapid.Bool().Draw(t, "onClone") {
				step(mc, cl, false)
			} else {
				step(m, ix, true)
			}
			if rapid.IntRange(0, 3).Draw(t, "query") == 0 {
				m.check(t, ix)
				mc.checkOrder(t, cl)
			}
		}
		m.check(t, ix)
		m.checkOrder(t, ix)
		mc.check(t, cl)
		mc.checkOrder(t, cl)
		got, all := drainChanges(ix)
		if !all && !slices.Equal(got, changed) {
			t.Fatalf("drainChanges = %v, want %v", got, changed)
		}
		if all && len(changed) <= 4*len(c.Nodes) {
			t.Fatalf("drainChanges overflowed after %d changes of %d nodes", len(changed), len(c.Nodes))
		}
	})
}
