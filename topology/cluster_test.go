package topology_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/topology"
)

// TestValidateNamesLikeAMap: Validate and NewIndex find repeated node
// names from the nodes' name order; they must report what a map filled
// in node order reports: the first node whose name came before, and the
// first node of that name. Errors in other fields before it come first.
// Lookup must find every name at the node that has it.
func TestValidateNamesLikeAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		names := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "c", "n1", "n10", "n2", "x"}), 1, 12).Draw(t, "names")
		bad := rapid.IntRange(-1, len(names)-1).Draw(t, "badGPUs") // a node with 0 GPUs, or none
		c := &topology.Cluster{}
		for i, n := range names {
			g := 8
			if i == bad {
				g = 0
			}
			c.Nodes = append(c.Nodes, topology.Node{Name: n, GPUs: g})
		}
		want := ""
		seen := map[string]int{}
		for i, n := range names {
			if j, dup := seen[n]; dup {
				want = fmt.Sprintf("nodes[%d] %q: duplicate node name (also nodes[%d])", i, n, j)
				break
			}
			seen[n] = i
			if i == bad {
				want = fmt.Sprintf("nodes[%d] %q: gpus must be in 1..%d, got 0", i, n, topology.MaxGPUsPerNode)
				break
			}
		}
		err := c.Validate()
		_, ixErr := topology.NewIndex(c)
		if want == "" {
			require.NoError(t, err)
			require.NoError(t, ixErr)
			ix, _ := topology.NewIndex(c)
			for _, n := range names {
				id, ok := ix.Lookup(n)
				require.True(t, ok, n)
				require.Equal(t, n, ix.Name(id))
			}
			for _, miss := range []string{"", "0", "absent", "n11", "zzz"} {
				id, ok := ix.Lookup(miss)
				require.False(t, ok, miss)
				require.Zero(t, id, "a miss returns node 0, as documented")
			}
			return
		}
		require.EqualError(t, err, want)
		require.EqualError(t, ixErr, want)
	})
}

// TestValidateRefusesHugeIndexes: a cluster whose every node has its own
// GPU type and its own domain would need an index quadratic in its nodes;
// Validate and NewIndex refuse it with the level and the sizes, and the
// same cluster with one GPU type is fine.
func TestValidateRefusesHugeIndexes(t *testing.T) {
	c := &topology.Cluster{Levels: []string{"leaf"}}
	for i := range 400 {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%04d", i), GPUs: 64,
			GPUType: fmt.Sprintf("t%d", i), Domains: map[string]string{"leaf": fmt.Sprintf("l%d", i)}})
	}
	want := `levels[0] "leaf": 400 domains × 401 GPU classes (each type, and any) × 65 free-GPU counts need 10426000 index buckets, more than 4194304`
	require.EqualError(t, c.Validate(), want)
	_, err := topology.NewIndex(c)
	require.EqualError(t, err, want)
	for i := range c.Nodes {
		c.Nodes[i].GPUType = "H100"
	}
	require.NoError(t, c.Validate())

	// Without levels, the cluster is the one domain: enough types alone
	// are too many.
	flat := &topology.Cluster{}
	for i := range 65000 {
		flat.Nodes = append(flat.Nodes, topology.Node{Name: fmt.Sprintf("n%05d", i), GPUs: 64, GPUType: fmt.Sprintf("t%d", i)})
	}
	require.ErrorContains(t, flat.Validate(), "nodes: 65001 GPU classes (each type, and any) × 65 free-GPU counts need 4225065 index buckets")
}
