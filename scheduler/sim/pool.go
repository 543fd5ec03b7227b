package sim

import (
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// pool is the part of the cluster that Step is shown.
//
// Step's cost grows with the nodes of its snapshot, so a flat pool of a
// million one-GPU nodes (an SWF header's MaxProcs) would cost a million
// nodes per Step however few jobs run. When the cluster is such a pool
// and the policy cannot tell the difference (see narrowable), the
// snapshot holds only a prefix of the nodes, long enough that
//
//   - every node holding GPUs lies in it, and
//   - its free nodes hold every pending job at once (free ≥ the GPUs
//     pending).
//
// Then the Step on the prefix decides what the Step on the whole pool
// would: every pending job fits in either, so each starts now, and on the
// same nodes, since among equal free nodes the placer takes the first by
// name, which are in the prefix. When the pending jobs do not all fit,
// the prefix is the whole pool. So a Step costs O(nodes in use + GPUs
// pending), not O(nodes).
//
// Example: 100,000 nodes, 40 held (the highest at index 57), 10 GPUs
// pending: the prefix is max(57+1, 40+10) = 58 nodes.
type pool struct {
	nodes  []topology.Node // every node of the cluster
	narrow bool            // show a prefix, as above
	// top is one past the highest node holding GPUs, or more: it is
	// lowered lazily, when the prefix is cut. planTop is one past the
	// highest node of the plan, which the prefix keeps too.
	top, planTop int
}

// narrowable reports whether the prefix of a pool decides as the whole
// would: nodes of one GPU each, alike (type, state, no unhealthy GPUs, no
// topology), named in ascending order (so the placer's name order is
// index order), no node events; the policy's order is TierOrder with no
// custom hook (the default multifactor order weighs a job's size against
// the cluster's), no team has a quota (borrowing depends on idle GPUs),
// and no Observe callback looks at the snapshots.
func narrowable(c *topology.Cluster, cfg *scheduler.Config, opt *Options) bool {
	if len(c.Levels) > 0 || len(opt.NodeEvents) > 0 || opt.Observe != nil || !readsTeamsOnlyForQuotas(cfg) {
		return false
	}
	for _, t := range opt.Teams {
		if t.Quota != nil {
			return false
		}
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.GPUs != 1 || n.GPUType != c.Nodes[0].GPUType || n.State != topology.Ready ||
			len(n.Unhealthy) > 0 || len(n.Domains) > 0 || (i > 0 && n.Name <= c.Nodes[i-1].Name) {
			return false
		}
	}
	return true
}

// shown returns the nodes Step is shown, given the GPUs held (by
// running and evicting jobs), the GPUs the pending jobs ask for and
// held[n], the GPUs held on node n.
func (p *pool) shown(busy, pendingGPUs int, held []topology.GPUSet) []topology.Node {
	if !p.narrow {
		return p.nodes
	}
	for p.top > 0 && held[p.top-1] == 0 {
		p.top--
	}
	return p.nodes[:min(max(p.top, p.planTop, busy+pendingGPUs), len(p.nodes))]
}

// took records that node n holds GPUs.
func (p *pool) took(n int) { p.top = max(p.top, n+1) }
