package sim

import (
	"fmt"

	"github.com/gpusched/gpusched/topology"
)

// Uniform returns a cluster of n nodes of g GPUs each, with no topology
// levels, named so that name order is numeric order ("n0000", "n0001", …).
// With g = 1 it is the flat pool of processors that Parallel Workloads
// Archive simulators assume.
func Uniform(n, g int) topology.Cluster {
	width := len(fmt.Sprint(max(n-1, 0)))
	c := topology.Cluster{Nodes: make([]topology.Node, n)}
	for i := range c.Nodes {
		c.Nodes[i] = topology.Node{Name: fmt.Sprintf("n%0*d", width, i), GPUs: g}
	}
	return c
}

// Shape maps a request of p processors or GPUs onto nodes of g GPUs: a
// request that fits one node (p <= g) is one member of p GPUs; a larger
// one is ceil(p/g) members of g GPUs each, so it is rounded up to whole
// nodes. With g = 1 it is p members of one GPU. p and g must be >= 1.
func Shape(p, g int) (members, gpusPerMember int) {
	if p <= g {
		return 1, p
	}
	return (p + g - 1) / g, g
}
