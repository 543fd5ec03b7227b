package gen

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/topology"
)

// SmallCluster draws a valid cluster small enough for brute force: 1–6
// nodes of 1–8 GPUs, zero to two levels ("spine", then "leaf") of up to
// three domain names each, up to three GPU types, any node draining or
// down and any GPU unhealthy.
func SmallCluster(t *rapid.T) topology.Cluster {
	var c topology.Cluster
	nl := rapid.IntRange(0, 2).Draw(t, "levels")
	c.Levels = []string{"spine", "leaf"}[:nl]
	types := []string{"H100", "A100", "L4"}[:rapid.IntRange(1, 3).Draw(t, "types")]
	for i := range rapid.IntRange(1, 6).Draw(t, "nodes") {
		n := topology.Node{
			Name:    fmt.Sprintf("n%d", i),
			GPUs:    rapid.IntRange(1, 8).Draw(t, "gpus"),
			GPUType: rapid.SampledFrom(types).Draw(t, "type"),
			Domains: map[string]string{},
			State:   rapid.SampledFrom([]topology.NodeState{topology.Ready, topology.Ready, topology.Ready, topology.Draining, topology.Down}).Draw(t, "state"),
		}
		for _, l := range c.Levels {
			n.Domains[l] = fmt.Sprintf("d%d", rapid.IntRange(0, 2).Draw(t, "dom"))
		}
		for g := range n.GPUs {
			if rapid.IntRange(0, 5).Draw(t, "sick") == 0 {
				n.Unhealthy = append(n.Unhealthy, g)
			}
		}
		c.Nodes = append(c.Nodes, n)
	}
	return c
}
