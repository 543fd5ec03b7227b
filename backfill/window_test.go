package backfill_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// quarter is the grid of the windows test's times.
const quarter = 15 * time.Minute

// TestLoosenedWindowsAgreeWithOracle: small clusters with most GPUs held,
// some never released (jobs without a limit), and releases moved often,
// earlier and later, as preemption moves them, among reservations, jobs
// ending early, bounded queries and runs a nanosecond off the grid. So
// that many queries are answered from a search of the loosened windows,
// the answers must agree with the oracle's.
func TestLoosenedWindowsAgreeWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := windowCluster(t)
		ix, p, o := newWorld(t, &c)
		for n := range topology.NodeID(ix.NumNodes()) {
			all := topology.FirstN(ix.GPUs(n))
			busy := all
			if rapid.IntRange(0, 3).Draw(t, "someFree") == 0 {
				busy = topology.GPUSet(rapid.Uint64Range(0, uint64(all)).Draw(t, "held"))
			}
			if err := ix.TakeSet(n, busy); err != nil {
				t.Fatal(err)
			}
			for g := busy; g != 0; g &= g - 1 {
				s := g & -g
				if rapid.IntRange(0, 5).Draw(t, "never") == 0 {
					continue
				}
				at := time.Duration(rapid.IntRange(1, 16).Draw(t, "rel")) * quarter
				p.AddRelease(n, s, at)
				if ix.State(n) != topology.Ready {
					continue
				}
				o.releases = append(o.releases, event{n: n, set: s, start: at, end: at})
			}
			o.freeNow[n] = ix.FreeSet(n)
		}
		shapes := make([]gang.Request, rapid.IntRange(1, 3).Draw(t, "shapes"))
		for i := range shapes {
			g := rapid.SampledFrom([]int{1, 1, 2}).Draw(t, "gpm")
			shapes[i] = gang.NewRequest(rapid.IntRange(1, 4).Draw(t, "members"), g)
			if rapid.Bool().Draw(t, "typed") {
				shapes[i].Class, _ = ix.Class(rapid.SampledFrom(ix.Types()).Draw(t, "ty"))
			}
			if len(c.Levels) > 0 && rapid.Bool().Draw(t, "req") {
				shapes[i].Required = 0
			}
		}
		for range rapid.IntRange(1, 60).Draw(t, "calls") {
			r := rapid.SampledFrom(shapes).Draw(t, "shape")
			r.Members = max(1, r.Members+rapid.IntRange(-1, 1).Draw(t, "dm"))
			d := time.Duration(rapid.IntRange(1, 8).Draw(t, "d")) * quarter
			if rapid.IntRange(0, 7).Draw(t, "forever") == 0 {
				d = backfill.Forever
			}
			if d != backfill.Forever && rapid.IntRange(0, 5).Draw(t, "odd") == 0 {
				d += time.Duration(rapid.IntRange(-1, 1).Draw(t, "ns"))
			}
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2:
				n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "mn"))
				s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "ms"))
				if s == 0 {
					continue
				}
				// No reservation of s may start before the new time: a
				// release moves later only then.
				lim := 16 * quarter
				for _, e := range o.reserved {
					if e.n == n && e.set&s != 0 {
						lim = min(lim, e.start)
					}
				}
				if lim < 1 {
					continue
				}
				at := time.Duration(rapid.Int64Range(1, int64(lim)).Draw(t, "mat"))
				if rapid.Bool().Draw(t, "round") {
					at = max(quarter, at/quarter*quarter)
					if at > lim {
						continue
					}
				}
				p.MoveRelease(n, s, at)
				if ix.State(n) != topology.Ready {
					continue
				}
				o.moveRelease(n, s, at)
				continue
			case 4:
				if rapid.Bool().Draw(t, "placeNow") {
					o.placeNow(t, p, r, d)
					continue
				}
			case 3:
				if rapid.IntRange(0, 4).Draw(t, "rarely") != 0 {
					continue
				}
				n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "endedOn"))
				s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "ended"))
				ix.Release(n, s)
				o.freeNow[n] |= s
				continue
			}
			o.query(t, p, r, d)
		}
	})
}

// windowCluster draws 1–4 nodes of 2 or 4 GPUs and of GPU type A or B,
// now and then draining or with an unhealthy GPU, and half the time a
// "leaf" level of two domains.
func windowCluster(t *rapid.T) topology.Cluster {
	var c topology.Cluster
	nl := rapid.IntRange(0, 1).Draw(t, "levels")
	c.Levels = []string{"leaf"}[:nl]
	for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
		nd := topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: rapid.SampledFrom([]int{2, 4}).Draw(t, "g"),
			GPUType: rapid.SampledFrom([]string{"A", "B"}).Draw(t, "type"), Domains: map[string]string{}}
		switch rapid.IntRange(0, 9).Draw(t, "state") {
		case 0:
			nd.State = topology.Draining
		case 1:
			nd.Unhealthy = []int{rapid.IntRange(0, nd.GPUs-1).Draw(t, "sick")}
		}
		if nl > 0 {
			nd.Domains["leaf"] = fmt.Sprintf("l%d", rapid.IntRange(0, 1).Draw(t, "leaf"))
		}
		c.Nodes = append(c.Nodes, nd)
	}
	return c
}
