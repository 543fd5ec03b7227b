package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

func TestExplain(t *testing.T) {
	now := spreadNow
	c := uniformCluster(4, 8, 2) // racks r0 = n00,n01; r1 = n02,n03
	snap := &Snapshot{Now: now, Cluster: c,
		Teams: []Team{{Name: "a", Share: 1, Quota: &Quota{GPUs: 8}}},
		Jobs: []Job{
			{ID: "run", Members: 2, GPUsPerMember: 8, State: Running, Started: now.Add(-time.Hour), TimeLimit: 2 * time.Hour,
				Allocation: topology.Allocation{{Node: "n00", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Node: "n02", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}},
			{ID: "big", Members: 3, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now.Add(-time.Hour)},
			{ID: "long", Members: 1, GPUsPerMember: 8, TimeLimit: 5 * time.Hour, Submitted: now},
			{ID: "long2", Members: 1, GPUsPerMember: 8, TimeLimit: 5 * time.Hour, Submitted: now.Add(time.Second)},
			{ID: "rack", Members: 2, GPUsPerMember: 8, Topology: TopologySpec{Required: "rack"}, Submitted: now, Team: "b"},
			{ID: "quota", Members: 2, GPUsPerMember: 8, Team: "a", Submitted: now},
		}}
	s := New(Config{Order: TierOrder{}})

	e, err := s.Explain(snap, "big")
	require.NoError(t, err)
	require.Equal(t, "reserved", e.Outcome)
	require.Equal(t, now.Add(time.Hour), e.Start)
	require.Equal(t, 1, e.Rank)
	require.Equal(t, 5, e.Pending)
	// big is promised n00 and n02 (busy now, free at +1h) and n01; long
	// takes n03, which big does not need; long2 would hold n01 past +1h.
	require.Equal(t, NodeFunnel{Total: 4, Eligible: 4, Ready: 4, OfType: 4, BigEnough: 4, FreeEnough: 1, CPUEnough: 1, MemoryEnough: 1}, e.Nodes)
	require.Equal(t, 1, e.MembersFitNow)
	require.Nil(t, e.Priority, "a custom order has no multifactor priority")

	e, err = s.Explain(snap, "long")
	require.NoError(t, err)
	require.Equal(t, "placed", e.Outcome)

	e, err = s.Explain(snap, "long2")
	require.NoError(t, err)
	require.Equal(t, string(ReasonBehindReservation), e.Reason)
	require.Len(t, e.Delays, 1)
	require.Contains(t, e.Delays[0], "big at ")

	e, err = s.Explain(snap, "quota")
	require.NoError(t, err)
	require.Equal(t, string(ReasonQuota), e.Reason)
	require.Equal(t, &QuotaUse{Team: "a", Nominal: 8, InUse: 0}, e.Quota)

	e, err = s.Explain(snap, "rack")
	require.NoError(t, err)
	require.NotNil(t, e.Topology)
	require.Equal(t, DomainFit{Level: "rack", Domains: 2, Best: "r0", BestFit: 1}, *e.Topology)
	require.Contains(t, e.String(), "topology: one rack of 2; the best, r0, holds 1 of 2 members now")

	e, err = New(Config{}).Explain(snap, "big")
	require.NoError(t, err)
	require.NotNil(t, e.Priority)
	require.Equal(t, 3, e.Priority.Tier, "an unset tier is the lowest")
	require.Greater(t, e.Priority.Priority, 0.0)

	e, err = s.Explain(snap, "run")
	require.NoError(t, err)
	require.Equal(t, "running", e.Outcome)

	_, err = s.Explain(snap, "nope")
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), `no job "nope"`))
}

// TestExplainTopologyWhenNoNodeCanHoldAMember: a job that requires a
// level gets its Topology even when no node of the cluster can hold one
// of its members (too large a member, a GPU type the cluster lacks):
// every domain then holds 0 members, and the best is the first.
func TestExplainTopologyWhenNoNodeCanHoldAMember(t *testing.T) {
	now := spreadNow
	snap := &Snapshot{Now: now, Cluster: uniformCluster(4, 8, 2), Jobs: []Job{
		{ID: "wide", Members: 2, GPUsPerMember: 16, Topology: TopologySpec{Required: "rack"}, Submitted: now},
		{ID: "v100", Members: 2, GPUsPerMember: 8, GPUType: "V100", Topology: TopologySpec{Required: "rack"}, Submitted: now},
	}}
	for _, id := range []string{"wide", "v100"} {
		e, err := New(Config{}).Explain(snap, id)
		require.NoError(t, err)
		require.Equal(t, &DomainFit{Level: "rack", Domains: 2, Best: "r0", BestFit: 0}, e.Topology, id)
		require.Equal(t, 0, e.MembersFitNow, id)
	}
}

// A zero quota limits nothing (see QuotaAdmitter), so Explain gives no
// quota figures for its team's jobs, as for a team without a quota,
// rather than show the team holding GPUs "of 0 nominal + 0 borrowable".
func TestExplainZeroQuotaIsNoQuota(t *testing.T) {
	snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(2, 8, 1),
		Teams: []Team{{Name: "z", Share: 1, Quota: &Quota{}}, {Name: "q", Share: 1, Quota: &Quota{BorrowLimit: 8}}},
		Jobs: []Job{runningWhole("r", "z", 3, "n00", time.Hour),
			{ID: "p", Team: "z", Tier: P3, Members: 1, GPUsPerMember: 8, Submitted: quotaNow},
			{ID: "b", Team: "q", Tier: P3, Members: 1, GPUsPerMember: 8, Submitted: quotaNow}}}
	for _, id := range []string{"r", "p"} {
		e, err := New(Config{}).Explain(snap, id)
		require.NoError(t, err)
		require.Nil(t, e.Quota, id)
		require.NotContains(t, e.String(), "quota:", id)
	}
	// A quota of borrowing alone limits the team: it is shown.
	e, err := New(Config{}).Explain(snap, "b")
	require.NoError(t, err)
	require.Equal(t, &QuotaUse{Team: "q", BorrowLimit: 8}, e.Quota)
}
