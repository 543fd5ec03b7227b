package gang_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// TestWidePlaceMatchesBruteForce is TestPlaceSmallAgreesWithBruteForce's check
// (see placeSmall) on nodes of up to 64 GPUs, with GPU 63 held or
// unhealthy, up to six GPU types and three levels. The brute force
// counts with GPUSet too, which topology's TestGPUSetMatchesAList checks
// on its own.
func TestWidePlaceMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix := heldIndex(t, gen.WideCluster(t))
		for range 6 {
			placeSmall(t, ix.Clone(), false)
		}
	})
}

// TestManyNodesPlaceMatchesBruteForce is the same check with 60 to 200
// nodes, so that a domain's buckets span several words of a node set and
// Avoid skips across them.
func TestManyNodesPlaceMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c topology.Cluster
		nl := rapid.IntRange(0, 2).Draw(t, "levels")
		c.Levels = []string{"a", "b"}[:nl]
		types := []string{"T0", "T1", "T2"}[:rapid.IntRange(1, 3).Draw(t, "types")]
		for i := range rapid.IntRange(60, 200).Draw(t, "nodes") {
			n := topology.Node{Name: fmt.Sprintf("n%03d", i), GPUs: rapid.IntRange(1, 4).Draw(t, "gpus"),
				GPUType: rapid.SampledFrom(types).Draw(t, "type"), Domains: map[string]string{},
				State: rapid.SampledFrom([]topology.NodeState{topology.Ready, topology.Ready, topology.Ready, topology.Ready, topology.Draining, topology.Down}).Draw(t, "state")}
			for _, l := range c.Levels {
				n.Domains[l] = fmt.Sprintf("d%d", rapid.IntRange(0, 1).Draw(t, "dom"))
			}
			c.Nodes = append(c.Nodes, n)
		}
		ix, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		for n := range topology.NodeID(ix.NumNodes()) {
			if rapid.IntRange(0, 3).Draw(t, "busy") == 0 {
				if err := ix.TakeSet(n, topology.GPUSet(rapid.Uint64().Draw(t, "held"))&topology.FirstN(ix.GPUs(n))); err != nil {
					t.Fatal(err)
				}
			}
		}
		for range 3 {
			placeSmall(t, ix.Clone(), false)
		}
	})
}
