package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/scheduler"
)

// TestFairShareConverges is DESIGN invariant 8 through the simulator and
// Step's default multifactor order: three teams with shares 40/35/25 keep
// a 64-GPU cluster saturated with 8-GPU, 6-hour jobs; the ledger charges
// their usage (7-day half-life) and every snapshot carries it. From the
// third week on, each team's GPU-hours per week are within 3 percentage
// points of its share.
func TestFairShareConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("a four-week replay")
	}
	const weeks = 4
	teams := []scheduler.Team{{Name: "a", Share: 40}, {Name: "b", Share: 35}, {Name: "c", Share: 25}}
	var jobs []Job
	for _, tm := range teams {
		for i := range 8 * 28 * weeks / 2 { // more than a team can run alone
			jobs = append(jobs, Job{ID: fmt.Sprintf("%s%04d", tm.Name, i), Team: tm.Name, Submit: 0,
				Run: 6 * time.Hour, Limit: 6 * time.Hour, Members: 1, GPUsPerMember: 8})
		}
	}
	res, err := Run(Uniform(8, 8), jobs, scheduler.Config{}, Options{Teams: teams, RecordRuns: true})
	require.NoError(t, err)
	week := 7 * 24 * time.Hour
	gpuh := make([]map[string]float64, weeks)
	for w := range gpuh {
		gpuh[w] = map[string]float64{}
	}
	for _, j := range res.Jobs {
		for _, a := range j.Runs {
			for w := range weeks {
				lo, hi := time.Duration(w)*week, time.Duration(w+1)*week
				s, e := max(a.Start, lo), min(a.End, hi)
				if e > s {
					gpuh[w][j.Team] += 8 * (e - s).Hours()
				}
			}
		}
	}
	for w := range weeks {
		total := gpuh[w]["a"] + gpuh[w]["b"] + gpuh[w]["c"]
		require.InDelta(t, 64*7*24, total, 64*6+1, "week %d: the cluster stays full", w)
		for _, tm := range teams {
			got := gpuh[w][tm.Name] / total
			t.Logf("week %d team %s share %.3f (target %.2f)", w, tm.Name, got, tm.Share/100)
			if w >= 2 {
				require.InDelta(t, tm.Share/100, got, 0.03, "week %d team %s", w, tm.Name)
			}
		}
	}
}
