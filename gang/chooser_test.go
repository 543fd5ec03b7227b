package gang_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Two leaves of four 8-GPU nodes; leaf l0 has one node busy. Best fit puts
// a 2×8 gang that requires one leaf in l0 (fewer free GPUs); a chooser
// that wants the emptiest leaf puts it in l1.
func TestDomainChooser(t *testing.T) {
	c := topology.Cluster{Levels: []string{"leaf"}}
	for i := range 8 {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8,
			Domains: map[string]string{"leaf": fmt.Sprintf("l%d", i/4)}})
	}
	build := func() *topology.Index {
		ix, err := topology.NewIndex(&c)
		require.NoError(t, err)
		n0, _ := ix.Lookup("n0")
		require.NoError(t, ix.TakeSet(n0, topology.FirstN(8)))
		return ix
	}
	req := gang.NewRequest(2, 8)
	req.Required = 0

	ix := build()
	pl, out := gang.Place(ix, req, nil)
	require.Equal(t, gang.Placed, out)
	require.Equal(t, "l0", ix.DomainName(0, pl.Domain))

	var offered []string
	req.Chooser = gang.ChooserFunc(func(ix *topology.Index, level int, r gang.Request, fits []topology.DomainID) topology.DomainID {
		best := fits[0]
		for _, d := range fits {
			offered = append(offered, ix.DomainName(level, d))
			if ix.FreeGPUs(level, d, r.Class) > ix.FreeGPUs(level, best, r.Class) {
				best = d
			}
		}
		return best
	})
	ix = build()
	pl, out = gang.Place(ix, req, nil)
	require.Equal(t, gang.Placed, out)
	require.Equal(t, "l1", ix.DomainName(0, pl.Domain))
	require.Equal(t, []string{"l0", "l1"}, offered, "offered in best-fit order")

	// An answer outside the list falls back to best fit.
	req.Chooser = gang.ChooserFunc(func(*topology.Index, int, gang.Request, []topology.DomainID) topology.DomainID { return 99 })
	ix = build()
	pl, out = gang.Place(ix, req, nil)
	require.Equal(t, gang.Placed, out)
	require.Equal(t, "l0", ix.DomainName(0, pl.Domain))
}
