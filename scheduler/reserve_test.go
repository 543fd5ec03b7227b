package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/topology"
)

// A ReservationPolicy that reserves only for big gangs: the small blocked
// job waits without a reservation, the big one gets one even though it is
// not the first blocked job.
func TestReservationPolicy(t *testing.T) {
	now := spreadNow
	snap := &Snapshot{Now: now, Cluster: uniformCluster(4, 8, 4), Jobs: []Job{
		{ID: "run", Members: 4, GPUsPerMember: 8, State: Running, Started: now.Add(-time.Hour), TimeLimit: 2 * time.Hour,
			Allocation: topology.Allocation{
				{Node: "n00", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Node: "n01", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}},
				{Node: "n02", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Node: "n03", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}},
		{ID: "small", Members: 1, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now.Add(-2 * time.Minute)},
		{ID: "big", Members: 4, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
	}}
	d, err := New(Config{Order: TierOrder{}}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "small", d.Reservations[0].Job, "EASY reserves for the first blocked job")

	bigOnly := ReserveFunc(func(j *Job, made int) bool { return j.GPUs() >= 32 })
	d, err = New(Config{Order: TierOrder{}, Reserve: bigOnly}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "big", d.Reservations[0].Job)
	require.Equal(t, now.Add(time.Hour), d.Reservations[0].Start)
	require.Len(t, d.Pending, 1)
	require.Equal(t, "small", d.Pending[0].Job)
}

// A planning horizon: the job blocked until the running gang ends in 2h
// gets its reservation with a 3h horizon and none with a 1h one; it then
// waits for GPUs, and its message says why it has no start.
func TestHorizon(t *testing.T) {
	now := spreadNow
	snap := &Snapshot{Now: now, Cluster: uniformCluster(4, 8, 4), Jobs: []Job{
		{ID: "run", Members: 4, GPUsPerMember: 8, State: Running, Started: now, TimeLimit: 2 * time.Hour,
			Allocation: topology.Allocation{
				{Node: "n00", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Node: "n01", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}},
				{Node: "n02", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Node: "n03", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}},
		{ID: "gang", Members: 2, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
	}}
	for _, mode := range []BackfillMode{EASY, Conservative} {
		d, err := New(Config{Backfill: mode, Horizon: 3 * time.Hour}).Step(snap)
		require.NoError(t, err)
		require.Len(t, d.Reservations, 1, mode)
		require.Equal(t, now.Add(2*time.Hour), d.Reservations[0].Start)

		d, err = New(Config{Backfill: mode, Horizon: time.Hour}).Step(snap)
		require.NoError(t, err)
		require.Empty(t, d.Reservations, mode)
		require.Len(t, d.Pending, 1)
		require.Equal(t, ReasonInsufficientGPUs, d.Pending[0].Reason)
		require.Equal(t, "needs 2×8 GPUs, 0 free; no start within the 1h planning horizon", d.Pending[0].Message)
	}
}

// A start exactly at the horizon is within it, also behind a reservation
// from now on GPUs an evicting job frees now: A holds n00's GPU for
// [now, +1h) and P, an hour long, is reserved from +1h. (When GPUs freed
// now were taken to free a nanosecond later, A ran a nanosecond past
// +1h and P had no start within the horizon.)
func TestHorizonEdgeAfterReservationFromNow(t *testing.T) {
	now := spreadNow
	e := runningOn("E", 3, "n00", 1, now.Add(-time.Hour), 0, 0)
	e.State, e.EvictedAt = Evicting, now.Add(-time.Minute)
	snap := &Snapshot{Now: now, Cluster: uniformCluster(1, 1, 1), Jobs: []Job{e,
		{ID: "A", Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-2 * time.Minute)},
		{ID: "P", Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
	}}
	d, err := New(Config{Backfill: Conservative, Horizon: time.Hour, Order: TierOrder{}}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Reservations, 2, "%+v", d)
	require.Equal(t, "A", d.Reservations[0].Job)
	require.Equal(t, now, d.Reservations[0].Start)
	require.Equal(t, "P", d.Reservations[1].Job)
	require.Equal(t, now.Add(time.Hour), d.Reservations[1].Start)
}

// running returns a running job of one member on node's first g GPUs.
func runningOn(id string, tier int, node string, g int, started time.Time, limit, grace time.Duration) Job {
	gpus := make([]int, g)
	for i := range gpus {
		gpus[i] = i
	}
	return Job{ID: id, Tier: TierN(tier), Members: 1, GPUsPerMember: g, State: Running, Started: started,
		TimeLimit: limit, CheckpointGrace: grace, Allocation: topology.Allocation{{Node: node, GPUs: gpus}}}
}

// Reservations for jobs that may preempt and wait for GPUs being freed go
// beyond the backfill mode's count, but only for what victims hold or
// have freed: jobs that wait only for time limits while some unrelated
// job checkpoints are left to EASY, which reserves for the first of them.
func TestClaimsStayNarrow(t *testing.T) {
	now := spreadNow
	snap := &Snapshot{Now: now, Cluster: uniformCluster(10, 1, 10)}
	e := runningOn("E", 3, "n00", 1, now.Add(-time.Hour), 0, time.Hour)
	e.State, e.EvictedAt = Evicting, now
	snap.Jobs = append(snap.Jobs, e)
	for i := 1; i <= 9; i++ {
		snap.Jobs = append(snap.Jobs, runningOn(fmt.Sprintf("R%d", i), 1, fmt.Sprintf("n%02d", i), 1, now.Add(-time.Minute), time.Duration(i)*10*time.Minute+time.Minute, 0))
	}
	for i := range 8 {
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("P%d", i), Tier: P2, Members: 1, GPUsPerMember: 1, TimeLimit: 2 * time.Hour, Submitted: now.Add(-time.Duration(10-i) * time.Minute)})
	}
	d, err := New(Config{Order: TierOrder{}}).Step(snap)
	require.NoError(t, err)
	var got []string
	for _, r := range d.Reservations {
		got = append(got, r.Job)
	}
	require.LessOrEqual(t, len(got), 2, "reservations %v: EASY's one, and at most one on the evicting job's GPU", got)
	require.Contains(t, got, "P0")
}

// A claim on GPUs that a time limit frees, or that a preemption would
// free after a grace beyond the horizon, is a reservation like any
// other: none beyond the planning horizon. (A claim on GPUs of jobs
// already being evicted is not bounded by it: see
// TestClaimBeyondHorizonWhileVictimsCheckpoint.)
func TestClaimsWithinHorizon(t *testing.T) {
	now := spreadNow
	snap := &Snapshot{Now: now, Cluster: uniformCluster(2, 1, 2), Jobs: []Job{
		runningOn("R", 1, "n00", 1, now, 3*time.Hour, 0),
		runningOn("V", 3, "n01", 1, now.Add(-time.Hour), 0, 5*time.Hour),
		{ID: "P", Tier: P2, Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
	}}
	for _, mode := range []BackfillMode{EASY, Conservative} {
		d, err := New(Config{Backfill: mode, Order: TierOrder{}, Horizon: time.Hour}).Step(snap)
		require.NoError(t, err)
		require.Empty(t, d.Reservations, mode)
		require.Len(t, d.Pending, 1)
		require.Contains(t, d.Pending[0].Message, "no start within the 1h planning horizon")
	}
}

// A job that backfills onto GPUs reserved for later takes the fullest of
// the nodes whose reservations start together, not the lowest-named:
// small (4 GPUs, 2 h) goes beside run on n01, so that n00 stays whole and
// mid (8 GPUs, 1 h, ending before big's reservation too) starts now.
// With Spread, which scores emptier nodes higher, small takes n00.
func TestBackfillTakesFullestReservedNode(t *testing.T) {
	now := spreadNow
	snap := func() *Snapshot {
		return &Snapshot{Now: now, Cluster: topology.Uniform(2, 8, "H100"), Jobs: []Job{
			{ID: "run", Tier: P3, Members: 1, GPUsPerMember: 4, State: Running, Started: now.Add(-6 * time.Hour), TimeLimit: 12 * time.Hour,
				Allocation: topology.Allocation{{Node: "n01", GPUs: []int{0, 1, 2, 3}}}},
			{ID: "big", Tier: P3, Members: 2, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now.Add(-3 * time.Minute)},
			{ID: "small", Tier: P3, Members: 1, GPUsPerMember: 4, TimeLimit: 2 * time.Hour, Submitted: now.Add(-2 * time.Minute)},
			{ID: "mid", Tier: P3, Members: 1, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
		}}
	}
	d, err := New(Config{Order: TierOrder{}}).Step(snap())
	require.NoError(t, err)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "big", d.Reservations[0].Job)
	require.Equal(t, now.Add(6*time.Hour), d.Reservations[0].Start)
	require.Len(t, d.Placements, 2)
	require.Equal(t, Placement{Job: "mid", Allocation: topology.Allocation{{Node: "n00", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}}, d.Placements[0])
	require.Equal(t, Placement{Job: "small", Allocation: topology.Allocation{{Node: "n01", GPUs: []int{4, 5, 6, 7}}}}, d.Placements[1])

	d, err = New(Config{Order: TierOrder{}, Pack: binpack.Spread{}}).Step(snap())
	require.NoError(t, err)
	require.Len(t, d.Placements, 1)
	require.Equal(t, Placement{Job: "small", Allocation: topology.Allocation{{Node: "n00", GPUs: []int{0, 1, 2, 3}}}}, d.Placements[0])
}

// TestPreemptorReservationCountsTowardK: a preempting job's reservation
// on the GPUs it frees is made whatever EASY's K says, and counts among
// the K. P (tier 0) evicts V and is reserved on V's GPU and the free one;
// B, blocked with no victims left, gets the one reservation only when K
// is 2.
func TestPreemptorReservationCountsTowardK(t *testing.T) {
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	running := func(id string, tier int, node string, limit, grace time.Duration) Job {
		return Job{ID: id, Tier: TierN(tier), Members: 1, GPUsPerMember: 1, State: Running, Started: now,
			TimeLimit: limit, CheckpointGrace: grace, Allocation: topology.Allocation{{Node: node, GPUs: []int{0}}}}
	}
	pending := func(id string, tier, members int, limit time.Duration, age time.Duration) Job {
		return Job{ID: id, Tier: TierN(tier), Members: members, GPUsPerMember: 1, TimeLimit: limit, Submitted: now.Add(-age)}
	}
	s := &Snapshot{Now: now, Jobs: []Job{
		running("V", 3, "a", 0, 5*time.Minute), // preemptible, no limit
		running("R", 0, "b", 2*time.Hour, 0),
		running("S", 0, "c", 30*time.Minute, 0),
		pending("P", 0, 2, time.Hour, 3*time.Minute), // the free GPU of d, and V's after its grace
		pending("B", 1, 2, time.Hour, 2*time.Minute), // no victims left: waits for S and V's GPU
		pending("C", 2, 1, 10*time.Hour, time.Minute),
	}}
	for _, n := range []string{"a", "b", "c", "d"} {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: n, GPUs: 1})
	}
	reserved := func(k int) []string {
		d, err := New(Config{Order: TierOrder{}, Reservations: k}).Step(s)
		require.NoError(t, err)
		var got []string
		for _, r := range d.Reservations {
			got = append(got, r.Job)
		}
		return got
	}
	require.Equal(t, []string{"P"}, reserved(1), "K=1: the preemptor's reservation is the one")
	require.Equal(t, []string{"B", "P"}, reserved(2), "K=2: the first blocked job gets the other")
}
