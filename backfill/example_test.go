package backfill_test

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// The backfill loop on four nodes of 8 GPUs. A holds n00 and n01 until
// +2h, B holds n02 until +5h. C needs three whole nodes: it gets a
// reservation at +2h on A's nodes and the free n03. D (one node) would end
// after +2h, so it may not start now on n03, which C is promised; E ends
// before +2h and starts now on n03.
func ExampleProfile() {
	c := topology.Uniform(4, 8, "H100")
	ix, err := topology.NewIndex(&c)
	if err != nil {
		fmt.Println(err)
		return
	}
	prof := backfill.NewProfile(ix)
	hold := func(node string, until time.Duration) {
		n, _ := ix.Lookup(node)
		set, _ := ix.Take(n, 8)
		prof.AddRelease(n, set, until)
	}
	hold(c.Nodes[0].Name, 2*time.Hour)
	hold(c.Nodes[1].Name, 2*time.Hour)
	hold(c.Nodes[2].Name, 5*time.Hour)

	type job struct {
		name    string
		members int
		limit   time.Duration
	}
	for _, j := range []job{{"C", 3, 10 * time.Hour}, {"D", 1, 3 * time.Hour}, {"E", 1, time.Hour}} {
		req := gang.NewRequest(j.members, 8)
		if pl, out := prof.PlaceNow(req, j.limit, nil); out == gang.Placed {
			fmt.Println(j.name, "starts now on", pl.Allocation(ix))
			continue
		}
		if st, ok := prof.Earliest(req, j.limit, nil, 0); ok && j.name == "C" {
			prof.Reserve(st.Placement, st.At, j.limit)
			fmt.Println(j.name, "reserved at +"+st.At.String(), "on", st.Placement.Allocation(ix))
			continue
		}
		fmt.Println(j.name, "waits")
	}
	// Output:
	// C reserved at +2h0m0s on n00[0-7] n01[0-7] n03[0-7]
	// D waits
	// E starts now on n03[0-7]
}
