package preempt

import (
	"fmt"
	"testing"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
	"github.com/stretchr/testify/require"
)

// grid returns a cluster of nodes n0..n{k-1} with g GPUs each, in leaves
// of perLeaf nodes under one spine.
func grid(k, g, perLeaf int) *topology.Cluster {
	c := &topology.Cluster{Levels: []string{"spine", "leaf"}}
	for i := 0; i < k; i++ {
		c.Nodes = append(c.Nodes, topology.Node{
			Name: fmt.Sprintf("n%d", i), GPUs: g, GPUType: "H100",
			Domains: map[string]string{"spine": "s0", "leaf": fmt.Sprintf("l%d", i/perLeaf)},
		})
	}
	return c
}

// hold builds the Hold of GPUs gpus on the named node.
func holdOn(t testing.TB, ix *topology.Index, node string, gpus ...int) Hold {
	n, ok := ix.Lookup(node)
	require.True(t, ok, node)
	return Hold{Node: n, GPUs: topology.SetOf(gpus...)}
}

func whole(t testing.TB, ix *topology.Index, nodes ...string) []Hold {
	var hs []Hold
	for _, n := range nodes {
		id, ok := ix.Lookup(n)
		require.True(t, ok, n)
		hs = append(hs, Hold{Node: id, GPUs: topology.FirstN(ix.GPUs(id))})
	}
	return hs
}

// takeAll holds every candidate's GPUs in ix.
func takeAll(t testing.TB, ix *topology.Index, cands []Candidate) {
	for _, c := range cands {
		for _, h := range c.Holds {
			require.NoError(t, ix.TakeSet(h.Node, h.GPUs))
		}
	}
}

func ids(cands []Candidate, idx []int) []string {
	out := []string{}
	for _, i := range idx {
		out = append(out, cands[i].ID)
	}
	return out
}

// snapshot is everything observable about an index's free capacity.
type snapshot struct {
	free, held []topology.GPUSet
	counts     []int
}

func snap(ix *topology.Index) snapshot {
	var s snapshot
	for n := topology.NodeID(0); int(n) < ix.NumNodes(); n++ {
		s.free = append(s.free, ix.FreeSet(n))
		s.held = append(s.held, ix.Held(n))
	}
	classes := []topology.Class{topology.AnyType}
	for _, typ := range ix.Types() {
		c, _ := ix.Class(typ)
		classes = append(classes, c)
	}
	for l := topology.ClusterLevel; l < ix.NumLevels(); l++ {
		for d := topology.DomainID(0); int(d) < ix.NumDomains(l); d++ {
			for _, c := range classes {
				s.counts = append(s.counts, ix.FreeGPUs(l, d, c), ix.UsedGPUs(l, d, c))
				for f := 0; f <= ix.MaxGPUs(); f++ {
					s.counts = append(s.counts, ix.NodesWithFree(l, d, c, f))
				}
			}
		}
	}
	return s
}

// checkPlacement reports why p is not a valid placement of r on the free
// GPUs of ix, or "".
func checkPlacement(ix *topology.Index, r gang.Request, p gang.Placement) string {
	members := 0
	taken := map[topology.NodeID]topology.GPUSet{}
	for _, s := range p.Slots {
		if s.GPUs&taken[s.Node] != 0 {
			return fmt.Sprintf("node %d: a GPU in two slots", s.Node)
		}
		taken[s.Node] |= s.GPUs
		if s.GPUs&^ix.FreeSet(s.Node) != 0 {
			return fmt.Sprintf("node %d: GPUs %v not free (free %v)", s.Node, s.GPUs.Indices(), ix.FreeSet(s.Node).Indices())
		}
		if s.Members < 1 || s.GPUs.Len() != s.Members*r.GPUsPerMember {
			return fmt.Sprintf("node %d: %d GPUs for %d members", s.Node, s.GPUs.Len(), s.Members)
		}
		if !ix.InClass(s.Node, r.Class) {
			return fmt.Sprintf("node %d: wrong GPU type", s.Node)
		}
		if r.Required != gang.NoLevel && ix.DomainOf(r.Required, s.Node) != ix.DomainOf(r.Required, p.Slots[0].Node) {
			return fmt.Sprintf("node %d: outside the required domain", s.Node)
		}
		if ix.DomainOf(p.Level, s.Node) != p.Domain {
			return fmt.Sprintf("node %d: outside the placement's domain", s.Node)
		}
		members += s.Members
	}
	if members != r.Members {
		return fmt.Sprintf("%d members placed, want %d", members, r.Members)
	}
	return ""
}
