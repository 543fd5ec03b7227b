package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/preempt"
)

// budgetSnapshot is three 8-GPU nodes (a default budget of 2 GPUs) run
// by V1, V2 (tier 3, no limit) and W (tier 3, 2h left), with pending:
// Z (tier 0, preempts nobody: it takes the one EASY reservation, on W's
// GPUs), A (tier 1, 10h) and B (tier 2, 1h), each 8 GPUs.
func budgetSnapshot() *Snapshot {
	w := runningWhole("W", "t", 3, "n02", 0)
	w.TimeLimit = 2 * time.Hour
	return &Snapshot{Now: quotaNow, Cluster: uniformCluster(3, 8, 1),
		Jobs: []Job{runningWhole("V1", "t", 3, "n00", 3*time.Hour), runningWhole("V2", "t", 3, "n01", time.Hour), w,
			{ID: "Z", Team: "t", Tier: P0, Members: 1, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: quotaNow},
			{ID: "A", Team: "t", Tier: P1, Members: 1, GPUsPerMember: 8, TimeLimit: 10 * time.Hour, Submitted: quotaNow},
			{ID: "B", Team: "t", Tier: P2, Members: 1, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: quotaNow}}}
}

// noTier0 lets tiers 1 and 2 preempt tier 3, and tier 0 nobody.
var noTier0 = preempt.Matrix{{false, false, false, false}, {false, false, false, true}, {false, false, false, true}, {false, false, false, false}}

func preemptors(d *Decision) map[string][]string {
	by := map[string][]string{}
	for _, e := range d.Evictions {
		if e.Reason == EvictPreempted {
			by[e.By] = append(by[e.By], e.Job)
		}
	}
	return by
}

func waitOf(d *Decision, job string) Wait {
	for _, w := range d.Pending {
		if w.Job == job {
			return w
		}
	}
	return Wait{}
}

// The default budget lets the first preemptor take what it needs and no
// more: A preempts (8 GPUs, more than 5% of 24), B waits for a later
// Step with reason awaiting-preemption. With shortest-first backfill,
// preemptors still go in priority order: B, shorter, does not take the
// budget before A.
func TestBudgetServesPreemptorsInOrder(t *testing.T) {
	for _, order := range []BackfillOrder{ByPriority, ShortestFirst} {
		d, err := New(Config{Preemption: noTier0, BackfillOrder: order}).Step(budgetSnapshot())
		require.NoError(t, err)
		require.Equal(t, map[string][]string{"A": {"V2"}}, preemptors(d), "%v: %+v", order, d)
		w := waitOf(d, "B")
		require.Equal(t, ReasonAwaitingPreemption, w.Reason, "%v: %+v", order, d)
		require.Contains(t, w.Message, "disruption budget of this Step is spent (8 of 8 GPUs evicted)")
	}
	// A budget of both: both preempt.
	d, err := New(Config{Preemption: noTier0, MaxEvictedGPUs: 16}).Step(budgetSnapshot())
	require.NoError(t, err)
	require.Len(t, preemptors(d), 2, "%+v", d)
	// A budget smaller than A's need: nobody preempts, A and B wait.
	d, err = New(Config{Preemption: noTier0, MaxEvictedGPUs: 4}).Step(budgetSnapshot())
	require.NoError(t, err)
	require.Empty(t, d.Evictions, "%+v", d)
	for _, id := range []string{"A", "B"} {
		w := waitOf(d, id)
		require.Equal(t, ReasonAwaitingPreemption, w.Reason, "%s: %+v", id, d)
		require.True(t, strings.Contains(w.Message, "(0 of 4 GPUs evicted)"), w.Message)
	}
}

// Evictions at time limits and on down nodes do not count against the
// budget.
func TestBudgetIgnoresLimitAndNodeDownEvictions(t *testing.T) {
	s := budgetSnapshot()
	s.Jobs[2].TimeLimit = time.Minute
	s.Jobs[2].Started = quotaNow.Add(-time.Hour) // past its limit: evicted
	d, err := New(Config{Preemption: noTier0, MaxEvictedGPUs: 8}).Step(s)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"A": {"V2"}}, preemptors(d), "%+v", d)
	require.Len(t, d.Evictions, 2, "%+v", d)
}

// MinRuntime protects young jobs: V2, an hour old, is no victim with a
// minimum runtime of 2h, so A takes V1 (3h old); with 4h30m neither is
// and A waits, with a NextWake no later than V1 matures (+1h30m).
func TestMinRuntime(t *testing.T) {
	d, err := New(Config{Preemption: noTier0, MinRuntime: 2 * time.Hour}).Step(budgetSnapshot())
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"A": {"V1"}}, preemptors(d), "%+v", d)
	cfg := Config{Preemption: noTier0, MinRuntime: 4*time.Hour + 30*time.Minute}
	d, err = New(cfg).Step(budgetSnapshot())
	require.NoError(t, err)
	require.Empty(t, preemptors(d), "%+v", d)
	// V1 (started 3h ago) matures at +1h30m: the host Steps again by then.
	mature := quotaNow.Add(90 * time.Minute)
	require.True(t, d.NextWake.After(quotaNow) && !d.NextWake.After(mature), "%+v", d)
	// Until then nothing changes; at +1h30m V1 is a victim.
	s := budgetSnapshot()
	s.Now = mature.Add(-time.Nanosecond)
	d, err = New(cfg).Step(s)
	require.NoError(t, err)
	require.Empty(t, preemptors(d), "%+v", d)
	s.Now = mature
	d, err = New(cfg).Step(s)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"A": {"V1"}}, preemptors(d), "%+v", d)
}
