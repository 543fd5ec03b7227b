package gang_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// TestMalformedRequests: a class or spread level the index does not
// have makes a request Invalid, for gang and for the backfill profile
// built on it, and neither panics.
func TestMalformedRequests(t *testing.T) {
	c := topology.Uniform(2, 8, "H100")
	c.Levels = []string{"spine"}
	for i := range c.Nodes {
		c.Nodes[i].Domains = map[string]string{"spine": "s0"}
	}
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	require.Equal(t, 1, ix.NumClasses())
	bad := map[string]gang.Request{}
	for name, cl := range map[string]topology.Class{"class 1": 1, "class -1": -1} {
		r := gang.NewRequest(1, 1)
		r.Class = cl
		bad[name] = r
	}
	r := gang.NewRequest(2, 1)
	r.Distinct, r.SpreadLevel = true, 1
	bad["spread level 1 of 1"] = r
	r = gang.NewRequest(2, 1)
	r.Distinct, r.SpreadLevel = true, topology.ClusterLevel
	bad["spread level ClusterLevel"] = r
	bad["spread level 5"] = gang.Request{Members: 2, GPUsPerMember: 1, Required: gang.NoLevel, Preferred: gang.NoLevel, Distinct: true, SpreadLevel: 5}
	for name, r := range bad {
		require.False(t, r.Valid(ix), name)
		_, out := gang.Place(ix, r, binpack.Spread{})
		require.Equal(t, gang.Invalid, out, name)
		_, ok := gang.Fill(ix, r, topology.ClusterLevel, 0, nil)
		require.False(t, ok, name)
		p := backfill.NewProfile(ix)
		_, out = p.PlaceNow(r, time.Hour, nil)
		require.Equal(t, gang.Invalid, out, name)
		require.Equal(t, gang.Invalid, p.FitsNow(r, time.Hour, nil), name)
		_, ok = p.Earliest(r, time.Hour, nil, 0)
		require.False(t, ok, name)
		require.Equal(t, 16, ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType), name)
	}
	require.True(t, gang.NewRequest(2, 8).Valid(ix))
}

// TestFillWithAvoidChecksCapacity: Fill with Avoid set still refuses a
// gang larger than the domain; it skipped the check and an overflowing
// member count was "placed" on one node.
func TestFillWithAvoidChecksCapacity(t *testing.T) {
	c := topology.Uniform(2, 8, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	r := gang.NewRequest(1<<62+1, 4)
	r.Avoid = func(topology.NodeID) bool { return false }
	_, ok := gang.Fill(ix, r, topology.ClusterLevel, 0, nil)
	require.False(t, ok)
	_, ok = gang.Fill(ix, gang.NewRequest(1, 1), 3, 0, nil)
	require.False(t, ok, "no level 3")
	_, ok = gang.Fill(ix, gang.NewRequest(1, 1), topology.ClusterLevel, 1, nil)
	require.False(t, ok, "no domain 1 of the cluster")
}
