package sim

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/topology"
)

// Uniform returns a cluster of n nodes of g GPUs each, with no topology
// levels, named so that name order is numeric order ("n0000", "n0001", …).
// With g = 1 it is the flat pool of processors that Parallel Workloads
// Archive simulators assume.
func Uniform(n, g int) topology.Cluster {
	width := len(strconv.Itoa(max(n-1, 0)))
	// The names are cut from one string: one allocation for all of them.
	size := 1 + width
	buf := make([]byte, 0, n*size)
	var digits []byte
	for i := range n {
		digits = strconv.AppendInt(digits[:0], int64(i), 10)
		buf = append(buf, 'n')
		for range width - len(digits) {
			buf = append(buf, '0')
		}
		buf = append(buf, digits...)
	}
	names := string(buf)
	c := topology.Cluster{Nodes: make([]topology.Node, n)}
	for i := range c.Nodes {
		c.Nodes[i] = topology.Node{Name: names[i*size : (i+1)*size], GPUs: g}
	}
	return c
}

// nodeIndex finds a node's index by its name: by binary search when the
// names ascend (as Uniform's do), else in a map.
type nodeIndex struct {
	nodes []topology.Node
	byMap map[string]int // nil when the names ascend
}

func newNodeIndex(nodes []topology.Node) nodeIndex {
	ascending := true
	for i := 1; i < len(nodes) && ascending; i++ {
		ascending = nodes[i-1].Name < nodes[i].Name
	}
	x := nodeIndex{nodes: nodes}
	if !ascending {
		x.byMap = make(map[string]int, len(nodes))
		for i := range nodes {
			x.byMap[nodes[i].Name] = i
		}
	}
	return x
}

// find returns the index of the node named name.
func (x *nodeIndex) find(name string) (int, bool) {
	if x.byMap != nil {
		i, ok := x.byMap[name]
		return i, ok
	}
	i, ok := slices.BinarySearchFunc(x.nodes, name, func(n topology.Node, name string) int {
		return strings.Compare(n.Name, name)
	})
	return i, ok
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
