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

// TestValidateRefusesTooManyGPUTypes: an index grows with domains × GPU
// types, so a cluster may have at most MaxGPUTypes types; the node that
// brings one more is named, and Validate and NewIndex agree.
func TestValidateRefusesTooManyGPUTypes(t *testing.T) {
	c := &topology.Cluster{Levels: []string{"leaf"}}
	for i := range 400 {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%04d", i), GPUs: 64,
			GPUType: fmt.Sprintf("t%d", i%(topology.MaxGPUTypes+1)), Domains: map[string]string{"leaf": fmt.Sprintf("l%d", i)}})
	}
	want := fmt.Sprintf(`nodes[%d] "n%04d": gpuType: "t%d" would be GPU type number %d of the cluster; at most %d are allowed`,
		topology.MaxGPUTypes, topology.MaxGPUTypes, topology.MaxGPUTypes, topology.MaxGPUTypes+1, topology.MaxGPUTypes)
	require.EqualError(t, c.Validate(), want)
	_, err := topology.NewIndex(c)
	require.EqualError(t, err, want)
	for i := range c.Nodes {
		c.Nodes[i].GPUType = fmt.Sprintf("t%d", i%topology.MaxGPUTypes)
	}
	require.NoError(t, c.Validate(), "exactly MaxGPUTypes types")
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	require.Len(t, ix.Types(), topology.MaxGPUTypes)
}

// TestValidateUnknownLevelNamesTheLevels: a node that names a level the
// cluster does not declare is told which levels it does declare, and a
// flat cluster says it declares none rather than listing nothing.
func TestValidateUnknownLevelNamesTheLevels(t *testing.T) {
	for _, tc := range []struct {
		levels []string
		want   string
	}{
		{nil, `nodes[0] "n0": domains: unknown level "rack" (the cluster declares no levels)`},
		{[]string{"spine", "leaf"}, `nodes[0] "n0": domains: unknown level "rack" (cluster levels are spine, leaf)`},
	} {
		domains := map[string]string{"rack": "r0"}
		for _, l := range tc.levels {
			domains[l] = l + "0"
		}
		c := &topology.Cluster{Levels: tc.levels, Nodes: []topology.Node{{Name: "n0", GPUs: 8, Domains: domains}}}
		require.EqualError(t, c.Validate(), tc.want)
		_, err := topology.NewIndex(c)
		require.EqualError(t, err, tc.want)
	}
}

// TestValidateRefusesTooManyLevels: MaxLevels levels are a valid cluster,
// one more is refused before any node is looked at (the index's size
// grows with the square of the levels).
func TestValidateRefusesTooManyLevels(t *testing.T) {
	cluster := func(levels int) *topology.Cluster {
		c := &topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8, Domains: map[string]string{}}}}
		for l := range levels {
			name := fmt.Sprintf("l%d", l)
			c.Levels = append(c.Levels, name)
			c.Nodes[0].Domains[name] = "d0"
		}
		return c
	}
	require.NoError(t, cluster(topology.MaxLevels).Validate())
	require.EqualError(t, cluster(topology.MaxLevels+1).Validate(), fmt.Sprintf("levels: %d levels; at most %d are allowed", topology.MaxLevels+1, topology.MaxLevels))
}
