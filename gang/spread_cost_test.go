package gang_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// TestSpreadGangCostLinear: a Distinct gang of M = 64·N one-GPU members
// on N nodes of 64 GPUs (the spread-gang amplifier) makes at most
// 4·M + 16·N Avoid and Occupied callbacks, with and without a spread
// level. Scanning every node for every member once the fresh places ran
// out made it N·M (780,194 callbacks here), and checking each node
// against every slot taken made the time O(N·M²).
func TestSpreadGangCostLinear(t *testing.T) {
	const n = 64
	for _, spread := range []bool{false, true} {
		c := topology.Uniform(n, 64, "H100")
		if spread {
			c.Levels = []string{"rack"}
			for i := range c.Nodes {
				c.Nodes[i].Domains = map[string]string{"rack": fmt.Sprintf("r%d", i/4)}
			}
		}
		ix, err := topology.NewIndex(&c)
		require.NoError(t, err)
		calls := 0
		r := gang.NewRequest(64*n, 1)
		r.Distinct = true
		if spread {
			r.SpreadLevel = 0
		}
		r.Avoid = func(topology.NodeID) bool { calls++; return false }
		r.Occupied = func(topology.NodeID) bool { calls++; return false }
		pl, out := gang.Place(ix, r, binpack.Spread{})
		require.Equal(t, gang.Placed, out)
		require.Len(t, pl.Allocation(ix), n)
		t.Logf("spread level %v: %d callbacks for %d members on %d nodes", spread, calls, r.Members, n)
		require.LessOrEqual(t, calls, 4*r.Members+16*n, "callbacks")
	}
}
