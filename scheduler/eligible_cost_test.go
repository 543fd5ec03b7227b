package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// eligibleCostWorld is a cluster of nodes 8-GPU nodes in racks of 32, of
// which the first 2·jobs are held by running jobs until +2h and the next
// releases nodes one by one over the first two hours (one node per
// minute); the rest is free. Each of jobs pending jobs of 8 GPUs may use
// two of the held nodes only: the free GPUs elsewhere would hold them,
// their eligible nodes will not before +2h.
func eligibleCostWorld(nodes, jobs, releases int) *Snapshot {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	c := uniformCluster(nodes, 8, 32)
	snap := &Snapshot{Now: now, Cluster: c}
	all := topology.FirstN(8).Indices()
	for i := range 2*jobs + releases {
		limit := 2 * time.Hour
		if i >= 2*jobs {
			limit = time.Duration(i-2*jobs+1) * time.Minute
		}
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("r%05d", i), Tier: P1, Members: 1, GPUsPerMember: 8,
			State: Running, Started: now, TimeLimit: limit,
			Allocation: topology.Allocation{{Node: c.Nodes[i].Name, GPUs: all}}})
	}
	for i := range jobs {
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("p%05d", i), Tier: P2, Members: 1, GPUsPerMember: 8,
			TimeLimit: time.Hour, Submitted: now,
			EligibleNodes: []string{c.Nodes[2*i].Name, c.Nodes[2*i+1].Name}})
	}
	return snap
}

// TestEligibleCost: jobs that may use two nodes each, on a cluster of
// 16,384 nodes that would hold them elsewhere, cost work in proportion
// to their lists, not to the cluster: the capability packages look at
// few nodes one by one for them (counted: calls of the Avoid predicate).
func TestEligibleCost(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster of 16,384 nodes")
	}
	const nodes, jobs, releases = 16384, 200, 120
	for _, mode := range []BackfillMode{EASY, Conservative} {
		d, probes, err := stepCountingProbes(Config{Backfill: mode, Order: TierOrder{}}, eligibleCostWorld(nodes, jobs, releases))
		require.NoError(t, err)
		waits := 0
		for _, w := range d.Pending {
			if w.Reason == ReasonNoEligibleNode {
				waits++
			}
		}
		t.Logf("mode %d: %d reservations, %d no-eligible-node, %d probes", mode, len(d.Reservations), waits, probes)
		require.Len(t, d.Placements, 0)
		require.Equal(t, jobs, len(d.Reservations)+waits)
		require.LessOrEqual(t, probes, 64*jobs, "nodes looked at one by one")
	}
}
