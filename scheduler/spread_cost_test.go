package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/topology"
)

// countingScorer is binpack.Spread that counts its calls.
type countingScorer struct{ calls *int }

func (s countingScorer) Score(c binpack.Candidate) int64 {
	*s.calls++
	return binpack.Spread{}.Score(c)
}

// TestSpreadGroupLevelCost: pending spread jobs of a group whose one
// running job holds 480 members in the only domain of their spread level
// (the spread-group-level amplifier, scaled down) are placed with a few
// placement tries each, not one per member that domain holds: the
// scorer is called at most 40 times per job. Trying every bound from 1
// to the most members a place holds made it 480 tries per job.
func TestSpreadGroupLevelCost(t *testing.T) {
	const nodes, jobs = 8, 20
	c := uniformCluster(nodes, 64, nodes)
	snap := &Snapshot{Now: spreadNow, Cluster: c}
	run := Job{ID: "run", Members: nodes * 60, GPUsPerMember: 1, Placement: Spread, Group: "web",
		Kind: Inference, State: Running, Started: spreadNow.Add(-time.Hour)}
	for i := range nodes {
		run.Allocation = append(run.Allocation, topology.NodeGPUs{Node: c.Nodes[i].Name, GPUs: topology.FirstN(60).Indices()})
	}
	snap.Jobs = append(snap.Jobs, run)
	for i := range jobs {
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("p%02d", i), Members: 1, GPUsPerMember: 1, Placement: Spread,
			Group: "web", SpreadLevel: "rack", Kind: Inference, Submitted: spreadNow})
	}
	calls := 0
	d, err := New(Config{Order: TierOrder{}, Spread: countingScorer{&calls}}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Placements, jobs)
	t.Logf("%d scorer calls for %d jobs", calls, jobs)
	require.LessOrEqual(t, calls, 40*jobs, "scorer calls")
}
