package gen

import (
	"fmt"
	"slices"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/topology"
)

// SmallCluster draws a valid cluster small enough for brute force: 1–6
// nodes of 1–8 GPUs, zero to two levels ("spine", then "leaf") of up to
// three domain names each, up to three GPU types, any node draining or
// down and any GPU unhealthy.
func SmallCluster(t *rapid.T) topology.Cluster {
	return drawCluster(t, 6, func() int { return rapid.IntRange(1, 8).Draw(t, "gpus") },
		[]string{"H100", "A100", "L4"}, []string{"spine", "leaf"}, 6)
}

// WideCluster draws a valid cluster at the edges of a node's GPU set:
// 1–14 nodes of 1, 3, 8, 32, 63 or 64 GPUs (64 most often), zero to three
// levels of up to three domain names each, up to six GPU types, any node
// draining or down, any GPU unhealthy, and GPU 63 of a 64-GPU node
// unhealthy half the time.
func WideCluster(t *rapid.T) topology.Cluster {
	c := drawCluster(t, 14, func() int { return rapid.SampledFrom([]int{1, 3, 8, 32, 63, 64, 64}).Draw(t, "gpus") },
		[]string{"T0", "T1", "T2", "T3", "T4", "T5"}, []string{"a", "b", "c"}, 10)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.GPUs == 64 && !slices.Contains(n.Unhealthy, 63) && rapid.Bool().Draw(t, "sick63") {
			n.Unhealthy = append(n.Unhealthy, 63)
		}
	}
	return c
}

// drawCluster draws 1 to maxNodes nodes of gpus() GPUs each, of the
// first one to all of types, in zero to all of levels with up to three
// domain names each, any node draining or down (one in five each), and
// each GPU unhealthy one time in sick.
func drawCluster(t *rapid.T, maxNodes int, gpus func() int, types, levels []string, sick int) topology.Cluster {
	var c topology.Cluster
	nl := rapid.IntRange(0, len(levels)).Draw(t, "levels")
	c.Levels = levels[:nl]
	types = types[:rapid.IntRange(1, len(types)).Draw(t, "types")]
	for i := range rapid.IntRange(1, maxNodes).Draw(t, "nodes") {
		n := topology.Node{
			Name:    fmt.Sprintf("n%d", i),
			GPUs:    gpus(),
			GPUType: rapid.SampledFrom(types).Draw(t, "type"),
			Domains: map[string]string{},
			State:   rapid.SampledFrom([]topology.NodeState{topology.Ready, topology.Ready, topology.Ready, topology.Draining, topology.Down}).Draw(t, "state"),
		}
		for _, l := range c.Levels {
			n.Domains[l] = fmt.Sprintf("d%d", rapid.IntRange(0, 2).Draw(t, "dom"))
		}
		for g := range n.GPUs {
			if rapid.IntRange(0, sick-1).Draw(t, "sick") == 0 {
				n.Unhealthy = append(n.Unhealthy, g)
			}
		}
		c.Nodes = append(c.Nodes, n)
	}
	return c
}
