package scheduler_test

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestTierValues: the zero Tier is unset and resolves to the lowest tier
// of the policy; a set one is its own number whatever the policy; out of
// range numbers are kept for validation to name.
func TestTierValues(t *testing.T) {
	var unset scheduler.Tier
	require.False(t, unset.IsSet())
	require.Equal(t, 3, unset.Level(scheduler.DefaultTiers))
	require.Equal(t, 3, unset.Level(0), "tiers below 1 count as the default")
	require.Equal(t, 7, unset.Level(8))
	require.Equal(t, 0, unset.Level(1))
	require.Equal(t, "unset", unset.String())
	for k, p := range []scheduler.Tier{scheduler.P0, scheduler.P1, scheduler.P2, scheduler.P3} {
		require.True(t, p.IsSet())
		require.Equal(t, scheduler.TierN(k), p)
		require.Equal(t, k, p.Level(2), "a set tier ignores the policy")
		require.Equal(t, "P"+string(rune('0'+k)), p.String())
	}
	require.NotEqual(t, unset, scheduler.P3, "unset is not == P3, though it resolves to it by default")
	require.Equal(t, 255, scheduler.TierN(255).Level(256))
	require.Equal(t, -1, scheduler.TierN(-1).Level(4))
	require.Equal(t, math.MinInt, scheduler.TierN(math.MinInt).Level(4))
	require.Greater(t, scheduler.TierN(math.MaxInt).Level(4), 1<<40)
}

// tierWorld is one 8-GPU node, held by a running job, and a pending job
// that wants the whole node.
func tierWorld(running, pending scheduler.Tier) *scheduler.Snapshot {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	return &scheduler.Snapshot{Now: now,
		Cluster: topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8}}},
		Jobs: []scheduler.Job{
			{ID: "run", Tier: running, Members: 1, GPUsPerMember: 8, State: scheduler.Running, Started: now.Add(-time.Hour),
				Allocation: topology.Allocation{{Node: "n0", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}},
			{ID: "want", Tier: pending, Members: 1, GPUsPerMember: 8, Submitted: now},
		}}
}

// A Go job that does not set its tier is neither production nor a
// preemptor under the default policy: a P2 job preempts it, and it
// preempts not even the lowest set tier. The same jobs decoded from JSON
// without "tier" are the same Go values and get the same decisions.
func TestUnsetTierIsLowest(t *testing.T) {
	var unset scheduler.Tier
	s := scheduler.New(scheduler.Config{})
	for _, c := range []struct {
		name              string
		running, pending  scheduler.Tier
		preempted, waiter bool
	}{
		{"unset victim of P2", unset, scheduler.P2, true, false},
		{"unset is no preemptor of P3", scheduler.P3, unset, false, true},
		{"unset is no preemptor of unset", unset, unset, false, true},
		{"P0 preempts unset", unset, scheduler.P0, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := tierWorld(c.running, c.pending)
			d, err := s.Step(snap)
			require.NoError(t, err)
			require.Equal(t, c.preempted, len(d.Evictions) == 1 && d.Evictions[0].By == "want", "%+v", d)
			require.Equal(t, c.waiter, len(d.Pending) == 1 && d.Pending[0].Job == "want", "%+v", d)

			var buf bytes.Buffer
			require.NoError(t, scheduler.EncodeSnapshot(&buf, snap))
			require.Equal(t, strings.Count(buf.String(), `"tier"`), btoi(c.running.IsSet())+btoi(c.pending.IsSet()),
				"an unset tier is left out: %s", buf.String())
			back, err := scheduler.DecodeSnapshot(&buf)
			require.NoError(t, err)
			require.Equal(t, snap.Jobs, back.Jobs, "JSON without tier decodes to the Go zero Tier")
			again, err := s.Step(back)
			require.NoError(t, err)
			require.Equal(t, d, again)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestUnsetTierProperty: under any policy, a snapshot whose lowest-tier
// jobs leave their tier unset gets the decision of the one that names it,
// and so does its JSON round trip.
func TestUnsetTierProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := scheduler.Config{Backfill: rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative}).Draw(t, "backfill"),
			Order: rapid.SampledFrom([]scheduler.Orderer{nil, scheduler.TierOrder{}}).Draw(t, "order")}
		tiers := rapid.SampledFrom([]int{4, 5, 8}).Draw(t, "tiers")
		switch rapid.IntRange(0, 2).Draw(t, "policy") {
		case 1:
			cfg.Tiers = tiers
		case 2:
			cfg.Preemption = preempt.Ordered(tiers)
		default:
			tiers = scheduler.DefaultTiers
		}
		named := gen.Snapshot(t)
		for i := range named.Jobs {
			if named.Jobs[i].Tier == scheduler.P3 { // the lowest drawn: make it the policy's lowest
				named.Jobs[i].Tier = scheduler.TierN(tiers - 1)
			}
		}
		unset := gen.Clone(named)
		for i := range unset.Jobs {
			if unset.Jobs[i].Tier == scheduler.TierN(tiers-1) && rapid.Bool().Draw(t, "unset") {
				unset.Jobs[i].Tier = scheduler.Tier{}
			}
		}
		s := scheduler.New(cfg)
		want, err := s.Step(named)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Step(unset)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("unset tiers decided apart from tier %d:\n%+v\n%+v", tiers-1, want, got)
		}
		var buf bytes.Buffer
		if err := scheduler.EncodeSnapshot(&buf, unset); err != nil {
			t.Fatal(err)
		}
		back, err := s.DecodeSnapshot(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Jobs, unset.Jobs) {
			t.Fatalf("round trip changed the jobs")
		}
	})
}
