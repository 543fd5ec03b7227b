package topology_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// TestWideDomainBuckets: domains of more than 64 and more than 4096
// nodes keep buckets of several words and several summary words; after
// random changes every bucket of every domain lists, and First and
// Fullest answer, what a scan of the nodes finds.
func TestWideDomainBuckets(t *testing.T) {
	sizes := []int{63, 64, 65, 129, 4095, 4097, 8200}
	for _, size := range sizes {
		c := topology.Uniform(size, 2, "H100")
		c.Levels = []string{"rack"}
		for i := range c.Nodes {
			// Two racks, interleaved, so a node's place in its rack is
			// not its ID.
			c.Nodes[i].Domains = map[string]string{"rack": fmt.Sprintf("r%d", i%3%2)}
		}
		base, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				ix := base.Clone()
				for range rapid.IntRange(1, 30).Draw(t, "ops") {
					n := topology.NodeID(rapid.IntRange(0, size-1).Draw(t, "node"))
					ix.SetHeld(n, topology.GPUSet(rapid.IntRange(0, 3).Draw(t, "held")))
				}
				for l := topology.ClusterLevel; l < 1; l++ {
					for d := range topology.DomainID(ix.NumDomains(l)) {
						byFree := make([][]topology.NodeID, 3)
						for n := range topology.NodeID(size) {
							if l < 0 || ix.DomainOf(l, n) == d {
								f := ix.Free(n)
								byFree[f] = append(byFree[f], n)
							}
						}
						for f, want := range byFree {
							got := slices.Collect(ix.Bucket(l, d, topology.AnyType, f))
							if !slices.Equal(got, want) {
								t.Fatalf("level %d domain %d: Bucket(%d) has %d nodes, want %d", l, d, f, len(got), len(want))
							}
							first, ok := ix.First(l, d, topology.AnyType, f)
							if ok != (len(want) > 0) || ok && first != want[0] {
								t.Fatalf("level %d domain %d: First(%d) = %d, %v", l, d, f, first, ok)
							}
							if ix.NodesWithFree(l, d, topology.AnyType, f) != len(want) {
								t.Fatalf("level %d domain %d: NodesWithFree(%d)", l, d, f)
							}
						}
						n, ok := ix.Fullest(l, d, topology.AnyType, 1)
						if want := append(byFree[1], byFree[2]...); ok != (len(want) > 0) || ok && n != want[0] {
							t.Fatalf("level %d domain %d: Fullest(1) = %d, %v", l, d, n, ok)
						}
					}
				}
			})
		})
	}
}

// TestWideIndexMatchesModel holds the index, and a clone of it changed
// apart, to the model through takes, releases and whole 64-bit SetHeld
// calls on nodes of up to 64 GPUs (GPU 63 among them), up to six GPU
// types and three levels, any node state and health. The model counts
// with GPUSet too; TestGPUSetMatchesAList checks GPUSet on its own.
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
