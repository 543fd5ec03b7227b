package topology_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/gpusched/gpusched/internal/measure"
	"github.com/gpusched/gpusched/topology"
)

// levelsTypesCluster is the shape of the levels-types amplifier: n nodes
// of 64 GPUs, topology.MaxLevels levels with a domain per node at each,
// and the given number of GPU types.
func levelsTypesCluster(n, types int) topology.Cluster {
	c := topology.Cluster{}
	for l := range topology.MaxLevels {
		c.Levels = append(c.Levels, fmt.Sprintf("l%d", l))
	}
	for i := range n {
		doms := map[string]string{}
		for _, l := range c.Levels {
			doms[l] = fmt.Sprintf("d%d", i)
		}
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%05d", i), GPUs: 64,
			GPUType: fmt.Sprintf("t%d", i%types), Domains: doms})
	}
	return c
}

// indexBytes returns the bytes NewIndex allocates for c.
func indexBytes(t *testing.T, c *topology.Cluster) uint64 {
	t.Helper()
	var ix *topology.Index
	var err error
	bytes, _ := measure.Allocated(func() { ix, err = topology.NewIndex(c) })
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(ix)
	return bytes
}

// TestIndexMemoryIgnoresTypes: the index of a cluster with a domain per
// node at each of 16 levels costs about as much with 32 GPU types as with
// one, and a few KiB per node and level: its buckets are kept per
// (domain, class) pair that has nodes, not per domain × class. Kept per
// domain × class, 3,000 such nodes took 3.3 GB.
func TestIndexMemoryIgnoresTypes(t *testing.T) {
	const n = 300
	one, many := levelsTypesCluster(n, 1), levelsTypesCluster(n, 32)
	b1, b32 := indexBytes(t, &one), indexBytes(t, &many)
	perNodeLevel := b32 / (n * (topology.MaxLevels + 1))
	t.Logf("%d nodes, %d levels: %d bytes with 1 type, %d with 32 (%d per node and level)", n, topology.MaxLevels, b1, b32, perNodeLevel)
	if b32 > 3*b1 {
		t.Errorf("32 types: %d bytes, more than 3 × the %d of one type", b32, b1)
	}
	if perNodeLevel > 4<<10 {
		t.Errorf("%d bytes per node and level, want at most 4 KiB", perNodeLevel)
	}
}
