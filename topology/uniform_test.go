package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUniform(t *testing.T) {
	c := Uniform(3, 8, "H100")
	require.NoError(t, c.Validate())
	require.Equal(t, []Node{{Name: "n00", GPUs: 8, GPUType: "H100"}, {Name: "n01", GPUs: 8, GPUType: "H100"}, {Name: "n02", GPUs: 8, GPUType: "H100"}}, c.Nodes)
	big := Uniform(1000, 4, "")
	require.Equal(t, "n000", big.Nodes[0].Name)
	require.Equal(t, "n999", big.Nodes[999].Name)
	ix, err := NewIndex(&big)
	require.NoError(t, err)
	id, _ := ix.Lookup("n100")
	require.Equal(t, NodeID(100), id, "name order is numeric order")
	require.Empty(t, Uniform(0, 8, "").Nodes)
}
