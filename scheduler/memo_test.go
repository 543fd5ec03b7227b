package scheduler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// A job that found no victims because its long run would reach a
// reservation on them must not stop a shorter job of the same shape and
// tier, which ends before that reservation, from preempting: the search
// is remembered per run length, not per shape alone.
func TestPreemptionMemoKeepsRunLength(t *testing.T) {
	now := spreadNow
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4}, {Name: "n1", GPUs: 4}}}
	job := func(id string, tier int, members int, limit time.Duration, age time.Duration) Job {
		return Job{ID: id, Tier: TierN(tier), Members: members, GPUsPerMember: 4, TimeLimit: limit, Submitted: now.Add(-age)}
	}
	jobs := []Job{
		runningOn("V", 2, "n0", 4, now.Add(-time.Hour), 6*time.Hour, 0),
		runningOn("W", 0, "n1", 4, now.Add(-time.Hour), 6*time.Hour, 0),
		job("Z", 0, 2, time.Hour, 3*time.Hour),
		job("X", 1, 1, 10*time.Hour, 2*time.Hour),
		job("Y", 1, 1, time.Hour, time.Hour),
	}
	without := []Job{jobs[0], jobs[1], jobs[2], jobs[4]}
	for _, js := range [][]Job{without, jobs} {
		d, err := New(Config{Order: TierOrder{}}).Step(&Snapshot{Now: now, Cluster: c, Jobs: js})
		require.NoError(t, err)
		require.Len(t, d.Evictions, 1, "%d jobs: %+v", len(js), d)
		require.Equal(t, "V", d.Evictions[0].Job)
		require.Equal(t, "Y", d.Evictions[0].By)
	}
}

// The behind-reservation message names the reservations the job could
// delay: those on GPUs of its type that start within its run, not every
// reservation that starts within it. Explain's Delays says the same.
func TestBehindReservationNamesOnlyItsOwn(t *testing.T) {
	now := spreadNow
	var c topology.Cluster
	var jobs []Job
	for _, n := range []struct{ name, typ string }{{"a0", "A100"}, {"a1", "A100"}, {"a2", "A100"}, {"h0", "H100"}} {
		c.Nodes = append(c.Nodes, topology.Node{Name: n.name, GPUs: 2, GPUType: n.typ})
		jobs = append(jobs, runningOn("run-"+n.name, 0, n.name, 1, now, time.Hour, 0))
	}
	pend := func(id, typ string, g int, limit time.Duration, age time.Duration) Job {
		return Job{ID: id, Tier: P1, Members: 1, GPUsPerMember: g, GPUType: typ, TimeLimit: limit, Submitted: now.Add(-age)}
	}
	jobs = append(jobs, pend("B1", "A100", 2, time.Hour, 5*time.Minute), pend("B2", "A100", 2, time.Hour, 4*time.Minute),
		pend("B3", "A100", 2, time.Hour, 3*time.Minute), pend("H", "H100", 2, time.Hour, 2*time.Minute),
		pend("J", "H100", 1, 2*time.Hour, time.Minute))
	snap := &Snapshot{Now: now, Cluster: c, Jobs: jobs}
	s := New(Config{Reservations: 4, Order: TierOrder{}})
	d, err := s.Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Reservations, 4)
	require.Len(t, d.Pending, 1)
	w := d.Pending[0]
	require.Equal(t, "J", w.Job)
	require.Equal(t, ReasonBehindReservation, w.Reason)
	require.Contains(t, w.Message, `"H" at`)
	for _, b := range []string{"B1", "B2", "B3", "more"} {
		require.NotContains(t, w.Message, b)
	}
	e, err := s.Explain(snap, "J")
	require.NoError(t, err)
	require.Len(t, e.Delays, 1)
	require.True(t, strings.HasPrefix(e.Delays[0], "H at "), e.Delays[0])
}

// Explain names only reservations made before the job's turn, and its
// team's use at that turn: not the job's own reservation, nor those of
// jobs after it.
func TestExplainSeesTheJobsTurn(t *testing.T) {
	now := spreadNow
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 2}, {Name: "n1", GPUs: 2}}}
	jobs := []Job{
		runningOn("R0", 0, "n0", 1, now, time.Hour, 0),
		runningOn("R1", 0, "n1", 2, now, 90*time.Minute, 0),
		{ID: "A", Tier: P1, Team: "t", Members: 1, GPUsPerMember: 2, TimeLimit: time.Hour, Submitted: now.Add(-3 * time.Minute)},
		{ID: "J", Tier: P1, Team: "t", Members: 1, GPUsPerMember: 1, TimeLimit: 2 * time.Hour, Submitted: now.Add(-2 * time.Minute)},
		{ID: "L", Tier: P1, Team: "t", Members: 1, GPUsPerMember: 2, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
	}
	snap := &Snapshot{Now: now, Cluster: c, Jobs: jobs, Teams: []Team{{Name: "t", Quota: &Quota{GPUs: 100}}}}
	s := New(Config{Order: TierOrder{}, Reserve: ReserveFunc(func(j *Job, _ int) bool { return j.GPUs() >= 2 })})
	d, err := s.Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Reservations, 2, "%+v", d)
	e, err := s.Explain(snap, "J")
	require.NoError(t, err)
	require.Equal(t, string(ReasonBehindReservation), e.Reason)
	require.Len(t, e.Delays, 1, "%v", e.Delays)
	require.True(t, strings.HasPrefix(e.Delays[0], "A at "), e.Delays[0])
	require.NotNil(t, e.Quota)
	require.Equal(t, 2, e.Quota.InUse, "the team holds A's reservation at J's turn, not L's")
}

// A packed and a spread job of one shape and tier, waiting for the same
// GPUs, can fare differently when preempt declines: the packed job's
// start is placed on GPUs that only a time limit frees (it leaves GPUs
// free now to backfill), which is no claim, while the spread job's, on
// two distinct nodes, takes GPUs free now and claims them. So the memo
// of jobs that waited keys on the placement mode: without it the spread
// job would be told it waits for GPUs when it may claim them.
func TestPreemptionMemoKeepsPlacementMode(t *testing.T) {
	now := spreadNow
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8}, {Name: "n1", GPUs: 8}, {Name: "n2", GPUs: 8}}}
	a := runningOn("A", 0, "n0", 4, now.Add(-time.Hour), 0, 0)
	a.Allocation[0].GPUs = []int{4, 5, 6, 7} // GPUs 0-3 of n0 are free
	b := runningOn("B", 0, "n1", 8, now.Add(-time.Hour), time.Hour+5*time.Minute, 0)
	e := runningOn("E", 3, "n2", 8, now.Add(-time.Hour), 0, 10*time.Minute)
	e.State, e.EvictedAt = Evicting, now
	job := func(id string, mode PlacementMode, age time.Duration) Job {
		return Job{ID: id, Tier: P0, Members: 2, GPUsPerMember: 4, TimeLimit: time.Hour, Placement: mode, Submitted: now.Add(-age)}
	}
	snap := &Snapshot{Now: now, Cluster: c, Jobs: []Job{a, b, e, job("P", Pack, 2*time.Minute), job("S", Spread, time.Minute)}}
	requireWaitsThenClaims(t, snap, "P", "S")
}

// requireWaitsThenClaims steps snap in tier order with a policy under
// which no job may reserve (only a claim on GPUs being freed or free now
// would give a reservation, which the policy declines with its own
// reason), and requires that the two pending jobs are waits, for GPUs,
// then claims.
func requireWaitsThenClaims(t *testing.T, snap *Snapshot, waits, claims string) {
	t.Helper()
	d, err := New(Config{Order: TierOrder{}, Reserve: ReserveFunc(func(*Job, int) bool { return false })}).Step(snap)
	require.NoError(t, err)
	require.Empty(t, d.Reservations)
	require.Len(t, d.Pending, 2)
	require.Equal(t, waits, d.Pending[0].Job)
	require.Equal(t, ReasonInsufficientGPUs, d.Pending[0].Reason, d.Pending[0].Message)
	require.Equal(t, claims, d.Pending[1].Job)
	require.Equal(t, ReasonAwaitingPreemption, d.Pending[1].Reason, d.Pending[1].Message)
}

// The behind-reservation message is formatted once per key, and the key
// keeps the job's GPUs per member: a job can delay only reservations
// that hold free GPUs on a node with room for one of its members. Here
// X1 holds the one free GPU of n0 and X2 the two of n1; a job of one
// GPU could take either, a job of two only n1's, so their messages
// differ though they see the same reservations, whichever comes first.
func TestBehindReservationKeepsMemberSize(t *testing.T) {
	now := spreadNow
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4}, {Name: "n1", GPUs: 4}}}
	h0 := runningOn("H0", 0, "n0", 3, now.Add(-time.Hour), time.Hour+30*time.Minute, 0)
	h0.Allocation[0].GPUs = []int{1, 2, 3}
	h1 := runningOn("H1", 0, "n1", 2, now.Add(-time.Hour), time.Hour+40*time.Minute, 0)
	h1.Allocation[0].GPUs = []int{2, 3}
	job := func(id string, g int, age time.Duration) Job {
		return Job{ID: id, Tier: P0, Members: 1, GPUsPerMember: g, TimeLimit: 2 * time.Hour, Submitted: now.Add(-age)}
	}
	const both, x2 = `"X1" at 2026-12-02T00:30:00Z, "X2" at 2026-12-02T00:40:00Z`, `"X2" at 2026-12-02T00:40:00Z`
	for _, first := range []int{1, 2} {
		second := 3 - first
		snap := &Snapshot{Now: now, Cluster: c, Jobs: []Job{h0, h1, job("X1", 4, 4*time.Minute), job("X2", 4, 3*time.Minute),
			job("A", first, 2*time.Minute), job("B", second, time.Minute)}}
		d, err := New(Config{Reservations: 2, Order: TierOrder{}}).Step(snap)
		require.NoError(t, err)
		require.Len(t, d.Reservations, 2)
		require.Len(t, d.Pending, 2)
		want := map[int]string{1: both, 2: x2}
		for i, g := range []int{first, second} {
			w := d.Pending[i]
			require.Equal(t, ReasonBehindReservation, w.Reason, "%s: %s", w.Job, w.Message)
			require.Equal(t, "fits now but would delay the reservation of "+want[g], w.Message, "%s, %d GPUs", w.Job, g)
		}
	}
}

// Two spread jobs of one shape and tier that differ only in their
// spread level place their starts differently, and so fare differently
// when preempt declines. Spread over nodes, X's start takes the GPUs
// that a time limit frees on n0 and n1, one rack: no claim. Spread over
// racks, Y's must take n2's GPUs free now in another rack: a claim on
// them. So the memo of jobs that waited keys on the spread level: without
// it Y would be told it waits for GPUs when it may claim them.
func TestPreemptionMemoKeepsSpreadLevel(t *testing.T) {
	now := spreadNow
	node := func(name, rack string) topology.Node {
		return topology.Node{Name: name, GPUs: 8, Domains: map[string]string{"rack": rack}}
	}
	c := topology.Cluster{Levels: []string{"rack"}, Nodes: []topology.Node{node("n0", "r0"), node("n1", "r0"), node("n2", "r1"), node("n3", "r2")}}
	a := runningOn("A", 0, "n0", 8, now.Add(-time.Hour), time.Hour+5*time.Minute, 0)
	b := runningOn("B", 0, "n1", 8, now.Add(-time.Hour), time.Hour+5*time.Minute, 0)
	h := runningOn("H", 0, "n2", 4, now.Add(-time.Hour), 0, 0)
	h.Allocation[0].GPUs = []int{4, 5, 6, 7} // GPUs 0-3 of n2 are free, the rest held for good
	e := runningOn("E", 3, "n3", 8, now.Add(-time.Hour), 0, 10*time.Minute)
	e.State, e.EvictedAt = Evicting, now
	job := func(id, level string, age time.Duration) Job {
		j := Job{ID: id, Tier: P0, Members: 2, GPUsPerMember: 4, TimeLimit: time.Hour, Placement: Spread, Submitted: now.Add(-age)}
		j.SpreadLevel = level
		return j
	}
	snap := &Snapshot{Now: now, Cluster: c, Jobs: []Job{a, b, h, e, job("X", "", 2*time.Minute), job("Y", "rack", time.Minute)}}
	requireWaitsThenClaims(t, snap, "X", "Y")
}

// A victim selector is the user's: it may answer for one request and
// not for a look-alike one with more members, so a search that found
// no victims says nothing about a later job unless the selector is the
// default, whose answer only gets harder with more members, a longer
// window and fewer candidates. Here the selector lets only gangs of two
// or more preempt: A, of one member, finds none, and B, of two, of the
// same shape and tier, must still be searched for and preempt.
func TestPreemptionMemoAsksCustomSelector(t *testing.T) {
	now := spreadNow
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8}, {Name: "n1", GPUs: 8}}}
	job := func(id string, members int, age time.Duration) Job {
		return Job{ID: id, Tier: P1, Members: members, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now.Add(-age)}
	}
	gangsOnly := VictimFunc(func(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool) {
		if r.Members < 2 {
			return nil, gang.Placement{}, false
		}
		return preempt.Select(ix, r, s, cands)
	})
	running := []Job{runningOn("V0", 3, "n0", 8, now.Add(-time.Hour), 0, 0), runningOn("V1", 3, "n1", 8, now.Add(-time.Hour), 0, 0)}
	for _, pending := range [][]Job{{job("B", 2, time.Minute)}, {job("A", 1, 2*time.Minute), job("B", 2, time.Minute)}} {
		snap := &Snapshot{Now: now, Cluster: c, Jobs: append(slices.Clone(running), pending...)}
		d, err := New(Config{Order: TierOrder{}, Victims: gangsOnly}).Step(snap)
		require.NoError(t, err)
		require.Len(t, d.Evictions, 2, "%d pending: %+v", len(pending), d)
		for _, e := range d.Evictions {
			require.Equal(t, "B", e.By)
		}
	}
}
