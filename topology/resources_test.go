package topology_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// resCluster draws a cluster whose nodes mostly limit CPU, memory or
// both.
func resCluster(t *rapid.T) topology.Cluster {
	c := gen.Cluster(t)
	for i := range c.Nodes {
		if rapid.IntRange(0, 3).Draw(t, "limitCPU") > 0 {
			c.Nodes[i].CPUMillis = rapid.IntRange(1, 64).Draw(t, "cpuCap") * 1000
		}
		if rapid.IntRange(0, 3).Draw(t, "limitMem") > 0 {
			c.Nodes[i].MemoryMiB = rapid.IntRange(1, 64).Draw(t, "memCap") * 1024
		}
	}
	return c
}

// bruteMembers is Index.Members by its definition, from capacities and
// uses the test tracks itself.
func bruteMembers(ix *topology.Index, c *topology.Cluster, used map[topology.NodeID][2]int64, n topology.NodeID, g int, cpu, mem int64) int {
	k := ix.Free(n) / g
	node := c.Nodes[0]
	for _, x := range c.Nodes {
		if x.Name == ix.Name(n) {
			node = x
		}
	}
	if cpu > 0 && node.CPUMillis > 0 {
		k = min(k, int(max(int64(node.CPUMillis)-used[n][0], 0)/cpu))
	}
	if mem > 0 && node.MemoryMiB > 0 {
		k = min(k, int(max(int64(node.MemoryMiB)-used[n][1], 0)/mem))
	}
	return k
}

// TestResourceQueriesAgreeWithScan holds CapacityFor and FirstFit, which
// read buckets through their CPU and memory bounds, to scans of every
// node, over random clusters and random takes and releases with CPU and
// memory. Planted once: widen not called when a node moves to another
// bucket (stale bounds); the property failed at once.
func TestResourceQueriesAgreeWithScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := resCluster(t)
		ix, err := topology.NewIndex(&c)
		require.NoError(t, err)
		used := map[topology.NodeID][2]int64{}
		type hold struct {
			n        topology.NodeID
			s        topology.GPUSet
			cpu, mem int64
		}
		var holds []hold
		for range rapid.IntRange(0, 40).Draw(t, "ops") {
			if len(holds) > 0 && rapid.IntRange(0, 2).Draw(t, "release") == 0 {
				i := rapid.IntRange(0, len(holds)-1).Draw(t, "which")
				h := holds[i]
				holds = append(holds[:i], holds[i+1:]...)
				ix.AddUse(h.n, -h.cpu, -h.mem)
				ix.Release(h.n, h.s)
				u := used[h.n]
				used[h.n] = [2]int64{u[0] - h.cpu, u[1] - h.mem}
				continue
			}
			n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "node"))
			k := rapid.IntRange(1, 4).Draw(t, "gpus")
			cpu := int64(rapid.IntRange(0, 16).Draw(t, "cpu")) * 1000
			mem := int64(rapid.IntRange(0, 16).Draw(t, "mem")) * 1024
			s, ok := ix.Take(n, k)
			if !ok {
				continue
			}
			ix.AddUse(n, cpu, mem) // may over-commit: the index must cope
			u := used[n]
			used[n] = [2]int64{u[0] + cpu, u[1] + mem}
			holds = append(holds, hold{n, s, cpu, mem})
		}
		g := rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "g")
		cpu := int64(rapid.IntRange(0, 8).Draw(t, "qcpu")) * 1000
		mem := int64(rapid.IntRange(0, 8).Draw(t, "qmem")) * 1024
		for level := topology.ClusterLevel; level < ix.NumLevels(); level++ {
			for d := range topology.DomainID(ix.NumDomains(level)) {
				for cl := range topology.Class(ix.NumClasses()) {
					want := 0
					for id := range topology.NodeID(ix.NumNodes()) {
						if ix.DomainOf(level, id) != d || !ix.InClass(id, cl) || ix.State(id) != topology.Ready {
							continue
						}
						m := bruteMembers(ix, &c, used, id, g, cpu, mem)
						require.Equal(t, m, ix.Members(id, g, cpu, mem), "node %s", ix.Name(id))
						want += m
					}
					if g <= ix.MaxGPUs() {
						require.Equal(t, want, ix.CapacityFor(level, d, cl, g, cpu, mem), "level %d domain %d class %d", level, d, cl)
					}
					for f := g; f <= ix.MaxGPUs(); f++ {
						for k := 1; k*g <= f; k++ {
							wantN, wantOK := topology.NodeID(-1), false
							for id := range ix.Bucket(level, d, cl, f) {
								if bruteMembers(ix, &c, used, id, g, cpu, mem) >= k {
									wantN, wantOK = id, true
									break
								}
							}
							n, ok := ix.FirstFit(level, d, cl, f, k, g, cpu, mem, nil)
							require.Equal(t, wantOK, ok)
							require.Equal(t, wantN, n)
						}
					}
				}
			}
		}
		// A clone keeps its own use.
		if ix.Limited() {
			cl := ix.Clone()
			cl.AddUse(0, 1000, 1024)
			require.Equal(t, used[0][0], ix.UsedCPU(0))
			require.Equal(t, used[0][0]+1000, cl.UsedCPU(0))
		}
	})
}

// TestUnlimitedIndexKeepsNoResources: a cluster without CPU or memory
// capacities answers every resource request by GPUs alone.
func TestUnlimitedIndexKeepsNoResources(t *testing.T) {
	c := flat(8, 8)
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	require.False(t, ix.Limited())
	ix.AddUse(0, 1<<40, 1<<40)
	require.Equal(t, 4, ix.CapacityFor(topology.ClusterLevel, 0, topology.AnyType, 4, 1<<40, 1<<40))
	require.Equal(t, topology.Unlimited, ix.FreeCPU(0))
}

// TestResourcesLimitMembers: CPU, then memory, is what limits members on
// a node with GPUs to spare.
func TestResourcesLimitMembers(t *testing.T) {
	c := flat(8, 8)
	c.Nodes[0].CPUMillis = 16000
	c.Nodes[1].MemoryMiB = 65536
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	require.True(t, ix.Limited())
	require.Equal(t, 2, ix.Members(0, 1, 8000, 0))
	require.Equal(t, 8, ix.Members(1, 1, 8000, 0))
	require.Equal(t, 1, ix.Members(1, 2, 0, 40000))
	require.Equal(t, 2+4, ix.CapacityFor(topology.ClusterLevel, 0, topology.AnyType, 2, 8000, 0))
	ix.AddUse(0, 12000, 0)
	require.Equal(t, int64(4000), ix.FreeCPU(0))
	require.Equal(t, 0, ix.Members(0, 1, 8000, 0))
	n, ok := ix.FirstFit(topology.ClusterLevel, 0, topology.AnyType, 8, 1, 1, 8000, 0, nil)
	require.True(t, ok)
	require.Equal(t, "n1", ix.Name(n))
	ix.AddUse(0, 20000, 0) // over-committed: none free, not negative
	require.Equal(t, int64(0), ix.FreeCPU(0))
}
