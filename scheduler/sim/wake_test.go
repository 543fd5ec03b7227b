package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
	"github.com/gpusched/gpusched/topology"
)

// A job protected by a minimum runtime becomes a victim when it has run
// it, an instant with no event of its own: the simulator Steps at the
// decision's NextWake then. V (tier 3) holds the only node from 0 for
// 10h; P (tier 1) arrives at 10m; with a minimum runtime of 30m, P
// preempts V at 30m and starts then, not when V ends.
func TestMinRuntimeWakesTheSimulator(t *testing.T) {
	jobs := []sim.Job{
		{ID: "V", Run: 10 * time.Hour, Members: 1, GPUsPerMember: 8, Tier: scheduler.P3, Kind: scheduler.Inference},
		{ID: "P", Submit: 10 * time.Minute, Run: time.Hour, Limit: 2 * time.Hour, Members: 1, GPUsPerMember: 8, Tier: scheduler.P1},
	}
	res, err := sim.Run(topology.Uniform(1, 8, ""), jobs, scheduler.Config{MinRuntime: 30 * time.Minute}, sim.Options{})
	require.NoError(t, err)
	for _, j := range res.Jobs {
		switch j.ID {
		case "P":
			require.Equal(t, 30*time.Minute, j.Start, "%+v", j)
		case "V":
			require.Equal(t, 1, j.Preemptions, "%+v", j)
		}
	}
}
