package host_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestDuration: only zero minutes and seconds after a larger unit are
// trimmed, never digits of the larger unit ("20m" came out as "2",
// "1h30m" as "1h3", "10s" as "1").
func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{time.Nanosecond, "1ns"},
		{1500 * time.Microsecond, "1.5ms"},
		{time.Second, "1s"},
		{10 * time.Second, "10s"},
		{90 * time.Second, "1m30s"},
		{1500 * time.Millisecond, "1.5s"},
		{time.Minute, "1m"},
		{5 * time.Minute, "5m"},
		{10 * time.Minute, "10m"},
		{20 * time.Minute, "20m"},
		{20*time.Minute + 10*time.Second, "20m10s"},
		{time.Hour, "1h"},
		{time.Hour + 30*time.Minute, "1h30m"},
		{time.Hour + 30*time.Second, "1h0m30s"},
		{time.Hour + 10*time.Minute + 20*time.Second, "1h10m20s"},
		{10 * time.Hour, "10h"},
		{100 * time.Hour, "100h"},
		{-20 * time.Minute, "-20m"},
		{-90 * time.Minute, "-1h30m"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			got := host.Duration(tc.d)
			require.Equal(t, tc.want, got, "%d ns", int64(tc.d))
			back, err := time.ParseDuration(got)
			require.NoError(t, err)
			require.Equal(t, tc.d, back, "%q does not parse back", got)
		})
	}
}

// TestNodeDownEvictionFreesAtOnce: a job evicted because a node is down
// gets no grace, so the host drops it (and requeues it) at the next
// Advance, whatever its checkpoint grace; it kept its GPUs on the nodes
// still up for its checkpoint grace, though the decision had promised
// them to others at once.
func TestNodeDownEvictionFreesAtOnce(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	c := topology.Cluster{Nodes: []topology.Node{{Name: "up", GPUs: 1}, {Name: "down", GPUs: 1, State: topology.Down}}}
	run := func(id string) scheduler.Job {
		return scheduler.Job{ID: id, Members: 2, GPUsPerMember: 1, State: scheduler.Running, Started: now.Add(-time.Hour),
			CheckpointGrace: 10 * time.Minute, Allocation: topology.Allocation{{Node: "down", GPUs: []int{0}}, {Node: "up", GPUs: []int{0}}}}
	}
	h := host.New(c, run("A"))
	h.Apply(now, &scheduler.Decision{Evictions: []scheduler.Eviction{{Job: "A", Reason: scheduler.EvictNodeDown, Requeue: true}}})
	require.Equal(t, now, h.Next(now, nil, time.Hour), "A is gone already")
	require.Equal(t, []string{"A is gone and requeued"}, h.Advance(now))
	require.Equal(t, now.Add(time.Hour), h.Next(now, nil, time.Hour))
	require.Equal(t, scheduler.Pending, h.Job("A").State)

	// A preempted job keeps its grace.
	h = host.New(c, run("B"))
	h.Apply(now, &scheduler.Decision{Evictions: []scheduler.Eviction{{Job: "B", Reason: scheduler.EvictPreempted, By: "X", Grace: 10 * time.Minute, Requeue: true}}})
	require.Equal(t, now.Add(10*time.Minute), h.Next(now, nil, time.Hour))
	require.Empty(t, h.Advance(now.Add(time.Second)))
	require.Equal(t, []string{"B is gone and requeued"}, h.Advance(now.Add(10*time.Minute)))
}

// TestCompactMergesOnlyWholeEightGPUNodes: an entry of eight GPUs other
// than 0 to 7 (here the upper half of a 16-GPU node) is not a whole node
// and keeps its GPU list.
func TestCompactMergesOnlyWholeEightGPUNodes(t *testing.T) {
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	require.Equal(t, "n00-n01 n02[8-15]", host.Compact(topology.Allocation{
		{Node: "n00", GPUs: all}, {Node: "n01", GPUs: all}, {Node: "n02", GPUs: []int{8, 9, 10, 11, 12, 13, 14, 15}},
	}))
}
