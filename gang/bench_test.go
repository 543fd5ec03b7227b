package gang_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Benchmark clusters: nodes of 8 GPUs in leaves of 32 nodes and spines
// of 8 leaves.
const (
	benchGPUs      = 8
	nodesPerLeaf   = 32
	leavesPerSpine = 8
)

// benchIndex builds a cluster of n nodes in which about two thirds of the
// GPUs are held (63% at 256 nodes, 68% at 16,384). Load varies by leaf, as it does when jobs are placed by
// topology: leaf loads u are spread evenly over [0.3, 1] and dealt to the
// leaves in random order; each node of a leaf is fully held with
// probability u, and otherwise empty (85%) or partly held (15%, 1..7
// GPUs). A leaf then holds about 0.075 + 0.925u of its GPUs, 68% on
// average, and the lightest leaves have room for a 16×8 gang (3 of 8
// leaves at 256 nodes, 93 of 512 at 16,384). The seed
// is fixed, so every run sees the same cluster.
func benchIndex(b *testing.B, n int) *topology.Index {
	b.Helper()
	c := topology.Cluster{Levels: []string{"spine", "leaf"}}
	for i := range n {
		leaf := i / nodesPerLeaf
		c.Nodes = append(c.Nodes, topology.Node{
			Name: fmt.Sprintf("n%05d", i), GPUs: benchGPUs, GPUType: "H100",
			Domains: map[string]string{
				"spine": fmt.Sprintf("s%03d", leaf/leavesPerSpine),
				"leaf":  fmt.Sprintf("l%04d", leaf),
			},
		})
	}
	ix, err := topology.NewIndex(&c)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	leaves := (n + nodesPerLeaf - 1) / nodesPerLeaf
	load := make([]float64, leaves)
	for i, j := range rng.Perm(leaves) {
		load[i] = 0.3 + 0.7*(float64(j)+0.5)/float64(leaves)
	}
	for id := range topology.NodeID(ix.NumNodes()) {
		u := load[int(id)/nodesPerLeaf]
		k := 0
		switch r := rng.Float64(); {
		case r < u:
			k = benchGPUs
		case r < u+(1-u)*0.15:
			k = 1 + rng.IntN(benchGPUs-1)
		}
		if k > 0 {
			if _, ok := ix.Take(id, k); !ok {
				b.Fatal("cannot hold GPUs")
			}
		}
	}
	return ix
}

// BenchmarkPlace measures one placement and its release on clusters of
// 256 and 16,384 nodes. Place should cost O(levels × G × members), not
// grow with the number of nodes.
func BenchmarkPlace(b *testing.B) {
	for _, nodes := range []int{256, 16384} {
		ix := benchIndex(b, nodes)
		leaf, _ := ix.LevelOf("leaf")
		inLeaf := gang.NewRequest(16, 8)
		inLeaf.Required = leaf
		cases := []struct {
			name   string
			req    gang.Request
			scorer binpack.Scorer
		}{
			{"pod-1x1-pack", gang.NewRequest(1, 1), nil},
			{"gang-8x8-pack", gang.NewRequest(8, 8), nil},
			{"gang-16x8-leaf", inLeaf, nil},
			{"gang-4x2-spread", gang.NewRequest(4, 2), binpack.Spread{}},
		}
		for _, tc := range cases {
			b.Run(fmt.Sprintf("nodes=%d/%s", nodes, tc.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					pl, out := gang.Place(ix, tc.req, tc.scorer)
					if out != gang.Placed {
						b.Fatalf("%s: %s", tc.name, out)
					}
					pl.Release(ix)
				}
			})
		}
	}
}

// BenchmarkPlaceSkippedDomains is the worst case of the domain search:
// every leaf but the last has half its GPUs free, on nodes with 4 free
// each, so it has the free GPUs of a 16×8 gang but no room for one
// member. Place walks past all of them, so the cost grows with the
// number of leaves.
func BenchmarkPlaceSkippedDomains(b *testing.B) {
	for _, nodes := range []int{256, 16384} {
		ix := benchIndex(b, nodes)
		leaf, _ := ix.LevelOf("leaf")
		last := topology.DomainID(ix.NumDomains(leaf) - 1)
		for id := range topology.NodeID(ix.NumNodes()) {
			if ix.DomainOf(leaf, id) == last {
				ix.SetHeld(id, 0)
			} else {
				ix.SetHeld(id, topology.FirstN(4))
			}
		}
		req := gang.NewRequest(16, 8)
		req.Required = leaf
		b.Run(fmt.Sprintf("nodes=%d/gang-16x8-leaf", nodes), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pl, out := gang.Place(ix, req, nil)
				if out != gang.Placed {
					b.Fatal(out)
				}
				pl.Release(ix)
			}
		})
	}
}
