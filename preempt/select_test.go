package preempt

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
	"github.com/stretchr/testify/require"
)

func TestSelectFitsWithoutPreemption(t *testing.T) {
	ix, err := topology.NewIndex(grid(4, 8, 2))
	require.NoError(t, err)
	cands := []Candidate{{ID: "a", Tier: 3, Holds: whole(t, ix, "n0")}}
	takeAll(t, ix, cands)
	before := snap(ix)
	victims, pl, ok := Select(ix, gang.NewRequest(3, 8), binpack.Pack{}, cands)
	require.True(t, ok)
	require.Empty(t, victims)
	require.Equal(t, 24, pl.Allocation(ix).Count())
	require.Equal(t, before, snap(ix))
}

func TestSelectCostOrder(t *testing.T) {
	// Four full 8-GPU nodes; the preemptor needs one node. Each case
	// varies one key of the cost order.
	tests := []struct {
		name  string
		cands []Candidate
		want  string
	}{
		{"borrowed first", []Candidate{
			{ID: "a", Tier: 3}, {ID: "b", Tier: 1, Borrowed: true}, {ID: "c", Tier: 3}, {ID: "d", Tier: 2},
		}, "b"},
		{"lowest priority", []Candidate{
			{ID: "a", Tier: 1}, {ID: "b", Tier: 2}, {ID: "c", Tier: 3, WorkLost: time.Hour}, {ID: "d", Tier: 2},
		}, "c"},
		{"least work lost", []Candidate{
			{ID: "a", Tier: 3, WorkLost: 3 * time.Hour}, {ID: "b", Tier: 3, WorkLost: time.Hour},
			{ID: "c", Tier: 3, WorkLost: 2 * time.Hour}, {ID: "d", Tier: 2},
		}, "b"},
		{"by ID", []Candidate{
			{ID: "d", Tier: 3}, {ID: "b", Tier: 3}, {ID: "c", Tier: 3}, {ID: "e", Tier: 3},
		}, "b"},
		{"tier 0 never", []Candidate{
			{ID: "a", Tier: 0}, {ID: "b", Tier: 0}, {ID: "c", Tier: 0}, {ID: "d", Tier: 1, WorkLost: time.Hour},
		}, "d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := topology.NewIndex(grid(4, 8, 4))
			require.NoError(t, err)
			for i := range tt.cands {
				tt.cands[i].Holds = whole(t, ix, ix.Name(topology.NodeID(i)))
			}
			takeAll(t, ix, tt.cands)
			before := snap(ix)
			victims, pl, ok := Select(ix, gang.NewRequest(1, 8), binpack.Pack{}, tt.cands)
			require.True(t, ok)
			require.Equal(t, []string{tt.want}, ids(tt.cands, victims))
			require.Equal(t, before, snap(ix))
			require.Len(t, pl.Slots, 1)
			require.Equal(t, tt.cands[victims[0]].Holds[0].Node, pl.Slots[0].Node)
		})
	}
}

func TestSelectFewestGPUs(t *testing.T) {
	// n0 has 2 free GPUs; the preemptor needs 4 on one node. Stopping
	// either job on n0 suffices; the 2-GPU one is cheaper.
	ix, err := topology.NewIndex(grid(2, 8, 2))
	require.NoError(t, err)
	cands := []Candidate{
		{ID: "big", Tier: 3, Holds: []Hold{holdOn(t, ix, "n0", 0, 1, 2, 3)}},
		{ID: "small", Tier: 3, Holds: []Hold{holdOn(t, ix, "n0", 4, 5)}},
		{ID: "other", Tier: 3, Holds: []Hold{holdOn(t, ix, "n1", 0, 1, 2, 3, 4, 5, 6, 7)}},
	}
	takeAll(t, ix, cands)
	victims, _, ok := Select(ix, gang.NewRequest(1, 4), binpack.Pack{}, cands)
	require.True(t, ok)
	require.Equal(t, []string{"small"}, ids(cands, victims))
}

func TestSelectFewestGPUsCountsSize(t *testing.T) {
	// Both jobs offer the preemptor 4 GPUs of n0, but "trimmed" holds 16
	// GPUs in all (its other GPUs were left out of Holds, as the
	// scheduler leaves out GPUs reserved for others): stopping it loses
	// more work, so the 8-GPU job goes.
	ix, err := topology.NewIndex(grid(3, 8, 3))
	require.NoError(t, err)
	cands := []Candidate{
		{ID: "a-trimmed", Tier: 3, Holds: []Hold{holdOn(t, ix, "n0", 0, 1, 2, 3)}, Size: 16},
		{ID: "b-whole", Tier: 3, Holds: []Hold{holdOn(t, ix, "n0", 4, 5, 6, 7)}, Size: 8},
		{ID: "c-other", Tier: 3, Holds: whole(t, ix, "n1")},
	}
	takeAll(t, ix, cands)
	require.NoError(t, ix.TakeSet(2, topology.FirstN(8)))
	victims, _, ok := Select(ix, gang.NewRequest(1, 4), binpack.Pack{}, cands)
	require.True(t, ok)
	require.Equal(t, []string{"b-whole"}, ids(cands, victims))

	// Without Size, the GPUs of Holds decide: 4 against 4, then the ID.
	cands[0].Size, cands[1].Size = 0, 0
	victims, _, ok = Select(ix, gang.NewRequest(1, 4), binpack.Pack{}, cands)
	require.True(t, ok)
	require.Equal(t, []string{"a-trimmed"}, ids(cands, victims))
	require.Equal(t, -1, Compare(&Candidate{ID: "z", Size: 2, Holds: whole(t, ix, "n1")}, &Candidate{ID: "a", Size: 3}))
}

func TestSelectMinimalityDropsUselessVictims(t *testing.T) {
	// Two leaves of two nodes. The cheap P3 job sits alone in leaf l0,
	// which also holds a P0 job; the preemptor needs a whole leaf. Cheap
	// first, it frees l0's node, which does not help; then the P2 jobs of
	// leaf l1. The minimality pass keeps the P3 job running.
	ix, err := topology.NewIndex(grid(4, 8, 2))
	require.NoError(t, err)
	cands := []Candidate{
		{ID: "cheap", Tier: 3, Holds: whole(t, ix, "n0")},
		{ID: "prod", Tier: 0, Holds: whole(t, ix, "n1")},
		{ID: "x", Tier: 2, Holds: whole(t, ix, "n2")},
		{ID: "y", Tier: 2, Holds: whole(t, ix, "n3")},
	}
	takeAll(t, ix, cands)
	before := snap(ix)
	r := gang.NewRequest(2, 8)
	r.Required = 1
	victims, pl, ok := Select(ix, r, binpack.Pack{}, cands)
	require.True(t, ok)
	require.ElementsMatch(t, []string{"x", "y"}, ids(cands, victims))
	require.Equal(t, before, snap(ix))
	require.Equal(t, "n2[0-7] n3[0-7]", pl.Allocation(ix).String())
}

func TestSelectSkipsCandidatesThatCannotHelp(t *testing.T) {
	// The cheapest jobs are on the wrong GPU type, on a draining node, and
	// on a node the request avoids; only "right" helps.
	c := grid(4, 8, 4)
	c.Nodes[0].GPUType = "A100"
	c.Nodes[1].State = topology.Draining
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	cands := []Candidate{
		{ID: "type", Tier: 3, Holds: whole(t, ix, "n0")},
		{ID: "drain", Tier: 3, Holds: whole(t, ix, "n1")},
		{ID: "avoided", Tier: 3, Holds: whole(t, ix, "n2")},
		{ID: "right", Tier: 1, WorkLost: 100 * time.Hour, Holds: whole(t, ix, "n3")},
	}
	takeAll(t, ix, cands)
	before := snap(ix)
	r := gang.NewRequest(1, 8)
	r.Class, _ = ix.Class("H100")
	avoid, _ := ix.Lookup("n2")
	r.Avoid = func(n topology.NodeID) bool { return n == avoid }
	victims, _, ok := Select(ix, r, binpack.Pack{}, cands)
	require.True(t, ok)
	require.Equal(t, []string{"right"}, ids(cands, victims))
	require.Equal(t, before, snap(ix))
}

func TestSelectNoRoom(t *testing.T) {
	ix, err := topology.NewIndex(grid(2, 8, 2))
	require.NoError(t, err)
	cands := []Candidate{
		{ID: "prod", Tier: 0, Holds: whole(t, ix, "n0")},
		{ID: "a", Tier: 3, Holds: whole(t, ix, "n1")},
	}
	takeAll(t, ix, cands)
	before := snap(ix)
	victims, _, ok := Select(ix, gang.NewRequest(2, 8), nil, cands)
	require.False(t, ok)
	require.Empty(t, victims)
	require.Equal(t, before, snap(ix))

	_, _, ok = Select(ix, gang.NewRequest(1, 9), nil, cands)
	require.False(t, ok, "invalid request")
	_, _, ok = Select(ix, gang.NewRequest(1, 8), nil, nil)
	require.False(t, ok, "no candidates")
}

func TestSelectIgnoresBadHolds(t *testing.T) {
	// Holds on unknown nodes or on GPUs the index does not show held do
	// not count and do not disturb the index.
	ix, err := topology.NewIndex(grid(2, 8, 2))
	require.NoError(t, err)
	real := Candidate{ID: "real", Tier: 3, Holds: whole(t, ix, "n0", "n1")}
	takeAll(t, ix, []Candidate{real})
	ghost := Candidate{ID: "a-ghost", Tier: 3, Holds: []Hold{{Node: 99, GPUs: 1}, {Node: -1, GPUs: 1}}}
	before := snap(ix)
	victims, _, ok := Select(ix, gang.NewRequest(1, 8), nil, []Candidate{ghost, real})
	require.True(t, ok)
	require.Equal(t, []int{1}, victims)
	require.Equal(t, before, snap(ix))
}

func TestCompareAndHelpers(t *testing.T) {
	a := Candidate{ID: "a", Tier: 3, Holds: []Hold{{GPUs: topology.FirstN(8)}}}
	b := Candidate{ID: "b", Tier: 3, Holds: []Hold{{GPUs: topology.FirstN(2)}, {Node: 1, GPUs: 1}}}
	require.Equal(t, 8, a.NumGPUs())
	require.Equal(t, 3, b.NumGPUs())
	require.Equal(t, 1, Compare(&a, &b))
	require.Equal(t, -1, Compare(&b, &a))
	require.Equal(t, 0, Compare(&a, &a))

	cands := []Candidate{{Grace: time.Minute}, {Grace: 5 * time.Minute}, {Grace: 2 * time.Minute}}
	require.Equal(t, 5*time.Minute, MaxGrace(cands, []int{0, 1, 2}))
	require.Equal(t, time.Minute, MaxGrace(cands, []int{0}))
	require.Zero(t, MaxGrace(cands, nil))

	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	require.Equal(t, 3*time.Hour, WorkSince(t0.Add(3*time.Hour), t0, time.Time{}))
	require.Equal(t, time.Hour, WorkSince(t0.Add(3*time.Hour), t0, t0.Add(2*time.Hour)))
	require.Zero(t, WorkSince(t0, t0.Add(time.Hour), time.Time{}))
}

func TestWorth(t *testing.T) {
	tests := []struct {
		grace, wait time.Duration
		canWait     bool
		want        bool
	}{
		{5 * time.Minute, 0, false, true},               // no known start: preempt
		{5 * time.Minute, time.Hour, true, true},        // waiting is longer than the grace
		{5 * time.Minute, 5 * time.Minute, true, false}, // starts by then anyway
		{5 * time.Minute, 2 * time.Minute, true, false}, // starts sooner by waiting
		{0, time.Second, true, true},                    // no grace, any wait is worse
		{0, 0, true, false},                             // can start now
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Worth(tt.grace, tt.wait, tt.canWait), "%+v", tt)
	}
}

func TestSelectPlacementIsWhereGangLandsWithAvoid(t *testing.T) {
	// Two leaves of two 4-GPU nodes; "a" holds n0, n1 and n2, another job
	// holds n3. The preemptor needs one node, prefers one leaf and avoids
	// n1. Once "a" stops, leaf l1 has 4 free GPUs and l0 has 8 (n1's
	// count though it is avoided): best fit puts the gang in l1, on n2.
	// The placement Select returns is that one, not one computed as if
	// n1 stayed held.
	ix, err := topology.NewIndex(grid(4, 4, 2))
	require.NoError(t, err)
	cands := []Candidate{{ID: "a", Tier: 3, Holds: whole(t, ix, "n0", "n1", "n2")}}
	takeAll(t, ix, cands)
	n3, _ := ix.Lookup("n3")
	require.NoError(t, ix.TakeSet(n3, topology.FirstN(4)))
	n1, _ := ix.Lookup("n1")
	r := gang.NewRequest(1, 4)
	r.Preferred = 1
	r.Avoid = func(n topology.NodeID) bool { return n == n1 }
	before := snap(ix)
	victims, pl, ok := Select(ix, r, binpack.Pack{}, cands)
	require.True(t, ok)
	require.Equal(t, []string{"a"}, ids(cands, victims))
	require.Equal(t, before, snap(ix))

	freed := ix.Clone()
	for _, h := range cands[0].Holds {
		freed.Release(h.Node, h.GPUs)
	}
	want, out := gang.Place(freed, r, binpack.Pack{})
	require.Equal(t, gang.Placed, out)
	require.Equal(t, "n2[0-3]", want.Allocation(freed).String())
	require.Equal(t, want.Allocation(freed).String(), pl.Allocation(ix).String())
}

// TestSelectNeverStopsTierZeroOrBelow: Select refuses victims of tier 0
// and, as Matrix.CanPreempt does, of a negative tier, whatever a caller
// passes it.
func TestSelectNeverStopsTierZeroOrBelow(t *testing.T) {
	for _, tier := range []int{0, -1} {
		ix, err := topology.NewIndex(grid(1, 8, 1))
		require.NoError(t, err)
		c := []Candidate{{ID: "low", Tier: tier, Holds: whole(t, ix, "n0")}}
		takeAll(t, ix, c)
		v, _, ok := Select(ix, gang.NewRequest(1, 8), nil, c)
		require.False(t, ok && len(v) > 0, "tier %d: Select stops it: %v", tier, v)
	}
}

// TestDropPassCountsOnlyDomainsThatFit bounds the work of the drop pass:
// a victim freed in a domain that never came to fit is kept without its
// holds being counted again. Sixteen leaves of four full nodes, one
// candidate per node, the cheapest of each leaf first and leaves in turn:
// a gang of four nodes in one leaf fits once the greedy pass has freed 49
// candidates (three of every leaf and the fourth of leaf 0), and only
// leaf 0's four are victims.
func TestDropPassCountsOnlyDomainsThatFit(t *testing.T) {
	const leaves, perLeaf = 16, 4
	ix, err := topology.NewIndex(grid(leaves*perLeaf, 8, perLeaf))
	require.NoError(t, err)
	var cands []Candidate
	for i := range leaves * perLeaf {
		leaf, k := i/perLeaf, i%perLeaf
		cands = append(cands, Candidate{
			ID: fmt.Sprintf("c%02d", i), Tier: 3,
			WorkLost: time.Duration(k*leaves+leaf) * time.Minute, // turn k of leaf: cheapest first
			Holds:    whole(t, ix, fmt.Sprintf("n%d", i)),
		})
	}
	takeAll(t, ix, cands)
	r := gang.NewRequest(perLeaf, 8)
	r.Required = 1 // leaf
	var sc Selector
	victims, _, ok := sc.Select(ix, r, binpack.Pack{}, cands)
	require.True(t, ok)
	require.Equal(t, []string{"c00", "c01", "c02", "c03"}, ids(cands, victims))
	greedy := (perLeaf-1)*leaves + 1
	// The greedy pass counts each of its candidates once; the drop pass
	// retakes (and frees again) only leaf 0's four. Counting the other
	// 45 again would make it 102.
	require.Equal(t, greedy+2*perLeaf, sc.counted)
}
