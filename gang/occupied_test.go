package gang_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// TestDistinctFillsUnoccupiedPlacesFirst: a Distinct gang with Occupied
// places puts as many members as it can on distinct places (nodes, or
// SpreadLevel domains) that are neither occupied nor shared, within the
// domain it lands in: the occupied places and the gang's together cover
// as many places as the domain's usable nodes with room offer.
func TestDistinctFillsUnoccupiedPlacesFirst(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix := smallHeldIndex(t)
		r := smallRequest(t, ix)
		r.Distinct = true
		place := func(n topology.NodeID) int {
			if r.SpreadLevel != gang.NoLevel {
				return int(ix.DomainOf(r.SpreadLevel, n))
			}
			return int(n)
		}
		occ := map[int]bool{}
		for n := range topology.NodeID(ix.NumNodes()) {
			if rapid.IntRange(0, 2).Draw(t, "occupied") == 0 {
				occ[place(n)] = true
			}
		}
		r.Occupied = func(n topology.NodeID) bool { return occ[place(n)] }
		scorer := rapid.SampledFrom([]binpack.Scorer{binpack.Spread{},
			binpack.ScorerFunc(func(c binpack.Candidate) int64 { return -int64(c.Free) })}).Draw(t, "scorer")
		cl := ix.Clone()
		pl, out := gang.Place(ix, r, scorer)
		if out != gang.Placed {
			return
		}
		offered := map[int]bool{}
		for n := range topology.NodeID(ix.NumNodes()) {
			usable := cl.State(n) == topology.Ready && cl.InClass(n, r.Class) && (r.Avoid == nil || !r.Avoid(n))
			in := pl.Level == topology.ClusterLevel || cl.DomainOf(pl.Level, n) == pl.Domain
			if usable && in && cl.Free(n) >= r.GPUsPerMember && !occ[place(n)] {
				offered[place(n)] = true
			}
		}
		covered := map[int]bool{}
		for p := range occ {
			covered[p] = true
		}
		for _, s := range pl.Slots {
			covered[place(s.Node)] = true
		}
		if want := len(occ) + min(r.Members, len(offered)); len(covered) != want {
			t.Fatalf("occupied and gang cover %d places, %d possible (%v)", len(covered), want, pl.Allocation(ix))
		}
	})
}

// TestDistinctPrefersAnOccupiedNodeToDoublingUp: node n00 is Occupied
// (another replica's) but holds no member of this gang and has 8 free
// GPUs. When no unoccupied node has room for the second member, it goes
// to n00 rather than onto n01 beside the first, even for a scorer that
// packs.
func TestDistinctPrefersAnOccupiedNodeToDoublingUp(t *testing.T) {
	c := topology.Uniform(2, 8, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	n00, _ := ix.Lookup("n00")
	r := gang.NewRequest(2, 4)
	r.Distinct = true
	r.Occupied = func(n topology.NodeID) bool { return n == n00 }
	pack := binpack.ScorerFunc(func(c binpack.Candidate) int64 { return -int64(c.Free - c.Request) })
	pl, out := gang.Place(ix, r, pack)
	require.Equal(t, gang.Placed, out)
	require.Len(t, pl.Allocation(ix), 2, "both members on one node: %v", pl.Allocation(ix))
}
