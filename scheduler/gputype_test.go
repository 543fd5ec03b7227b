package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// twoTypes is two H100 and two H200 nodes of 8 GPUs, with a running job
// holding 4 GPUs of h100-0 and one holding 4 of h200-0 for an hour, and
// pending jobs js.
func twoTypes(js ...Job) *Snapshot {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := &Snapshot{Now: now}
	for _, n := range []string{"h100-0", "h100-1", "h200-0", "h200-1"} {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: n, GPUs: 8, GPUType: strings.ToUpper(n[:4])})
	}
	for _, n := range []string{"h100-0", "h200-0"} {
		s.Jobs = append(s.Jobs, Job{ID: "run-" + n, Tier: P0, Members: 1, GPUsPerMember: 4, State: Running,
			TimeLimit: time.Hour, Started: now, Allocation: topology.Allocation{{Node: n, GPUs: []int{0, 1, 2, 3}}}})
	}
	for _, j := range js {
		j.Submitted = now
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

func nodeTypes(s *Snapshot, a topology.Allocation) []string {
	var ts []string
	for _, ng := range a {
		for _, n := range s.Cluster.Nodes {
			if n.Name == ng.Node {
				ts = append(ts, n.GPUType)
			}
		}
	}
	return ts
}

// A gang that names no GPU type runs on one type: 2×8 fits now only
// across an H100 and an H200 node, so it is reserved on one type when the
// running jobs end; with MixGPUTypes it starts now across both.
func TestUntypedGangOnOneType(t *testing.T) {
	for _, mode := range []BackfillMode{EASY, Conservative} {
		s := twoTypes(Job{ID: "train", Tier: P3, Members: 2, GPUsPerMember: 8, TimeLimit: 2 * time.Hour})
		d, err := New(Config{Backfill: mode}).Step(s)
		require.NoError(t, err)
		require.Empty(t, d.Placements)
		require.Len(t, d.Reservations, 1)
		require.Equal(t, s.Now.Add(time.Hour), d.Reservations[0].Start)
		require.Equal(t, []string{"H100", "H100"}, nodeTypes(s, d.Reservations[0].Allocation), "the first type by name among equals")

		s.Jobs[2].MixGPUTypes = true
		d, err = New(Config{Backfill: mode}).Step(s)
		require.NoError(t, err)
		require.Len(t, d.Placements, 1)
		require.ElementsMatch(t, []string{"H100", "H200"}, nodeTypes(s, d.Placements[0].Allocation))
	}
}

// Among the types where a gang fits now, it goes to the one with the
// fewest free GPUs (best fit, as domains are chosen): with half of h200-1
// busy too, H100 has 12 free and H200 8, so a 2×2 gang goes to the H200s,
// and then a 2×4 gang, which only H100 now holds, to an H100 node.
func TestUntypedGangBestFitType(t *testing.T) {
	s := twoTypes(Job{ID: "then-big", Tier: P3, Members: 2, GPUsPerMember: 4, TimeLimit: time.Hour},
		Job{ID: "small", Tier: P3, Members: 2, GPUsPerMember: 2, TimeLimit: time.Hour})
	s.Jobs = append(s.Jobs, Job{ID: "run-h200-1", Tier: P0, Members: 1, GPUsPerMember: 4, State: Running,
		TimeLimit: time.Hour, Started: s.Now, Allocation: topology.Allocation{{Node: "h200-1", GPUs: []int{0, 1, 2, 3}}}})
	d, err := New(Config{}).Step(s)
	require.NoError(t, err)
	require.Len(t, d.Placements, 2)
	got := map[string][]string{}
	for _, p := range d.Placements {
		got[p.Job] = nodeTypes(s, p.Allocation)
	}
	require.Equal(t, map[string][]string{"then-big": {"H100"}, "small": {"H200"}}, got)
}

// A gang that no single type could ever hold is unsatisfiable unless it
// mixes types; one that waits says which type came closest.
func TestUntypedGangReasons(t *testing.T) {
	s := twoTypes(Job{ID: "huge", Tier: P3, Members: 3, GPUsPerMember: 8, TimeLimit: time.Hour})
	d, err := New(Config{}).Step(s)
	require.NoError(t, err)
	require.Equal(t, []Wait{{Job: "huge", Reason: ReasonUnsatisfiable,
		Message: "needs 3×8 same-type GPUs; this cluster holds at most 2 such members"}}, d.Pending)

	// The running jobs never end, so no start can be promised.
	s = twoTypes(Job{ID: "pair", Tier: P3, Members: 2, GPUsPerMember: 8, TimeLimit: time.Hour})
	s.Jobs[0].TimeLimit, s.Jobs[1].TimeLimit = 0, 0
	d, err = New(Config{}).Step(s)
	require.NoError(t, err)
	require.Equal(t, []Wait{{Job: "pair", Reason: ReasonInsufficientGPUs,
		Message: "needs 2×8 GPUs, 12 free (all its members go on one GPU type; counted on H100, the type with the most free GPUs that could hold it)"}}, d.Pending)
}

func TestDecodeMixGPUTypes(t *testing.T) {
	in := `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8}]},
"jobs":[{"id":"a","gpusPerMember":1,"mixGPUTypes":true},{"id":"b","gpusPerMember":1}]}`
	s, err := DecodeSnapshot(strings.NewReader(in))
	require.NoError(t, err)
	require.True(t, s.Jobs[0].MixGPUTypes)
	require.False(t, s.Jobs[1].MixGPUTypes)
	var out strings.Builder
	require.NoError(t, EncodeSnapshot(&out, s))
	require.Contains(t, out.String(), `"mixGPUTypes": true`)
	back, err := DecodeSnapshot(strings.NewReader(out.String()))
	require.NoError(t, err)
	require.Equal(t, s.Jobs, back.Jobs)
	_, err = DecodeSnapshot(strings.NewReader(strings.Replace(in, `"mixGPUTypes":true`, `"mixGPUTypes":1`, 1)))
	require.ErrorContains(t, err, "mixGPUTypes")
}

// The type is chosen as domains are: the tightest level first. H100 has
// the fewest free GPUs and holds the gang, but only across two leaves;
// H200 holds it in one leaf, its preferred level, so it goes there.
func TestUntypedGangTightestLevelFirst(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := &Snapshot{Now: now}
	s.Cluster.Levels = []string{"leaf"}
	for _, n := range []struct{ name, typ, leaf string }{
		{"h100-a", "H100", "l0"}, {"h100-b", "H100", "l1"}, {"h200-a", "H200", "l2"}, {"h200-b", "H200", "l2"},
	} {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: n.name, GPUs: 8, GPUType: n.typ, Domains: map[string]string{"leaf": n.leaf}})
	}
	for _, n := range []string{"h100-a", "h100-b"} {
		s.Jobs = append(s.Jobs, Job{ID: "run-" + n, Tier: P0, Members: 1, GPUsPerMember: 4, State: Running,
			TimeLimit: time.Hour, Started: now, Allocation: topology.Allocation{{Node: n, GPUs: []int{0, 1, 2, 3}}}})
	}
	s.Jobs = append(s.Jobs, Job{ID: "g", Tier: P3, Members: 2, GPUsPerMember: 4, TimeLimit: time.Hour,
		Topology: TopologySpec{Preferred: "leaf"}, Submitted: now})
	d, err := New(Config{}).Step(s)
	require.NoError(t, err)
	require.Len(t, d.Placements, 1)
	require.Equal(t, []string{"H200"}, nodeTypes(s, d.Placements[0].Allocation))
}
