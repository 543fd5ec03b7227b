package preempt

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// benchWorld is a full cluster of n 8-GPU nodes in leaves of 32, each
// node held by one single-node candidate, costs interleaved across the
// leaves: the cheapest victims are spread over the whole cluster, so the
// greedy pass frees many before one leaf has room for the gang.
func benchWorld(b *testing.B, n int) (*topology.Index, []Candidate) {
	c := &topology.Cluster{Levels: []string{"spine", "leaf"}}
	for i := range n {
		c.Nodes = append(c.Nodes, topology.Node{
			Name: fmt.Sprintf("n%05d", i), GPUs: 8, GPUType: "H100",
			Domains: map[string]string{"spine": fmt.Sprintf("s%d", i/1024), "leaf": fmt.Sprintf("l%d", i/32)},
		})
	}
	ix, err := topology.NewIndex(c)
	if err != nil {
		b.Fatal(err)
	}
	cands := make([]Candidate, n)
	for i := range n {
		id := topology.NodeID(i)
		cands[i] = Candidate{
			ID: fmt.Sprintf("j%05d", i), Tier: 3,
			// The work lost grows with the node's place in its leaf,
			// so the greedy pass fills every leaf evenly.
			WorkLost: time.Duration(i%32) * time.Minute,
			Holds:    []Hold{{Node: id, GPUs: topology.FirstN(8)}},
		}
		if err := ix.TakeSet(id, cands[i].Holds[0].GPUs); err != nil {
			b.Fatal(err)
		}
	}
	return ix, cands
}

// BenchmarkSelect measures one victim search for a 16-node gang that
// must fit one leaf, with one candidate per node: the greedy pass frees
// candidates across every leaf before one leaf holds the gang, and the
// drop pass keeps all but that leaf's.
func BenchmarkSelect(b *testing.B) {
	for _, n := range []int{1024, 16384} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			ix, cands := benchWorld(b, n)
			r := gang.NewRequest(16, 8)
			r.Required = 1
			var sc Selector
			b.ReportAllocs()
			for b.Loop() {
				victims, _, ok := sc.Select(ix, r, binpack.Pack{}, cands)
				if !ok || len(victims) != 16 {
					b.Fatalf("got %d victims, ok %v; want 16", len(victims), ok)
				}
			}
		})
	}
}
