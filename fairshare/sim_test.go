package fairshare

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// simulateShares runs invariant 8 of the design as a small deterministic
// simulation: a cluster of gpus GPUs, teams A, B and C with shares 40, 35
// and 25, each with an endless queue of jobs of jobGPUs GPUs that run one
// hour. At the start of every hour all GPUs are free (every job of the hour
// before has ended) and are filled one job at a time with the job that
// Weights.Compare puts first, using the team's fair-share factor under alg;
// each job's GPU-hours are charged to the ledger when it starts. Before the
// start, team A used 60% of last week's GPU-hours and B and C 20% each,
// spread evenly over the week. It returns the GPU-hours per team per week.
func simulateShares(t *testing.T, alg Algorithm, gpus, jobGPUs, weeks int) []map[string]float64 {
	t.Helper()
	teams := []string{"A", "B", "C"}
	tree, err := NewTree([]Account{{Name: "A", Share: 40}, {Name: "B", Share: 35}, {Name: "C", Share: 25}})
	require.NoError(t, err)
	ledger := tree.NewLedger(0)
	start := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for h := range 168 {
		at := start.Add(time.Duration(h-168) * time.Hour)
		for i, frac := range []float64{0.6, 0.2, 0.2} {
			require.NoError(t, ledger.Add(teams[i], frac*float64(gpus)*3600, at))
		}
	}
	var w Weights
	submitted := start.Add(-time.Hour) // every queue holds jobs this old
	out := make([]map[string]float64, weeks)
	for week := range out {
		out[week] = map[string]float64{}
		for h := range 168 {
			at := start.Add(time.Duration(week*168+h) * time.Hour)
			for free := gpus; free >= jobGPUs; free -= jobGPUs {
				fs := tree.Factors(ledger.OwnUsage(at))
				best := ""
				var bestKey JobFactors
				for _, team := range teams { // ties go to the first name
					key := JobFactors{Tier: 1, FairShare: fs.Value(team, alg), Age: at.Sub(submitted), GPUs: jobGPUs, ClusterGPUs: gpus}
					if best == "" || w.Less(key, bestKey) {
						best, bestKey = team, key
					}
				}
				require.NoError(t, ledger.Add(best, float64(jobGPUs)*3600, at))
				out[week][best] += float64(jobGPUs)
			}
		}
	}
	return out
}

func TestInvariant8FairShareConverges(t *testing.T) {
	const tolerance = 0.03 // 3 percentage points
	target := map[string]float64{"A": 0.40, "B": 0.35, "C": 0.25}
	for _, tc := range []struct {
		alg     Algorithm
		jobGPUs int
		weeks   int
	}{
		{FairTree, 8, 8},
		{Classic, 8, 8},
		{FairTree, 1, 4},
	} {
		t.Run(fmt.Sprintf("%s/%d-GPU jobs", tc.alg, tc.jobGPUs), func(t *testing.T) {
			weeks := simulateShares(t, tc.alg, 256, tc.jobGPUs, tc.weeks)
			for i, hours := range weeks {
				total := hours["A"] + hours["B"] + hours["C"]
				require.InDelta(t, 256*168, total, 1e-9, "week %d: the cluster is saturated", i)
				t.Logf("week %d: A %.3f  B %.3f  C %.3f", i, hours["A"]/total, hours["B"]/total, hours["C"]/total)
				if i < 2 {
					continue
				}
				for team, share := range target {
					require.InDelta(t, share, hours[team]/total, tolerance, "week %d, team %s", i, team)
				}
			}
			// In the first week A, which over-used last week, must get less than its share.
			first := weeks[0]
			require.Less(t, first["A"]/(256*168), target["A"]-tolerance)
		})
	}
}
