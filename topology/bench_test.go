package topology_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpusched/gpusched/topology"
)

// benchIndex builds an index of n nodes of 8 GPUs and two GPU types, in
// leaves of 32 nodes and spines of 16 leaves, with a random part of every
// node held.
func benchIndex(b *testing.B, n int) (*topology.Index, *rand.Rand) {
	b.Helper()
	c := topology.Cluster{Levels: []string{"spine", "leaf"}}
	for i := range n {
		c.Nodes = append(c.Nodes, topology.Node{
			Name:    fmt.Sprintf("n%05d", i),
			GPUs:    8,
			GPUType: []string{"H100", "A100"}[i%2],
			Domains: map[string]string{
				"spine": fmt.Sprintf("s%d", i/512),
				"leaf":  fmt.Sprintf("l%d", i/32%16),
			},
		})
	}
	ix, err := topology.NewIndex(&c)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for id := range topology.NodeID(n) {
		if k := r.IntN(9); k > 0 {
			ix.Take(id, k)
		}
	}
	return ix, r
}

var benchSizes = []int{256, 16384}

// BenchmarkTakeRelease takes GPUs of a random node and releases them.
func BenchmarkTakeRelease(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			ix, r := benchIndex(b, n)
			ids := make([]topology.NodeID, 1024)
			for i := range ids {
				ids[i] = topology.NodeID(r.IntN(n))
			}
			for i := 0; b.Loop(); i++ {
				id := ids[i%len(ids)]
				if s, ok := ix.Take(id, 1); ok {
					ix.Release(id, s)
				}
			}
		})
	}
}

// BenchmarkFullest asks for the best-fit node of each size in the whole
// cluster and in one leaf.
func BenchmarkFullest(b *testing.B) {
	for _, n := range benchSizes {
		for _, at := range []string{"cluster", "leaf"} {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, at), func(b *testing.B) {
				ix, _ := benchIndex(b, n)
				level, d := topology.ClusterLevel, topology.DomainID(0)
				if at == "leaf" {
					level = 1
					d = topology.DomainID(ix.NumDomains(1) - 1)
				}
				found := 0
				for i := 0; b.Loop(); i++ {
					if _, ok := ix.Fullest(level, d, topology.AnyType, 1+i%8); ok {
						found++
					}
				}
				if found == 0 {
					b.Fatal("no node found")
				}
			})
		}
	}
}
