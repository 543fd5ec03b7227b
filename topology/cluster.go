package topology

import (
	"fmt"
	"slices"
	"strings"
)

// MaxGPUsPerNode is the largest GPU count a node may declare. GPU sets of
// one node are kept as 64-bit masks.
const MaxGPUsPerNode = 64

// NodeState says whether a node takes new work.
type NodeState uint8

const (
	// Ready nodes run their jobs and take new ones. It is the zero value.
	Ready NodeState = iota
	// Draining nodes keep their running jobs but take no new work.
	Draining
	// Down nodes run nothing: the scheduler evicts their jobs.
	Down
)

var stateNames = [...]string{Ready: "ready", Draining: "draining", Down: "down"}

// String returns "ready", "draining" or "down".
func (s NodeState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("NodeState(%d)", uint8(s))
}

// ParseNodeState is the inverse of [NodeState.String]. The empty string
// means [Ready].
func ParseNodeState(s string) (NodeState, error) {
	switch s {
	case "", "ready":
		return Ready, nil
	case "draining":
		return Draining, nil
	case "down":
		return Down, nil
	}
	return 0, fmt.Errorf("unknown node state %q (want ready, draining or down)", s)
}

// Node is one machine: a number of GPUs of one type, its place in the
// network topology and its health.
type Node struct {
	// Name identifies the node; it is unique in a cluster.
	Name string
	// GPUs is the number of GPUs, 1..MaxGPUsPerNode, indexed 0..GPUs-1.
	GPUs int
	// GPUType names the GPU model ("H100"). Jobs that ask for a type only
	// run on nodes of that type.
	GPUType string
	// Domains names the node's domain at each level of the cluster
	// (level name -> domain name). It must name every level of the cluster
	// and no other.
	Domains map[string]string
	// State is ready, draining or down.
	State NodeState
	// Unhealthy lists GPU indices that must never be allocated.
	Unhealthy []int
	// CPUMillis is the node's CPU capacity in thousandths of a core, for
	// the members that run on it; zero means CPU is not limited, so a
	// cluster described by GPUs alone keeps its meaning.
	CPUMillis int
	// MemoryMiB is the node's memory capacity in MiB; zero means memory
	// is not limited.
	MemoryMiB int
}

// Cluster is the static description of the machines: its topology levels,
// outermost first (for example "spine", "leaf", "nvlink"), and its nodes.
type Cluster struct {
	// Levels names the topology levels, outermost first; they must be
	// non-empty and unique. None means a flat cluster.
	Levels []string
	// Nodes are the machines, in any order.
	Nodes []Node
}

// Validate reports the first problem in c, naming the offending field, or
// nil. It checks that levels are non-empty and unique, node names are
// non-empty and unique, GPU counts are within 1..MaxGPUsPerNode, every
// node names a domain at every level and no other, states are known,
// unhealthy GPU indices are in range and not repeated, and there are at
// most MaxGPUTypes GPU types.
func (c *Cluster) Validate() error {
	_, err := c.validate(c.nameOrder())
	return err
}

// nameOrder returns the node indices sorted by name, equal names by
// index. O(N log N); O(N) when the names come strictly ascending (a
// repeated name takes the sort).
func (c *Cluster) nameOrder() []int {
	order := make([]int, len(c.Nodes))
	sorted := true
	for i := range order {
		order[i] = i
		sorted = sorted && (i == 0 || c.Nodes[i-1].Name < c.Nodes[i].Name)
	}
	if sorted {
		return order
	}
	slices.SortFunc(order, func(a, b int) int {
		if x := strings.Compare(c.Nodes[a].Name, c.Nodes[b].Name); x != 0 {
			return x
		}
		return a - b
	})
	return order
}

// validate is Validate with the nodes' name order at hand, from which it
// finds repeated names without a map. It returns the distinct GPU types,
// in the order the nodes bring them.
func (c *Cluster) validate(order []int) ([]string, error) {
	// The first repeat in node order is, over the runs of one name in the
	// name order (each by index), the least second index; report it with
	// the first of its run.
	dup, dupOf := len(c.Nodes), -1
	for k := 1; k < len(order); k++ {
		first, second := order[k-1], order[k]
		if c.Nodes[first].Name == c.Nodes[second].Name && (k == 1 || c.Nodes[order[k-2]].Name != c.Nodes[first].Name) && second < dup {
			dup, dupOf = second, first
		}
	}
	if len(c.Levels) > MaxLevels {
		return nil, fmt.Errorf("levels: %d levels; at most %d are allowed", len(c.Levels), MaxLevels)
	}
	for i, l := range c.Levels {
		if l == "" {
			return nil, fmt.Errorf("levels[%d]: empty level name", i)
		}
		if slices.Contains(c.Levels[:i], l) {
			return nil, fmt.Errorf("levels[%d]: duplicate level %q", i, l)
		}
	}
	var types []string
	for i := range c.Nodes {
		n := &c.Nodes[i]
		where := func() string { return fmt.Sprintf("nodes[%d] %q", i, n.Name) }
		if n.Name == "" {
			return nil, fmt.Errorf("nodes[%d]: name is empty", i)
		}
		if i == dup {
			return nil, fmt.Errorf("%s: duplicate node name (also nodes[%d])", where(), dupOf)
		}
		if n.GPUs < 1 || n.GPUs > MaxGPUsPerNode {
			return nil, fmt.Errorf("%s: gpus must be in 1..%d, got %d", where(), MaxGPUsPerNode, n.GPUs)
		}
		if n.State > Down {
			return nil, fmt.Errorf("%s: state: unknown node state %d", where(), n.State)
		}
		if err := n.checkCapacity(); err != nil {
			return nil, fmt.Errorf("%s: %w", where(), err)
		}
		if !slices.Contains(types, n.GPUType) {
			if len(types) == MaxGPUTypes {
				return nil, fmt.Errorf("%s: gpuType: %q would be GPU type number %d of the cluster; at most %d are allowed", where(), n.GPUType, MaxGPUTypes+1, MaxGPUTypes)
			}
			types = append(types, n.GPUType)
		}
		for _, l := range c.Levels {
			if d, ok := n.Domains[l]; !ok || d == "" {
				return nil, fmt.Errorf("%s: domains: no domain for level %q", where(), l)
			}
		}
		if len(n.Domains) > len(c.Levels) {
			keys := make([]string, 0, len(n.Domains))
			for k := range n.Domains {
				if !slices.Contains(c.Levels, k) {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			if len(c.Levels) == 0 {
				return nil, fmt.Errorf("%s: domains: unknown level %q (the cluster declares no levels)", where(), keys[0])
			}
			return nil, fmt.Errorf("%s: domains: unknown level %q (cluster levels are %s)", where(), keys[0], strings.Join(c.Levels, ", "))
		}
		var bad uint64
		for k, g := range n.Unhealthy {
			if g < 0 || g >= n.GPUs {
				return nil, fmt.Errorf("%s: unhealthyGPUs[%d]: GPU index %d out of range 0..%d", where(), k, g, n.GPUs-1)
			}
			if bad&(1<<uint(g)) != 0 {
				return nil, fmt.Errorf("%s: unhealthyGPUs[%d]: GPU %d listed twice", where(), k, g)
			}
			bad |= 1 << uint(g)
		}
	}
	return types, nil
}

// checkCapacity refuses a negative CPU or memory capacity, naming it.
func (n *Node) checkCapacity() error {
	if n.CPUMillis < 0 {
		return fmt.Errorf("cpuMillis must be >= 0, got %d", n.CPUMillis)
	}
	if n.MemoryMiB < 0 {
		return fmt.Errorf("memoryMiB must be >= 0, got %d", n.MemoryMiB)
	}
	return nil
}

// MaxGPUTypes is the most GPU types a cluster may have. An [Index]
// keeps, per topology level, a bucket for every domain, GPU class (each
// type, and any) and free-GPU count, so its size grows with the product
// of domains and types; fleets have a handful of types, and the bound
// keeps a cluster of a few thousand nodes, each of its own type in its
// own domain, from needing gigabytes.
const MaxGPUTypes = 32

// MaxLevels is the most topology levels a cluster may declare. The index
// keeps, per domain, its way up through every level above it, so its size
// grows with the nodes times the square of the levels; real fabrics have
// a handful (spine, leaf, rack), and the bound keeps a small snapshot
// from needing gigabytes.
const MaxLevels = 16

// NodeGPUs names some GPUs of one node.
type NodeGPUs struct {
	// Node is the node's name.
	Node string
	// GPUs are indices of GPUs on that node, each below its GPU count.
	GPUs []int
}

// Allocation is the GPUs held by (or granted to) one job, node by node.
type Allocation []NodeGPUs

// Count returns the number of GPUs in a.
func (a Allocation) Count() int {
	n := 0
	for _, s := range a {
		n += len(s.GPUs)
	}
	return n
}

// Clone returns a deep copy of a.
func (a Allocation) Clone() Allocation {
	if a == nil {
		return nil
	}
	out := make(Allocation, len(a))
	for i, s := range a {
		out[i] = NodeGPUs{Node: s.Node, GPUs: slices.Clone(s.GPUs)}
	}
	return out
}

// Canonical returns a copy of a with slices of one node merged, nodes in
// name order and GPU indices ascending.
func (a Allocation) Canonical() Allocation {
	if len(a) == 0 {
		return nil
	}
	out := a.Clone()
	slices.SortStableFunc(out, func(x, y NodeGPUs) int { return strings.Compare(x.Node, y.Node) })
	w := 0
	for r := 0; r < len(out); r++ {
		if w > 0 && out[w-1].Node == out[r].Node {
			out[w-1].GPUs = append(out[w-1].GPUs, out[r].GPUs...)
			continue
		}
		out[w] = out[r]
		w++
	}
	out = out[:w]
	for i := range out {
		slices.Sort(out[i].GPUs)
	}
	return out
}

// String formats a as "n0[0-7] n1[0,2]".
func (a Allocation) String() string {
	var b strings.Builder
	for i, s := range a {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.Node)
		b.WriteByte('[')
		b.WriteString(formatRanges(s.GPUs))
		b.WriteByte(']')
	}
	return b.String()
}

func formatRanges(g []int) string {
	var b strings.Builder
	for i := 0; i < len(g); {
		j := i
		for j+1 < len(g) && g[j+1] == g[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", g[i], g[j])
		} else {
			fmt.Fprintf(&b, "%d", g[i])
		}
		i = j + 1
	}
	return b.String()
}

// Uniform returns a cluster of n ready nodes of gpus GPUs of gpuType each,
// with no topology levels, named "n00", "n01", … (zero-padded to at least
// two digits, so that name order is numeric order). It is meant for
// examples, tests and simulations.
func Uniform(n, gpus int, gpuType string) Cluster {
	width := max(2, len(fmt.Sprint(max(n-1, 0))))
	c := Cluster{Nodes: make([]Node, n)}
	for i := range c.Nodes {
		c.Nodes[i] = Node{Name: fmt.Sprintf("n%0*d", width, i), GPUs: gpus, GPUType: gpuType}
	}
	return c
}
