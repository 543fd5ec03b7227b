package gang_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// twoRacks is rack A with a1 (half taken, so A is the best fit) and rack
// B with b1, both of 8 GPUs.
func twoRacks(t *testing.T) (*topology.Index, topology.NodeID) {
	c := topology.Cluster{Levels: []string{"rack"}, Nodes: []topology.Node{
		{Name: "a1", GPUs: 8, Domains: map[string]string{"rack": "A"}},
		{Name: "b1", GPUs: 8, Domains: map[string]string{"rack": "B"}},
	}}
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	a1, _ := ix.Lookup("a1")
	require.NoError(t, ix.TakeSet(a1, topology.FirstN(4)))
	return ix, a1
}

// When the best-fit domain's room is all on avoided nodes, Place tries
// the next domain of the level before it gives up (required level) or
// loosens the topology (preferred level).
func TestAvoidTriesOtherDomains(t *testing.T) {
	ix, a1 := twoRacks(t)
	b1, _ := ix.Lookup("b1")
	avoid := func(n topology.NodeID) bool { return n == a1 }
	for _, s := range []binpack.Scorer{nil, binpack.Spread{}} {
		r := gang.NewRequest(1, 4)
		r.Required, r.Avoid = 0, avoid
		pl, out := gang.Place(ix, r, s)
		require.Equal(t, gang.Placed, out, "required, scorer %T", s)
		require.Equal(t, b1, pl.Slots[0].Node)
		pl.Release(ix)

		r = gang.NewRequest(1, 4)
		r.Preferred, r.Avoid = 0, avoid
		pl, out = gang.Place(ix, r, s)
		require.Equal(t, gang.Placed, out, "preferred, scorer %T", s)
		require.Equal(t, 0, pl.Level, "placed within a rack")
		require.Equal(t, b1, pl.Slots[0].Node)
		pl.Release(ix)
	}
}

// chooseFirst is a DomainChooser that takes the first domain offered.
type chooseFirst struct{}

func (chooseFirst) Choose(_ *topology.Index, _ int, _ gang.Request, fits []topology.DomainID) topology.DomainID {
	return fits[0]
}

// A Chooser's domain is tried first, and with Avoid the others after it.
func TestAvoidWithChooser(t *testing.T) {
	ix, a1 := twoRacks(t)
	b1, _ := ix.Lookup("b1")
	r := gang.NewRequest(1, 4)
	r.Required, r.Chooser = 0, chooseFirst{}
	pl, out := gang.Place(ix, r, nil)
	require.Equal(t, gang.Placed, out)
	require.Equal(t, a1, pl.Slots[0].Node, "the chooser's pick (the best fit, offered first)")
	pl.Release(ix)
	r.Avoid = func(n topology.NodeID) bool { return n == a1 }
	pl, out = gang.Place(ix, r, nil)
	require.Equal(t, gang.Placed, out)
	require.Equal(t, b1, pl.Slots[0].Node)
	pl.Release(ix)
}

// keepLast is a DomainChooser that keeps the list it was offered, and a
// copy of it as offered, and picks its last domain.
type keepLast struct{ kept, offered *[]topology.DomainID }

func (k keepLast) Choose(_ *topology.Index, _ int, _ gang.Request, fits []topology.DomainID) topology.DomainID {
	*k.kept, *k.offered = fits, slices.Clone(fits)
	return fits[len(fits)-1]
}

// Place does not rearrange the list it offered a Chooser.
func TestChooserListUntouched(t *testing.T) {
	ix, a1 := twoRacks(t)
	b1, _ := ix.Lookup("b1")
	var kept, offered []topology.DomainID
	r := gang.NewRequest(1, 4)
	r.Required, r.Chooser = 0, keepLast{&kept, &offered}
	pl, out := gang.Place(ix, r, nil)
	require.Equal(t, gang.Placed, out)
	require.Equal(t, b1, pl.Slots[0].Node, "the chooser's pick")
	pl.Release(ix)
	require.Len(t, kept, 2)
	require.Equal(t, offered, kept)
	r.Avoid = func(n topology.NodeID) bool { return n == b1 }
	pl, out = gang.Place(ix, r, nil)
	require.Equal(t, gang.Placed, out)
	require.Equal(t, a1, pl.Slots[0].Node, "the chooser's pick is avoided: the other domain")
	pl.Release(ix)
	require.Equal(t, offered, kept)
}

// Without Avoid or a Chooser, Place lists no domains: a placement costs
// its slots and nothing more (Place runs for every fit check of a Step).
func TestPlaceAllocations(t *testing.T) {
	ix, _ := twoRacks(t)
	r := gang.NewRequest(1, 4)
	r.Required = 0
	n := testing.AllocsPerRun(100, func() {
		pl, out := gang.Place(ix, r, nil)
		if out != gang.Placed {
			t.Fatal(out)
		}
		pl.Release(ix)
	})
	require.LessOrEqual(t, n, 2.0)
}

// strictChooser fails the test when offered no domain.
type strictChooser struct{ t *testing.T }

func (c strictChooser) Choose(_ *topology.Index, _ int, _ gang.Request, fits []topology.DomainID) topology.DomainID {
	if len(fits) == 0 {
		c.t.Fatal("Choose called with no domain to choose from")
	}
	return fits[0]
}

// A Chooser is asked only when some domain has room.
func TestChooserNotAskedWithoutRoom(t *testing.T) {
	ix, _ := twoRacks(t)
	r := gang.NewRequest(2, 8)
	r.Required, r.Chooser = 0, strictChooser{t}
	_, out := gang.Place(ix, r, nil)
	require.Equal(t, gang.NoCapacity, out)
}

// Avoid does not change what a failure means: a gang that the nodes it
// does not avoid hold, but no domain of its required level, is
// NoDomain; one that they cannot hold at all is NoCapacity.
func TestAvoidKeepsOutcome(t *testing.T) {
	c := topology.Cluster{Levels: []string{"leaf"}, Nodes: []topology.Node{
		{Name: "a", GPUs: 8, Domains: map[string]string{"leaf": "l0"}},
		{Name: "b", GPUs: 8, Domains: map[string]string{"leaf": "l1"}},
		{Name: "c", GPUs: 8, Domains: map[string]string{"leaf": "l2"}},
	}}
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	a, _ := ix.Lookup("a")
	for _, s := range []binpack.Scorer{nil, binpack.Spread{}} {
		r := gang.NewRequest(2, 8)
		r.Required = 0
		_, out := gang.Place(ix, r, s)
		require.Equal(t, gang.NoDomain, out, "no Avoid, scorer %T", s)
		r.Avoid = func(topology.NodeID) bool { return false }
		_, out = gang.Place(ix, r, s)
		require.Equal(t, gang.NoDomain, out, "Avoid of nothing, scorer %T", s)
		r.Avoid = func(n topology.NodeID) bool { return n == a }
		_, out = gang.Place(ix, r, s)
		require.Equal(t, gang.NoDomain, out, "b and c hold it, scorer %T", s)
		r = gang.NewRequest(3, 8)
		r.Required, r.Avoid = 0, func(n topology.NodeID) bool { return n == a }
		_, out = gang.Place(ix, r, s)
		require.Equal(t, gang.NoCapacity, out, "b and c cannot hold 3 members, scorer %T", s)
		require.Equal(t, 24, ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType), "failures change nothing")
	}
}
