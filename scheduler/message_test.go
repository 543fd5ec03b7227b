package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// The messages of jobs that wait for GPUs say what stands in the way:
// enough free GPUs split across nodes is not the same as too few, a count
// of one is singular, and a job's GPU type is named.
func TestWaitMessages(t *testing.T) {
	now := quotaNow
	held := func(id, node string, k int) Job {
		j := Job{ID: id, Tier: P0, Members: 1, GPUsPerMember: k, State: Running, Started: now.Add(-time.Hour),
			Allocation: topology.Allocation{{Node: node}}}
		for g := range k {
			j.Allocation[0].GPUs = append(j.Allocation[0].GPUs, g)
		}
		return j
	}
	cl := topology.Cluster{Nodes: []topology.Node{
		{Name: "n0", GPUs: 8, GPUType: "H100"}, {Name: "n1", GPUs: 8, GPUType: "H100"},
		{Name: "n2", GPUs: 8, GPUType: "H100"}, {Name: "a0", GPUs: 8, GPUType: "A100"}}}
	pending := func(id string, m, g int, typ string) Job {
		return Job{ID: id, Tier: P3, Members: m, GPUsPerMember: g, GPUType: typ, Submitted: now}
	}
	messages := func(used [3]int, jobs ...Job) map[string]string {
		all := []Job{held("ra", "a0", 8)}
		for i, k := range used {
			if k > 0 {
				all = append(all, held(fmt.Sprintf("r%d", i), fmt.Sprintf("n%d", i), k))
			}
		}
		snap := &Snapshot{Now: now, Cluster: cl, Jobs: append(all, jobs...)}
		d, err := New(Config{Order: TierOrder{}, DisablePreemption: true}).Step(snap)
		require.NoError(t, err)
		require.Empty(t, d.Placements)
		got := map[string]string{}
		for _, p := range d.Pending {
			got[p.Job] = string(p.Reason) + ": " + p.Message
		}
		return got
	}
	// 4, 4 and 2 GPUs free: 10 in all, no node with 8.
	require.Equal(t, map[string]string{
		"zero":  "insufficient-gpus: needs 1×8 H100 GPUs, 10 free but split across nodes: room for 0 members",
		"short": "insufficient-gpus: needs 2×8 H100 GPUs, 10 free",
		"never": "unsatisfiable: needs 2×8 A100 GPUs; this cluster holds at most 1 such member",
	}, messages([3]int{4, 4, 6}, pending("zero", 1, 8, "H100"), pending("short", 2, 8, "H100"), pending("never", 2, 8, "A100")))
	// 8, 2 and 2 GPUs free: room for one member of 6.
	require.Equal(t, map[string]string{
		"one": "insufficient-gpus: needs 2×6 GPUs, 12 free but split across nodes: room for 1 member",
	}, messages([3]int{0, 6, 6}, pending("one", 2, 6, "")))
}
