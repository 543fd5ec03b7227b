package backfill_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// TestUsableAndTake: one node of four GPUs, GPUs 0 and 1 held until 1h,
// GPU 3 unhealthy, GPU 2 reserved during [2h, 3h).
func TestUsableAndTake(t *testing.T) {
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4, Unhealthy: []int{3}}}}
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	require.NoError(t, ix.TakeSet(0, topology.SetOf(0, 1)))
	p := backfill.NewProfile(ix)
	p.AddRelease(0, topology.SetOf(0, 1), time.Hour)
	p.Reserve(gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(2), Members: 1}}}, 2*time.Hour, time.Hour)
	on := func(gpus ...int) gang.Placement {
		return gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(gpus...), Members: len(gpus)}}}
	}
	for _, tc := range []struct {
		gpus     []int
		start, d time.Duration
		want     bool
	}{
		{[]int{0, 1}, time.Hour, time.Hour, true},         // released by then
		{[]int{0, 1}, 30 * time.Minute, time.Hour, false}, // still held
		{[]int{0}, 0, time.Hour, false},                   // held now
		{[]int{2}, 0, 2 * time.Hour, true},                // ends as the reservation starts
		{[]int{2}, 0, 2*time.Hour + 1, false},             // runs into it
		{[]int{2}, 3 * time.Hour, time.Hour, true},        // after it
		{[]int{3}, 0, time.Hour, false},                   // unhealthy
		{[]int{3}, 2 * time.Hour, time.Hour, false},       // unhealthy, later too
	} {
		require.Equal(t, tc.want, p.Usable(on(tc.gpus...), tc.start, tc.d), "%v from %v for %v", tc.gpus, tc.start, tc.d)
	}
	p.Take(on(2), time.Hour)
	require.Equal(t, topology.SetOf(0, 1, 2), ix.Held(0))
	require.False(t, p.Usable(on(2), 30*time.Minute, time.Minute))
	require.True(t, p.Usable(on(2), time.Hour, time.Hour))
}
