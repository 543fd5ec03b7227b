package backfill_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// pool is a flat pool of n one-GPU nodes.
func pool(n int) topology.Cluster {
	var c topology.Cluster
	for i := range n {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%02d", i), GPUs: 1})
	}
	return c
}

// onPool is a job of p one-GPU members, submitted k minutes ago.
func onPool(id string, p int, limit time.Duration, k int) scheduler.Job {
	return scheduler.Job{ID: id, Members: p, GPUsPerMember: 1, TimeLimit: limit, Submitted: gen.Now.Add(-time.Duration(k) * time.Minute)}
}

// TestEASYShadowRule: on ten one-GPU nodes, R holds six until now+1h; A
// (8 GPUs, first in line) is reserved at the shadow time now+1h, which
// leaves two extra nodes. A later job may start now iff it ends by the
// shadow time or uses no more than the extra nodes.
func TestEASYShadowRule(t *testing.T) {
	cases := []struct {
		name  string
		gpus  int
		limit time.Duration
		start bool
	}{
		{"ends before the shadow time", 4, 30 * time.Minute, true},
		{"ends at the shadow time", 4, time.Hour, true},
		{"ends after, within the extra nodes", 2, 3 * time.Hour, true},
		{"ends after, beyond the extra nodes", 3, 3 * time.Hour, false},
		{"never ends, within the extra nodes", 2, 0, true},
		{"never ends, beyond the extra nodes", 3, 0, false},
		{"too large for what is free", 5, 10 * time.Minute, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := onPool("R", 6, time.Hour, 100)
			run.State = scheduler.Running
			run.Started = gen.Now
			for i := range 6 {
				run.Allocation = append(run.Allocation, topology.NodeGPUs{Node: fmt.Sprintf("n%02d", i), GPUs: []int{0}})
			}
			snap := &scheduler.Snapshot{Now: gen.Now, Cluster: pool(10), Jobs: []scheduler.Job{
				run, onPool("A", 8, 2*time.Hour, 50), onPool("B", tc.gpus, tc.limit, 10),
			}}
			d, err := scheduler.New(scheduler.Config{Backfill: scheduler.EASY, Order: scheduler.TierOrder{}}).Step(snap)
			require.NoError(t, err)
			require.Len(t, d.Reservations, 1)
			require.Equal(t, "A", d.Reservations[0].Job)
			require.Equal(t, gen.Now.Add(time.Hour), d.Reservations[0].Start)
			if tc.start {
				require.Len(t, d.Placements, 1)
				require.Equal(t, "B", d.Placements[0].Job)
				return
			}
			require.Empty(t, d.Placements)
			require.Len(t, d.Pending, 1)
			want := scheduler.ReasonBehindReservation
			if tc.gpus > 4 {
				want = scheduler.ReasonInsufficientGPUs
			}
			require.Equal(t, want, d.Pending[0].Reason)
		})
	}
}

// TestConservativeOrder: with conservative backfill, a job never changes
// what was decided for the jobs ahead of it. Adding the jobs one by one
// in priority order, every earlier job keeps its placement or its
// reservation's start. A reservation may move to other GPUs free at its
// start (re-pinned so that a later job starts as early as the count of
// free GPUs allows, as the textbook's count of processors does), but it
// keeps as many.
func TestConservativeOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 16).Draw(t, "nodes")
		c := pool(n)
		var jobs []scheduler.Job
		held := 0
		for i := range rapid.IntRange(0, 4).Draw(t, "running") {
			p := rapid.IntRange(1, 4).Draw(t, "rp")
			if held+p > n {
				break
			}
			j := onPool(fmt.Sprintf("r%d", i), p, time.Duration(rapid.IntRange(1, 10).Draw(t, "rlimit"))*time.Hour, 1000)
			j.State, j.Started = scheduler.Running, gen.Now
			for k := range p {
				j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: c.Nodes[held+k].Name, GPUs: []int{0}})
			}
			held += p
			jobs = append(jobs, j)
		}
		k := rapid.IntRange(1, 10).Draw(t, "pending")
		var prev *scheduler.Decision
		for i := range k {
			limit := time.Duration(rapid.IntRange(0, 8).Draw(t, "limit")) * time.Hour
			jobs = append(jobs, onPool(fmt.Sprintf("p%d", i), rapid.IntRange(1, n).Draw(t, "p"), limit, 100-i))
			d, err := scheduler.New(scheduler.Config{Backfill: scheduler.Conservative, Order: scheduler.TierOrder{}}).Step(&scheduler.Snapshot{Now: gen.Now, Cluster: c, Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			if prev != nil {
				for _, p := range prev.Placements {
					if !containsPlacement(d.Placements, p) {
						t.Fatalf("adding p%d changed the placement of %s %v: %+v", i, p.Job, p.Allocation, d)
					}
				}
				for _, r := range prev.Reservations {
					if !containsReservation(d.Reservations, r) {
						t.Fatalf("adding p%d changed the reservation of %s at %s %v: %+v", i, r.Job, r.Start, r.Allocation, d)
					}
				}
			}
			prev = d
		}
	})
}

func containsPlacement(ps []scheduler.Placement, p scheduler.Placement) bool {
	for _, q := range ps {
		if q.Job == p.Job && q.Allocation.String() == p.Allocation.String() {
			return true
		}
	}
	return false
}

func containsReservation(rs []scheduler.Reservation, r scheduler.Reservation) bool {
	for _, q := range rs {
		if q.Job == r.Job && q.Start.Equal(r.Start) && q.Allocation.Count() == r.Allocation.Count() {
			return true
		}
	}
	return false
}

// oneNode is a profile over one node of gpus GPUs whose GPUs held are
// held now and released at at.
func oneNode(t *testing.T, gpus int, held topology.GPUSet, at time.Duration) (*topology.Index, *backfill.Profile) {
	c := topology.Uniform(1, gpus, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	require.NoError(t, ix.TakeSet(0, held))
	p.AddRelease(0, held, at)
	return ix, p
}

// TestFreedBeforeItsRelease: GPUs freed in the index before the release
// the profile recorded for them are usable at once, to a cursor that an
// earlier query left at the same run (the index's record of changes must
// mark the node stale) and to one left after that release (which moves
// back past it).
func TestFreedBeforeItsRelease(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first gang.Request // asked before GPU 0 is freed; leaves a cursor
		at    time.Duration
	}{
		{"cursor at the same run", gang.NewRequest(1, 1), 0},
		{"cursor after the release", gang.NewRequest(1, 2), 2 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := topology.SetOf(0)
			ix, p := oneNode(t, 2, held, 2*time.Hour)
			st, ok := p.Earliest(tc.first, time.Hour, nil, 0)
			require.True(t, ok)
			require.Equal(t, tc.at, st.At)
			ix.Release(0, held) // the job holding GPU 0 ended early
			st, ok = p.Earliest(gang.NewRequest(1, 2), time.Hour, nil, 0)
			require.True(t, ok)
			require.Equal(t, time.Duration(0), st.At, "GPU 0 is free now")
			require.NoError(t, backfill.CheckInvariants(p))
		})
	}
}

// TestPlaceNowReplacesAnEarlyEndedRelease: a job released at 1h ends
// early and frees its GPU; PlaceNow puts a job of 2h there. The GPU is
// held until 2h, not free from the old job's 1h (it was offered for
// [1h, 2h) while the new job held it).
func TestPlaceNowReplacesAnEarlyEndedRelease(t *testing.T) {
	ix, p := oneNode(t, 2, topology.SetOf(0), time.Hour)
	ix.Release(0, topology.SetOf(0)) // the job ended early
	require.NoError(t, ix.TakeSet(0, topology.SetOf(1)))
	one := gang.NewRequest(1, 1)
	pl, out := p.PlaceNow(one, 2*time.Hour, nil)
	require.Equal(t, gang.Placed, out)
	require.Equal(t, topology.SetOf(0), pl.Slots[0].GPUs)
	st, ok := p.Earliest(one, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, 2*time.Hour, st.At, "held by the job just placed until 2h")
	require.NoError(t, backfill.CheckInvariants(p))
}

// TestZeroLengthReservation: runs and reservations of no length are
// taken to last a nanosecond. A job of no length takes the GPU released at
// 1h at 1h, and reserved there it holds the GPU for that nanosecond, so
// the next job starts a nanosecond later: what the oracle says of a
// one-nanosecond reservation.
func TestZeroLengthReservation(t *testing.T) {
	ix, p := oneNode(t, 1, topology.SetOf(0), time.Hour)
	one := gang.NewRequest(1, 1)
	st, ok := p.Earliest(one, 0, nil, 0)
	require.True(t, ok)
	require.Equal(t, time.Hour, st.At)
	p.Reserve(st.Placement, st.At, 0) // [1h, 1h+1ns)
	o := &oracle{ix: ix, freeNow: []topology.GPUSet{0},
		releases: []event{{n: 0, set: topology.SetOf(0), start: time.Hour, end: time.Hour}},
		reserved: []event{{n: 0, set: topology.SetOf(0), start: time.Hour, end: time.Hour + 1}}}
	want, ok := o.earliest(one, time.Hour, 0)
	require.True(t, ok)
	require.Equal(t, time.Hour+1, want)
	st, ok = p.Earliest(one, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, want, st.At)
	require.NoError(t, backfill.CheckInvariants(p))
}

// TestAgainFollowsEachGPU: when a reservation takes GPUs that different
// events last freed, each of those events learns when its GPUs are
// reserved again. GPUs 0 and 1 are released at 1h, GPU 1 is reserved
// from 1h30 to 2h, then both are reserved from 3h: the release's GPU 0
// and the 2h end's GPU 1 are both taken again at 3h.
func TestAgainFollowsEachGPU(t *testing.T) {
	_, p := oneNode(t, 8, topology.SetOf(0, 1), time.Hour)
	slot := func(gpus ...int) gang.Placement {
		return gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(gpus...), Members: 1}}}
	}
	p.Reserve(slot(1), 90*time.Minute, 30*time.Minute)
	require.Equal(t, []time.Duration{backfill.Forever}, backfill.AgainOf(p, 0, time.Hour), "GPU 0 is never reserved yet")
	p.Reserve(slot(0, 1), 3*time.Hour, time.Hour)
	require.Equal(t, []time.Duration{3 * time.Hour}, backfill.AgainOf(p, 0, time.Hour))
	require.Equal(t, []time.Duration{3 * time.Hour}, backfill.AgainOf(p, 0, 2*time.Hour))
	require.NoError(t, backfill.CheckInvariants(p))
}

// TestShorterRunPastAPartlyStackedReservation: a cursor moved to a
// shorter run passes the start of a reservation only some of whose GPUs
// an earlier reservation holds; the others become usable, so the node
// must be recomputed. On node 0, GPUs 0-1 are reserved for [0, 4h) and
// GPUs 0-3 for [4h, 5h); node 1 has four GPUs held for good. A whole
// node for [3h, 7h) fits nowhere (which leaves a cursor there); six GPUs
// for [3h, 3h30) fit on GPUs 2-7 of node 0.
func TestShorterRunPastAPartlyStackedReservation(t *testing.T) {
	c := topology.Uniform(2, 8, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	require.NoError(t, ix.TakeSet(1, topology.SetOf(0, 1, 2, 3)))
	p := backfill.NewProfile(ix)
	slot := func(gpus ...int) gang.Placement {
		return gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(gpus...), Members: 1}}}
	}
	p.Reserve(slot(0, 1), 0, 4*time.Hour)
	p.Reserve(slot(0, 1, 2, 3), 4*time.Hour, time.Hour)
	_, ok := p.EarliestBy(gang.NewRequest(1, 8), 4*time.Hour, nil, 3*time.Hour, 3*time.Hour)
	require.False(t, ok, "no node has eight GPUs for [3h, 7h)")
	st, ok := p.Earliest(gang.NewRequest(1, 6), 30*time.Minute, nil, 3*time.Hour)
	require.True(t, ok)
	require.Equal(t, 3*time.Hour, st.At)
	require.Equal(t, []gang.Slot{{Node: 0, GPUs: topology.SetOf(2, 3, 4, 5, 6, 7), Members: 1}}, st.Placement.Slots)
	require.NoError(t, backfill.CheckInvariants(p))
}

// TestEarliestKeepsAvoidAndDistinct: the busy-GPU preference must not move
// an answer onto an avoided node or stack members that must be on
// distinct nodes. Node 0 frees its GPUs at 1h and node 1 at 2h; a job
// that avoids node 0 can start only at 2h, on node 1. It is also the
// first query of its profile, and requests that avoid nodes skip the
// counts that other queries build first.
func TestEarliestKeepsAvoidAndDistinct(t *testing.T) {
	c := topology.Uniform(3, 8, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	for n := range topology.NodeID(2) {
		require.NoError(t, ix.TakeSet(n, topology.FirstN(8)))
		p.AddRelease(n, topology.FirstN(8), time.Duration(n+1)*time.Hour)
	}
	r := gang.NewRequest(1, 8)
	r.Avoid = func(n topology.NodeID) bool { return n != 1 }
	st, ok := p.Earliest(r, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, 2*time.Hour, st.At)
	require.Len(t, st.Placement.Slots, 1)
	require.Equal(t, topology.NodeID(1), st.Placement.Slots[0].Node, "the avoided nodes stay avoided")

	// Two members of 2 GPUs on distinct nodes, spread, at 1h: node 0's
	// busy GPUs could hold both, but Distinct puts them on two nodes.
	d := gang.NewRequest(2, 2)
	d.Distinct = true
	st, ok = p.Earliest(d, time.Hour, binpack.Spread{}, time.Hour)
	require.True(t, ok)
	require.Equal(t, time.Hour, st.At)
	nodes := map[topology.NodeID]bool{}
	for _, s := range st.Placement.Slots {
		require.Equal(t, 1, s.Members, "one member per node")
		nodes[s.Node] = true
	}
	require.Len(t, nodes, 2)
}

// TestReleaseMovedToForever: GPUs whose release moves to Forever are
// never usable, though enough GPUs are free in all for the whole run.
func TestReleaseMovedToForever(t *testing.T) {
	c := topology.Uniform(2, 2, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	require.NoError(t, ix.TakeSet(0, topology.SetOf(0)))
	require.NoError(t, ix.TakeSet(1, topology.SetOf(1)))
	p.AddRelease(0, topology.SetOf(0), time.Hour)
	p.MoveRelease(0, topology.SetOf(0), backfill.Forever)
	st, ok := p.Earliest(gang.NewRequest(1, 2), time.Hour, nil, 0)
	require.False(t, ok, "fits at %s", st.At)
	require.NoError(t, backfill.CheckInvariants(p))
}

// A move that takes every GPU of a node's only release leaves the node
// without events for a moment; the release it records lists the node
// again. Listed twice, the node's reservations were counted twice in the
// free GPUs over time, which then said node 1's GPUs, free now, were not.
func TestMovedWholeReleaseCountsOnce(t *testing.T) {
	c := topology.Uniform(2, 8, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	held := topology.SetOf(0, 1, 2, 3)
	require.NoError(t, ix.TakeSet(0, held))
	p.AddRelease(0, held, 10*time.Hour)
	p.MoveRelease(0, held, 20*time.Hour)
	require.NoError(t, backfill.CheckInvariants(p))
	// A query that avoids nodes is not remembered and builds no count
	// of free GPUs over time; the reservation is made before one exists.
	r := gang.NewRequest(1, 4)
	r.Avoid = func(n topology.NodeID) bool { return n != 0 }
	st, ok := p.Earliest(r, 100*time.Hour, nil, 0)
	require.True(t, ok)
	p.Reserve(st.Placement, st.At, 100*time.Hour)
	st, ok = p.Earliest(gang.NewRequest(1, 8), time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, time.Duration(0), st.At, "node 1 is free now")
	require.NoError(t, backfill.CheckInvariants(p))
}

// TestEarliestInsideWithReservations: a query made while
// WithReservations shows fewer GPUs answers for that view, and its answer
// is not remembered for the queries after it. Both GPUs of the node are
// reserved from 10m to 20m: a 5-minute run fits now, but not in the
// 30-minute window's view, where the reserved GPUs are hidden.
func TestEarliestInsideWithReservations(t *testing.T) {
	_, p, r := twoGPUProfile(t)
	for g := range 2 {
		reserveGPU(p, g, 10*time.Minute, 10*time.Minute)
	}
	before, ok := p.Earliest(r, 5*time.Minute, nil, 0)
	require.True(t, ok)
	require.Equal(t, time.Duration(0), before.At)
	var inside bool
	p.WithReservations(30*time.Minute, func() { _, inside = p.Earliest(r, 5*time.Minute, nil, 0) })
	require.False(t, inside, "inside the window's view no GPU is shown")
	after, ok := p.Earliest(r, 5*time.Minute, nil, 0)
	require.True(t, ok)
	require.Equal(t, time.Duration(0), after.At, "the answer found inside was remembered")
	require.NoError(t, backfill.CheckInvariants(p))
}

// TestEarliestInsideWithReservationsStartsWhereTheViewAllows: inside
// WithReservations the index hides GPU 0, free now but reserved from 1h
// to 2h; GPU 1 is free throughout, so a 90-minute run of one GPU starts
// now, although the count of free GPUs over time, which takes the
// reservation away again, would put the first possible start at 2h.
func TestEarliestInsideWithReservationsStartsWhereTheViewAllows(t *testing.T) {
	ix, p, r := twoGPUProfile(t)
	reserveGPU(p, 0, time.Hour, time.Hour)
	var st backfill.Start
	var ok bool
	p.WithReservations(2*time.Hour, func() {
		require.Equal(t, topology.SetOf(1), ix.FreeSet(0))
		st, ok = p.Earliest(r, 90*time.Minute, nil, 0)
	})
	require.True(t, ok)
	require.Equal(t, time.Duration(0), st.At)
}

// twoGPUProfile is a profile over one idle node of two GPUs, with a
// request for one GPU that it has answered once (so that its answers are
// remembered from then on).
func twoGPUProfile(t *testing.T) (*topology.Index, *backfill.Profile, gang.Request) {
	c := topology.Cluster{Nodes: []topology.Node{{Name: "a", GPUs: 2, GPUType: "H100"}}}
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	r := gang.NewRequest(1, 1)
	p.Earliest(r, time.Minute, nil, 0)
	return ix, p, r
}

// reserveGPU reserves GPU g of node 0 from start for d.
func reserveGPU(p *backfill.Profile, g int, start, d time.Duration) {
	p.Reserve(gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(g), Members: 1}}}, start, d)
}

// TestPlaceNowPrefersBySoonestNeed: a job placed now takes first the free
// GPU whose reservation comes soonest after its run, whatever the order
// in which the reservations were made. GPU 0 of node 0 is reserved over
// [5m, 15m) and [15m, 40m) (joined into one when made in that order, two
// when made the other way round), GPU 1 of node 0 from 50m, GPU 0 of node
// 1 from 30m; GPU 1 of node 1 is held. A run of 10m cannot use GPU 0 of
// node 0, so its reservation from 15m has no say: GPU 0 of node 1, needed
// at 30m, goes first.
func TestPlaceNowPrefersBySoonestNeed(t *testing.T) {
	for _, joined := range []bool{true, false} {
		c := topology.Uniform(2, 2, "H100")
		ix, err := topology.NewIndex(&c)
		require.NoError(t, err)
		p := backfill.NewProfile(ix)
		require.NoError(t, ix.TakeSet(1, topology.SetOf(1)))
		p.AddRelease(1, topology.SetOf(1), 2*time.Hour)
		on := func(n topology.NodeID, gpus ...int) gang.Placement {
			return gang.Placement{Level: topology.ClusterLevel, Slots: []gang.Slot{{Node: n, GPUs: topology.SetOf(gpus...), Members: 1}}}
		}
		first, second := [2]time.Duration{5 * time.Minute, 10 * time.Minute}, [2]time.Duration{15 * time.Minute, 25 * time.Minute}
		if !joined {
			first, second = second, first
		}
		p.Reserve(on(0, 0), first[0], first[1])
		p.Reserve(on(0, 0), second[0], second[1])
		p.Reserve(on(0, 1), 50*time.Minute, 10*time.Minute)
		p.Reserve(on(1, 0), 30*time.Minute, 10*time.Minute)
		pl, out := p.PlaceNow(gang.NewRequest(1, 1), 10*time.Minute, nil)
		require.Equal(t, gang.Placed, out)
		require.Equal(t, on(1, 0).Slots[0].Node, pl.Slots[0].Node, "joined %v: %+v", joined, pl)
		require.Equal(t, topology.SetOf(0), pl.Slots[0].GPUs, "joined %v", joined)
		require.NoError(t, backfill.CheckInvariants(p))
	}
}
