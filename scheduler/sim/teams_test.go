package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/scheduler"
)

// teamJobs are n one-GPU jobs of 10 s arriving every second, spread over
// teams teams: at most ten run at a time whatever the number of teams.
func teamJobs(n, teams int) []Job {
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{ID: fmt.Sprintf("j%05d", i), Submit: time.Duration(i) * time.Second,
			Run: 10 * time.Second, Limit: 10 * time.Second, Members: 1, GPUsPerMember: 1,
			Team: fmt.Sprintf("team%05d", i%teams)}
	}
	return jobs
}

// Under TierOrder the cost of a replay does not grow with jobs × teams:
// 2,000 jobs of 2,000 teams allocate what 2,000 jobs of one team do, plus
// a constant per team (its counters, ledger record, summary and series buckets). Charging every
// team at every event, or listing every team in every snapshot (which
// Step then validates), costs per team at each of the ~4,000 events.
func TestManyTeamsCostPerTeamOnce(t *testing.T) {
	cfg := scheduler.Config{Order: scheduler.TierOrder{}, Backfill: scheduler.EASY}
	// Few points: the series holds a share per team and point by contract.
	opt := Options{MaxPoints: 4}
	cost := func(teams int) uint64 {
		jobs := teamJobs(2000, teams)
		return allocated(func() {
			res, err := Run(Uniform(64, 1), jobs, cfg, opt)
			require.NoError(t, err)
			require.Len(t, res.Summary.Teams, teams)
		})
	}
	one, many := cost(1), cost(2000)
	t.Logf("allocated: %d bytes with one team, %d with 2,000", one, many)
	const perTeam = 2 << 10
	require.LessOrEqual(t, many, one+perTeam*2000, "2,000 teams cost %d bytes, one %d", many, one)
}

// Charging only the teams that hold GPUs charges what charging all did:
// the other teams would add zero.
func TestTeamBookHolders(t *testing.T) {
	b := newTeamBook([]string{"a", "b", "c", "d"}, time.Hour)
	b.hold(2, 3)
	b.hold(0, 1)
	b.hold(3, 2)
	b.hold(0, -1)
	require.Equal(t, []int32{2, 3}, b.holders())
	b.charge(10, DefaultStart())
	require.Equal(t, []float64{0, 0, 30, 20}, b.sec)
	b.hold(2, -3)
	b.hold(1, 4)
	require.Equal(t, []int32{1, 3}, b.holders())
	require.Equal(t, []int32{-1, 0, -1, 1}, b.pos)
}
