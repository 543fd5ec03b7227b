package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/topology"
)

var spreadNow = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

func uniformCluster(nodes, gpus, perDomain int) topology.Cluster {
	c := topology.Cluster{Levels: []string{"rack"}}
	for i := range nodes {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%02d", i), GPUs: gpus,
			Domains: map[string]string{"rack": fmt.Sprintf("r%d", i/perDomain)}})
	}
	return c
}

// perPlace counts the members of the placed jobs on each node (or on each
// rack when byRack).
func perPlace(d *Decision, byRack bool, perDomain int) map[string]int {
	out := map[string]int{}
	for _, p := range d.Placements {
		for _, a := range p.Allocation {
			k := a.Node
			if byRack {
				var i int
				fmt.Sscanf(a.Node, "n%d", &i)
				k = fmt.Sprintf("r%d", i/perDomain)
			}
			out[k]++
		}
	}
	return out
}

// TestSpreadGroupDoublesUpAsLittleAsPossible: k replicas of one group on
// an empty cluster of n equal nodes land ceil(k/n) at most on any node
// (or rack with spreadLevel), as long as that many fit on one node.
func TestSpreadGroupDoublesUpAsLittleAsPossible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := rapid.IntRange(1, 12).Draw(t, "nodes")
		gpus := rapid.SampledFrom([]int{4, 8}).Draw(t, "gpus")
		per := rapid.IntRange(1, 4).Draw(t, "perRack")
		byRack := rapid.Bool().Draw(t, "byRack")
		g := rapid.SampledFrom([]int{1, 2}).Draw(t, "g")
		places := nodes
		if byRack {
			places = (nodes + per - 1) / per
		}
		k := rapid.IntRange(1, 3*places).Draw(t, "replicas")
		snap := &Snapshot{Now: spreadNow, Cluster: uniformCluster(nodes, gpus, per)}
		for i := range k {
			j := Job{ID: fmt.Sprintf("web-%02d", i), Members: 1, GPUsPerMember: g, Placement: Spread, Group: "web",
				Kind: Inference, Submitted: spreadNow.Add(time.Duration(i) * time.Second)}
			if byRack {
				j.SpreadLevel = "rack"
			}
			snap.Jobs = append(snap.Jobs, j)
		}
		d, err := New(Config{Order: TierOrder{}}).Step(snap)
		require.NoError(t, err)
		want := (k + places - 1) / places
		if byRack && nodes%per != 0 {
			// The last rack is smaller; only check the node rule there.
			return
		}
		room := gpus // GPUs of one place
		if byRack {
			room = per * gpus
		}
		if want*g > room {
			return // that many do not fit on one place
		}
		require.Len(t, d.Placements, k, "all replicas fit")
		for place, c := range perPlace(d, byRack, per) {
			require.LessOrEqual(t, c, want, "%s holds %d replicas, want at most %d: %v", place, c, want, d.Placements)
		}
	})
}

// TestSpreadJobMembersOnDistinctNodes: the members of one spread job go to
// different nodes while there are enough, and double up only after.
func TestSpreadJobMembersOnDistinctNodes(t *testing.T) {
	for _, tc := range []struct {
		nodes, members int
		maxPerNode     int
	}{{4, 3, 1}, {4, 4, 1}, {3, 6, 2}, {2, 5, 3}} {
		snap := &Snapshot{Now: spreadNow, Cluster: uniformCluster(tc.nodes, 8, 1), Jobs: []Job{
			{ID: "svc", Members: tc.members, GPUsPerMember: 1, Placement: Spread, Submitted: spreadNow},
		}}
		d, err := New(Config{}).Step(snap)
		require.NoError(t, err)
		require.Len(t, d.Placements, 1)
		counts := map[string]int{}
		for _, a := range d.Placements[0].Allocation {
			counts[a.Node] += len(a.GPUs)
		}
		for n, c := range counts {
			require.LessOrEqual(t, c, tc.maxPerNode, "%d members on %d nodes: %s has %d", tc.members, tc.nodes, n, c)
		}
	}
}

// TestSpreadReservationOnDistinctNodes: a spread job that must wait is
// reserved on distinct nodes too. n00 and n01 are busy until 1h, n02 has
// room for one member now; at 1h the two busy nodes free up, and the
// preference for GPUs busy now must not stack both members on one of
// them.
func TestSpreadReservationOnDistinctNodes(t *testing.T) {
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	snap := &Snapshot{Now: spreadNow, Cluster: uniformCluster(3, 8, 3), Jobs: []Job{
		{ID: "a", Members: 1, GPUsPerMember: 8, State: Running, Started: spreadNow, TimeLimit: time.Hour,
			Allocation: topology.Allocation{{Node: "n00", GPUs: all}}},
		{ID: "b", Members: 1, GPUsPerMember: 8, State: Running, Started: spreadNow, TimeLimit: time.Hour,
			Allocation: topology.Allocation{{Node: "n01", GPUs: all}}},
		{ID: "c", Members: 1, GPUsPerMember: 4, State: Running, Started: spreadNow, TimeLimit: 5 * time.Hour,
			Allocation: topology.Allocation{{Node: "n02", GPUs: []int{0, 1, 2, 3}}}},
		{ID: "svc", Members: 2, GPUsPerMember: 4, Placement: Spread, Submitted: spreadNow, TimeLimit: time.Hour},
	}}
	d, err := New(Config{}).Step(snap)
	require.NoError(t, err)
	require.Empty(t, d.Placements)
	require.Len(t, d.Reservations, 1)
	r := d.Reservations[0]
	require.Equal(t, "svc", r.Job)
	require.Equal(t, spreadNow.Add(time.Hour), r.Start)
	require.Len(t, r.Allocation, 2, "one member per node: %v", r.Allocation)
}

// TestSpreadAvoidsRunningReplicas: a replica goes to a node without one
// of its group, even when pack would prefer the fuller node.
func TestSpreadAvoidsRunningReplicas(t *testing.T) {
	snap := &Snapshot{Now: spreadNow, Cluster: uniformCluster(2, 8, 1), Jobs: []Job{
		{ID: "web-0", Members: 1, GPUsPerMember: 1, Placement: Spread, Group: "web", State: Running,
			Started: spreadNow.Add(-time.Hour), Allocation: topology.Allocation{{Node: "n00", GPUs: []int{0}}}},
		{ID: "other", Members: 1, GPUsPerMember: 4, State: Running,
			Started: spreadNow.Add(-time.Hour), Allocation: topology.Allocation{{Node: "n01", GPUs: []int{0, 1, 2, 3}}}},
		{ID: "web-1", Members: 1, GPUsPerMember: 1, Placement: Spread, Group: "web", Submitted: spreadNow},
	}}
	d, err := New(Config{}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Placements, 1)
	require.Equal(t, "n01", d.Placements[0].Allocation[0].Node)
}

// A replica that the Step evicts at its time limit is leaving: its node
// does not count as a place of the group. web-0 on n00 is past its
// limit; web-1 runs on n01, which has more room. web-2 goes to n00, the
// node the group is leaving, not next to web-1. (It used to count web-0,
// find both nodes taken, and double up on the emptier n01.)
func TestSpreadIgnoresReplicasEvictedInTheStep(t *testing.T) {
	run := func(id, node string, limit time.Duration) Job {
		return Job{ID: id, Members: 1, GPUsPerMember: 4, Placement: Spread, Group: "web", State: Running, Tier: P1,
			Started: spreadNow.Add(-time.Hour), TimeLimit: limit, Allocation: topology.Allocation{{Node: node, GPUs: []int{0, 1, 2, 3}}}}
	}
	snap := &Snapshot{Now: spreadNow, Cluster: topology.Cluster{Nodes: []topology.Node{{Name: "n00", GPUs: 8}, {Name: "n01", GPUs: 16}}},
		Jobs: []Job{
			run("web-0", "n00", time.Hour), run("web-1", "n01", 0),
			{ID: "web-2", Members: 1, GPUsPerMember: 4, Placement: Spread, Group: "web", Tier: P1, Submitted: spreadNow},
		}}
	d, err := New(Config{}).Step(snap)
	require.NoError(t, err)
	require.Equal(t, []Eviction{{Job: "web-0", Reason: EvictTimeLimit}}, d.Evictions)
	require.Len(t, d.Placements, 1)
	require.Equal(t, "web-2", d.Placements[0].Job)
	require.Equal(t, "n00", d.Placements[0].Allocation[0].Node)
}

// A replica of a group that must sit in one rack goes to a rack where no
// replica runs when one has room, even when the best-fit rack's room is
// next to a replica.
func TestSpreadGroupWithRequiredLevel(t *testing.T) {
	c := topology.Cluster{Levels: []string{"rack"}, Nodes: []topology.Node{
		{Name: "a1", GPUs: 8, Domains: map[string]string{"rack": "A"}},
		{Name: "b1", GPUs: 8, Domains: map[string]string{"rack": "B"}},
	}}
	snap := &Snapshot{Now: spreadNow, Cluster: c, Jobs: []Job{
		{ID: "web-0", Members: 1, GPUsPerMember: 4, Placement: Spread, Group: "web", State: Running,
			Started: spreadNow.Add(-time.Hour), Allocation: topology.Allocation{{Node: "a1", GPUs: []int{0, 1, 2, 3}}}},
		{ID: "web-1", Members: 1, GPUsPerMember: 4, Placement: Spread, Group: "web", Submitted: spreadNow,
			Topology: TopologySpec{Required: "rack"}},
	}}
	d, err := New(Config{}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Placements, 1)
	require.Equal(t, "b1", d.Placements[0].Allocation[0].Node, "%v", d.Placements)
}

// TestSpreadReplicaTakesFreeNodeBeforeDoublingUp: a replica too big for
// the nodes free of its group still puts what it can there. web-0 and
// web-1 run on n00 and n01; web-2 has two members and only n02, with room
// for one, holds no replica: one member goes there, the other doubles up,
// and the group sits on three nodes rather than two.
func TestSpreadReplicaTakesFreeNodeBeforeDoublingUp(t *testing.T) {
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n00", GPUs: 4}, {Name: "n01", GPUs: 4}, {Name: "n02", GPUs: 1}}}
	replica := func(id, node string) Job {
		return Job{ID: id, Kind: Inference, Members: 1, GPUsPerMember: 1, Placement: Spread, Group: "web", State: Running,
			Started: spreadNow.Add(-time.Hour), Allocation: topology.Allocation{{Node: node, GPUs: []int{0}}}}
	}
	snap := &Snapshot{Now: spreadNow, Cluster: c, Jobs: []Job{replica("web-0", "n00"), replica("web-1", "n01"),
		{ID: "web-2", Kind: Inference, Members: 2, GPUsPerMember: 1, Placement: Spread, Group: "web", Submitted: spreadNow}}}
	d, err := New(Config{}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Placements, 1)
	a := d.Placements[0].Allocation
	require.Len(t, a, 2, "%v", a)
	require.Equal(t, "n02", a[1].Node, "%v", a)
}

// TestSpreadLevelReplicaTakesFreeDomainBeforeDoublingUp is
// TestSpreadReplicaTakesFreeNodeBeforeDoublingUp over racks: web-0 and
// web-1 run in racks r1 and r2, whose other nodes are empty; web-2 has
// two members and only rack r3, with room for one, holds no replica. One
// member goes to r3, though the empty nodes of r1 and r2 score better:
// a rack holding a replica is occupied whichever of its nodes a member
// takes.
func TestSpreadLevelReplicaTakesFreeDomainBeforeDoublingUp(t *testing.T) {
	node := func(name, rack string, gpus int) topology.Node {
		return topology.Node{Name: name, GPUs: gpus, Domains: map[string]string{"rack": rack}}
	}
	c := topology.Cluster{Levels: []string{"rack"}, Nodes: []topology.Node{
		node("a1", "r1", 2), node("a2", "r1", 2), node("b1", "r2", 2), node("b2", "r2", 2), node("c1", "r3", 1)}}
	replica := func(id, node string) Job {
		return Job{ID: id, Kind: Inference, Members: 1, GPUsPerMember: 1, Placement: Spread, SpreadLevel: "rack", Group: "web",
			State: Running, Started: spreadNow.Add(-time.Hour), Allocation: topology.Allocation{{Node: node, GPUs: []int{0}}}}
	}
	snap := &Snapshot{Now: spreadNow, Cluster: c, Jobs: []Job{replica("web-0", "a1"), replica("web-1", "b1"),
		{ID: "web-2", Kind: Inference, Members: 2, GPUsPerMember: 1, Placement: Spread, SpreadLevel: "rack", Group: "web", Submitted: spreadNow}}}
	d, err := New(Config{}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Placements, 1)
	nodes := []string{}
	for _, ng := range d.Placements[0].Allocation {
		nodes = append(nodes, ng.Node)
	}
	require.Contains(t, nodes, "c1")
}
