package scheduler

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// stepFile decodes the gzipped snapshot testdata/name and steps it with cfg.
func stepFile(t *testing.T, name string, cfg Config) (*Snapshot, *Decision) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	s := New(cfg)
	snap, err := s.DecodeSnapshot(z)
	require.NoError(t, err)
	d, err := s.Step(snap)
	require.NoError(t, err)
	return snap, d
}

// The preemption storm of issue 30: 4,096 nodes, 3,686 running jobs of
// tiers 1 to 3 and 10,000 pending. Without a budget one default Step
// evicted 2,451 running jobs; with the default budget it evicts at most
// 5% of the usable GPUs, or what its first preemptor needs.
func TestBudgetBoundsPreemptionStorm(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a 4,096-node snapshot; run without -short and -race")
	}
	snap, d := stepFile(t, "preempt-4096n-10000j.json.gz", Config{})
	gpus := map[string]int{}
	running := 0
	for _, j := range snap.Jobs {
		gpus[j.ID] = j.Members * j.GPUsPerMember
		if j.State == Running {
			running++
		}
	}
	usable := usableGPUs(snap)
	evicted, first := 0, ""
	for _, e := range d.Evictions {
		if e.Reason == EvictPreempted {
			evicted += gpus[e.Job]
			if first == "" {
				first = e.By
			}
		}
	}
	budget := (usable*DefaultBudgetPercent + 99) / 100
	t.Logf("%d of %d running jobs evicted, %d GPUs; budget %d of %d usable GPUs; %d reservations",
		len(d.Evictions), running, evicted, budget, usable, len(d.Reservations))
	require.Equal(t, 3686, running)
	require.NotZero(t, evicted, "the budget serves at least one preemptor")
	require.LessOrEqual(t, evicted, budget)
	require.Less(t, len(d.Evictions), 2451/10)
	awaiting := 0
	for _, w := range d.Pending {
		if w.Reason == ReasonAwaitingPreemption {
			awaiting++
		}
	}
	require.NotZero(t, awaiting, "preemptors beyond the budget wait")
}

// usableGPUs counts the healthy GPUs of ready nodes.
func usableGPUs(s *Snapshot) int {
	n := 0
	for _, nd := range s.Cluster.Nodes {
		if nd.State == topology.Ready {
			n += nd.GPUs - len(nd.Unhealthy)
		}
	}
	return n
}
