package scheduler

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// TestDecodeAllocsPerNode: decoding a snapshot of 2,000 nodes (a name, a
// GPU type and two domains each) makes at most 3.5 allocations per node,
// most of them the node's domain map (about 3.1 now). Each node's text is
// read from one buffer that the reader reuses; with a new one per node
// it made about 4.1.
func TestDecodeAllocsPerNode(t *testing.T) {
	const n = 2000
	s := &Snapshot{Now: spreadNow}
	s.Cluster.Levels = []string{"spine", "leaf"}
	for i := range n {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: fmt.Sprintf("n%05d", i), GPUs: 8, GPUType: "H100",
			Domains: map[string]string{"spine": fmt.Sprintf("s%d", i/256), "leaf": fmt.Sprintf("l%d", i/32)}})
	}
	var buf bytes.Buffer
	require.NoError(t, EncodeSnapshot(&buf, s))
	data := buf.Bytes()
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := DecodeSnapshot(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations for %d nodes", allocs, n)
	require.LessOrEqual(t, allocs, float64(n)*3.5, "allocations")
}
