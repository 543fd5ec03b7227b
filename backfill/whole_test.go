package backfill_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// drawWholeRequest draws a whole-node gang: every member takes all the
// GPUs of a node of the largest size; with a GPU type, a required and a
// preferred level, and a domain chooser now and then.
func drawWholeRequest(t *rapid.T, ix *topology.Index) gang.Request {
	r := gang.NewRequest(rapid.IntRange(1, max(1, ix.NumNodes()/2)).Draw(t, "wholeMembers"), ix.MaxGPUs())
	if rapid.Bool().Draw(t, "wholeTyped") {
		r.Class, _ = ix.Class(rapid.SampledFrom(ix.Types()).Draw(t, "wholeType"))
	}
	if nl := ix.NumLevels(); nl > 0 && rapid.Bool().Draw(t, "wholeTopo") {
		r.Required = rapid.IntRange(0, nl-1).Draw(t, "wholeRequired")
		if rapid.IntRange(0, 3).Draw(t, "wholePrefers") == 0 {
			r.Preferred = rapid.IntRange(0, nl-1).Draw(t, "wholePreferred")
		}
		if rapid.IntRange(0, 5).Draw(t, "wholeChooser") == 0 {
			r.Chooser = gang.ChooserFunc(func(_ *topology.Index, _ int, _ gang.Request, fits []topology.DomainID) topology.DomainID {
				return fits[len(fits)-1]
			})
		}
	}
	return r
}

// drawJittered is drawDuration, a nanosecond shorter or longer now and
// then, so that windows and runs meet at their very ends.
func drawJittered(t *rapid.T, label string) time.Duration {
	d := drawDuration(t, label)
	if d == backfill.Forever {
		return d
	}
	return d + time.Duration(rapid.IntRange(-1, 1).Draw(t, label+"Jitter"))
}

// TestWholeGangsMatchTheCursor: over a random index with random
// releases, reservations of all shapes, jobs placed now, GPUs freed now
// and releases moved earlier, Earliest answers every whole-node gang
// (found from the whole-node windows, and placed there when the request
// allows) exactly as a cursor sweep from the same start does: the same
// start, and the same GPUs. The profile's invariants, those of the
// windows included, hold throughout.
func TestWholeGangsMatchTheCursor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix, p, o := drawWorld(t)
		scorers := []binpack.Scorer{nil, binpack.Pack{}, binpack.Spread{}}
		for range rapid.IntRange(1, 24).Draw(t, "calls") {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				// A job placed now, of any shape.
				_, _ = p.PlaceNow(drawRequest(t, ix), drawDuration(t, "placed"), nil)
			case 1:
				// A job that ended early: its GPUs are free now. Now
				// and then after more changes than the index records,
				// taken back but for this one.
				if rapid.Bool().Draw(t, "churn") {
					for k := range 4*ix.NumNodes() + 1 {
						m := topology.NodeID(k % ix.NumNodes())
						if set, ok := ix.Take(m, 1); ok {
							ix.Release(m, set)
						} else {
							ix.SetHeld(m, ix.Held(m))
						}
					}
				}
				n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "ended"))
				ix.Release(n, ix.Held(n).Lowest(rapid.IntRange(0, ix.Held(n).Len()).Draw(t, "freed")))
			case 2:
				// An evicted job: its release moves earlier.
				if len(o.releases) == 0 {
					continue
				}
				e := rapid.SampledFrom(o.releases).Draw(t, "moved")
				s := e.set & ix.Held(e.n)
				if s == 0 || e.start <= 0 {
					continue
				}
				at := time.Duration(rapid.Int64Range(0, int64(e.start)-1).Draw(t, "movedTo"))
				p.MoveRelease(e.n, s, at)
				o.moveRelease(e.n, s, at)
			case 3, 4:
				// Any request, reserved where it fits.
				r := drawRequest(t, ix)
				d := drawJittered(t, "other")
				if st, ok := p.Earliest(r, d, nil, 0); ok {
					p.Reserve(st.Placement, st.At, d)
				}
			default:
				r := drawWholeRequest(t, ix)
				d := drawJittered(t, "whole")
				s := rapid.SampledFrom(scorers).Draw(t, "scorer")
				notBefore := time.Duration(rapid.IntRange(0, 20).Draw(t, "wholeNotBefore")) * 15 * time.Minute
				before := heldAll(ix)
				st, ok := p.Earliest(r, d, s, notBefore)
				if !slices.Equal(before, heldAll(ix)) {
					t.Fatalf("Earliest changed the index")
				}
				want, wantOK := backfill.Sweep(p, r, d, s, notBefore)
				if ok != wantOK || ok && st.At != want.At {
					t.Fatalf("Earliest(%+v, %s, from %s) = %s (ok %v), the cursor %s (ok %v)", r, d, notBefore, st.At, ok, want.At, wantOK)
				}
				if ok && !placementsEqual(st.Placement, want.Placement) {
					t.Fatalf("Earliest(%+v, %s, from %s) at %s placed %+v, the cursor %+v", r, d, notBefore, st.At, st.Placement, want.Placement)
				}
				if ok && rapid.Bool().Draw(t, "wholeReserve") {
					p.Reserve(st.Placement, st.At, d)
				}
			}
			if err := backfill.CheckInvariants(p); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func placementsEqual(a, b gang.Placement) bool {
	return a.Level == b.Level && a.Domain == b.Domain && slices.Equal(a.Slots, b.Slots)
}

// TestWholeWindowShortByANanosecond: a window that holds a run from its
// start stops holding it a nanosecond later when it ends exactly a run
// after its start. Two whole nodes are wanted for an hour: node 0 is
// free during [1h, 2h) and from 3h, node 1 from 1h+1ns, node 2 from 2h,
// and two half-reserved nodes bring the free GPUs to 16 from 1h on, so
// that the search begins there. At 1h+1ns node 0's window no longer
// holds the hour; the gang first fits at 2h.
func TestWholeWindowShortByANanosecond(t *testing.T) {
	var c topology.Cluster
	for i := range 5 {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8, GPUType: "H100"})
	}
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	all, half := topology.FirstN(8), topology.FirstN(4)
	reserve := func(n topology.NodeID, set topology.GPUSet, start, d time.Duration) {
		p.Reserve(gang.Placement{Level: topology.ClusterLevel, Slots: []gang.Slot{{Node: n, GPUs: set, Members: 1}}}, start, d)
	}
	reserve(0, all, 0, time.Hour)
	reserve(0, all, 2*time.Hour, time.Hour)
	reserve(1, all, 0, time.Hour+1)
	reserve(2, all, 0, 2*time.Hour)
	reserve(3, half, 0, backfill.Forever)
	reserve(4, half, 0, backfill.Forever)
	r := gang.NewRequest(2, 8)
	st, ok := p.Earliest(r, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, 2*time.Hour, st.At)
	want, ok := backfill.Sweep(p, r, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, want, st)
}

// drawWholeTime draws a moment on the half-hour grid the events use,
// a nanosecond off now and then.
func drawWholeTime(t *rapid.T, label string) time.Duration {
	v := time.Duration(rapid.IntRange(0, 24).Draw(t, label)) * 30 * time.Minute
	return max(0, v+time.Duration(rapid.IntRange(-1, 1).Draw(t, label+"Ns")))
}

// TestWholeGangsMatchTheCursorAndOracle: as TestWholeGangsMatchTheCursor,
// on small clusters of mixed sizes as well, and also with releases moved
// later or to never, second releases of held GPUs, GPUs taken now with no
// release, reservations stacked (extended), spread and chooser requests,
// and queries from any start up to any horizon, both straight
// (EarliestWithin) and through the remembered answers (EarliestBy):
// every whole-node answer is the cursor's, start and GPUs, and its start
// the oracle's. It fails at once when a whole-node sweep stops a
// nanosecond before its horizon, when a GPU's later release rather than
// its earlier one bounds a window, or when moving a release to never
// leaves the node's windows as they were; TestWholeGangsMatchTheCursor
// passes 2,000 checks with either of the first two, and its default 100
// with the last.
func TestWholeGangsMatchTheCursorAndOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var ix *topology.Index
		var p *backfill.Profile
		var o *oracle
		if rapid.Bool().Draw(t, "small") {
			c := drawSmallCluster(t)
			ix, p, o = drawHolds(t, &c)
		} else {
			ix, p, o = drawWorld(t)
		}
		// GPUs both freed and taken since the profile last looked at the
		// index may leave the count of free GPUs as it was: the profile
		// must then be told (see Forget).
		freed, took := false, false
		for range rapid.IntRange(1, 30).Draw(t, "calls") {
			op := rapid.IntRange(0, 12).Draw(t, "op")
			if op == 0 || op >= 4 && op <= 11 {
				if freed && took {
					p.Forget()
				}
				freed, took = false, false
			}
			switch op {
			case 0:
				o.placeNow(t, p, drawRequest(t, ix), drawDuration(t, "placed"))
			case 1:
				// GPUs freed now, after more changes than the index
				// records now and then.
				if rapid.Bool().Draw(t, "churn") {
					for k := range 4*ix.NumNodes() + 1 {
						m := topology.NodeID(k % ix.NumNodes())
						ix.SetHeld(m, ix.Held(m))
						if set, ok := ix.Take(m, 1); ok {
							ix.Release(m, set)
						}
					}
				}
				endSome(t, ix, o)
				freed = true
			case 2:
				// GPUs taken now by a job with no time limit and no
				// release, where no reservation holds them.
				took = takeSome(t, ix, o) || took
			case 3:
				// A release moved, earlier or later (no later than a
				// reservation of its GPUs), or to never.
				moveSomeRelease(t, ix, p, o, drawWholeTime)
			case 12:
				// A second release of held GPUs: they are free from the
				// earlier of the two.
				n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "again"))
				held := ix.Held(n)
				s := held.Lowest(rapid.IntRange(0, held.Len()).Draw(t, "againGPUs"))
				at := drawWholeTime(t, "againAt")
				if s == 0 || at >= o.firstReserved(n, s) {
					continue
				}
				p.AddRelease(n, s, at)
				if ix.State(n) == topology.Ready {
					o.releases = append(o.releases, event{n: n, set: s, start: at, end: at})
				}
			case 4, 5:
				// Any request, or a whole-node one, reserved where it
				// fits, and now and then the same GPUs right after.
				r := drawRequest(t, ix)
				if rapid.Bool().Draw(t, "reserveWhole") {
					r = drawWholeRequest(t, ix)
				}
				d := drawJittered(t, "other")
				st, ok := p.Earliest(r, d, nil, 0)
				if !ok {
					continue
				}
				o.reserve(p, st.Placement, st.At, d)
				end := plus(st.At, max(d, 1))
				d2 := drawJittered(t, "stacked")
				if end == backfill.Forever || !rapid.Bool().Draw(t, "stack") {
					continue
				}
				for _, s := range st.Placement.Slots {
					if s.GPUs&^o.usable(s.Node, end, max(d2, 1)) != 0 {
						d2 = -1
					}
				}
				if d2 >= 0 {
					o.reserve(p, st.Placement, end, d2)
				}
			default:
				r := drawWholeRequest(t, ix)
				switch rapid.IntRange(0, 5).Draw(t, "wholeKind") {
				case 0:
					r.Distinct = true
				case 1:
					r.Chooser = gang.ChooserFunc(func(_ *topology.Index, _ int, _ gang.Request, fits []topology.DomainID) topology.DomainID {
						return fits[len(fits)-1]
					})
				}
				d := drawJittered(t, "whole")
				if st, ok := checkWholeQuery(t, ix, p, o, r, d, drawWholeTime); ok && rapid.Bool().Draw(t, "wholeReserve") {
					o.reserve(p, st.Placement, st.At, d)
				}
			}
			if err := backfill.CheckInvariants(p); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// drawSmallCluster draws a few nodes of two to eight GPUs, of one or two
// types, some draining, down or with unhealthy GPUs, in up to two levels
// of domains of unequal sizes: few enough that whole-node gangs contend
// for the same nodes and domains.
func drawSmallCluster(t *rapid.T) topology.Cluster {
	var c topology.Cluster
	nl := rapid.IntRange(0, 2).Draw(t, "smallLevels")
	c.Levels = []string{"spine", "leaf"}[:nl]
	types := []string{"H100", "A100"}[:rapid.IntRange(1, 2).Draw(t, "smallTypes")]
	for i := range rapid.IntRange(1, 8).Draw(t, "smallNodes") {
		nd := topology.Node{
			Name:    fmt.Sprintf("n%d", i),
			GPUs:    rapid.SampledFrom([]int{2, 4, 8, 8, 8}).Draw(t, "smallGPUs"),
			GPUType: rapid.SampledFrom(types).Draw(t, "smallType"),
			Domains: map[string]string{},
		}
		for _, l := range c.Levels {
			nd.Domains[l] = fmt.Sprintf("%s%d", l, rapid.IntRange(0, 2).Draw(t, "smallDomain"))
		}
		switch rapid.IntRange(0, 9).Draw(t, "smallState") {
		case 0:
			nd.State = topology.Draining
		case 1:
			nd.State = topology.Down
		case 2:
			nd.Unhealthy = []int{rapid.IntRange(0, nd.GPUs-1).Draw(t, "smallSick")}
		}
		c.Nodes = append(c.Nodes, nd)
	}
	return c
}

// TestWholeGangsMatchTheCursorOnWideClusters is TestWholeGangsMatchTheCursor
// on clusters of 60 to 300 nodes, each in one of two to five spines and
// one of two to five leaves drawn apart, of one or two GPU types and two
// node sizes, with times on a grid of nanoseconds and runs of 0 to 12 ns
// or never ending: several domains have room for a gang bound to a
// level at once, so the choice among them (fewest GPUs usable for the
// run, then most not, then the first) and its early stops are
// exercised, ties included. Taking a domain that ties on usable GPUs
// without comparing the GPUs not usable fails it.
func TestWholeGangsMatchTheCursorOnWideClusters(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c topology.Cluster
		c.Levels = []string{"spine", "leaf"}
		nn := rapid.IntRange(60, 300).Draw(t, "nn")
		types := []string{"H100", "A100"}[:rapid.IntRange(1, 2).Draw(t, "ntypes")]
		sp, lf := rapid.IntRange(2, 5).Draw(t, "sp"), rapid.IntRange(2, 5).Draw(t, "lf")
		for i := range nn {
			c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%03d", i), GPUs: rapid.SampledFrom([]int{8, 8, 8, 4}).Draw(t, "g"),
				GPUType: rapid.SampledFrom(types).Draw(t, "ty"),
				Domains: map[string]string{"spine": fmt.Sprintf("s%d", rapid.IntRange(0, sp-1).Draw(t, "s")), "leaf": fmt.Sprintf("l%d", rapid.IntRange(0, lf-1).Draw(t, "l"))}})
		}
		ix, p, o := newWorld(t, &c)
		for n := range topology.NodeID(ix.NumNodes()) {
			if rapid.IntRange(0, 2).Draw(t, "idle") == 2 {
				continue
			}
			busy := topology.FirstN(ix.GPUs(n))
			if rapid.Bool().Draw(t, "part") {
				busy = busy.Lowest(rapid.IntRange(1, busy.Len()).Draw(t, "k"))
			}
			_ = ix.TakeSet(n, busy)
			at := time.Duration(40 - rapid.IntRange(0, 40).Draw(t, "rel"))
			p.AddRelease(n, busy, at)
			o.releases = append(o.releases, event{n: n, set: busy, start: at, end: at})
			o.freeNow[n] = ix.FreeSet(n)
		}
		scorers := []binpack.Scorer{nil, binpack.Pack{}, binpack.Spread{}}
		for range 40 {
			if rapid.IntRange(0, 2).Draw(t, "op") != 2 {
				n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "rnode"))
				at, d := time.Duration(rapid.IntRange(0, 40).Draw(t, "rat")), time.Duration(rapid.IntRange(0, 10).Draw(t, "rd"))
				u := o.usable(n, at, max(d, 1))
				if u == 0 {
					continue
				}
				s := u.Lowest(rapid.IntRange(1, u.Len()).Draw(t, "rk"))
				p.Reserve(gang.Placement{Level: topology.ClusterLevel, Slots: []gang.Slot{{Node: n, GPUs: s, Members: 1}}}, at, d)
				o.reserved = append(o.reserved, event{n: n, set: s, start: at, end: at + max(d, 1)})
				continue
			}
			r := drawWholeRequest(t, ix)
			r.Members = 12 - rapid.IntRange(0, 11).Draw(t, "m")
			d := time.Duration(rapid.IntRange(0, 12).Draw(t, "d"))
			if rapid.IntRange(0, 5).Draw(t, "dF") == 0 {
				d = backfill.Forever
			}
			s := rapid.SampledFrom(scorers).Draw(t, "scorer")
			from := time.Duration(rapid.IntRange(0, 40).Draw(t, "from"))
			st, ok := backfill.EarliestWithin(p, r, d, s, from, backfill.Forever)
			want, wantOK := backfill.SweepWithin(p, r, d, s, from, backfill.Forever)
			if ok != wantOK || ok && st.At != want.At {
				t.Fatalf("Earliest(%+v, %d, from %d) = %d (ok %v), the cursor %d (ok %v)", r, d, from, st.At, ok, want.At, wantOK)
			}
			if ok && !placementsEqual(st.Placement, want.Placement) {
				t.Fatalf("Earliest(%+v, %d, from %d) at %d placed %+v, the cursor %+v", r, d, from, st.At, st.Placement, want.Placement)
			}
			if ok && rapid.Bool().Draw(t, "res") {
				o.reserve(p, st.Placement, st.At, d)
			}
			if err := backfill.CheckInvariants(p); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// nsTime draws a moment on a grid of nanoseconds.
func nsTime(t *rapid.T, label string) time.Duration {
	return time.Duration(rapid.IntRange(0, 12).Draw(t, label))
}

// nsDur draws a run of 0 to 6 ns, or one that never ends.
func nsDur(t *rapid.T, label string) time.Duration {
	if rapid.IntRange(0, 6).Draw(t, label+"Forever") == 0 {
		return backfill.Forever
	}
	return time.Duration(rapid.IntRange(0, 6).Draw(t, label))
}

// TestWholeGangsOnANanosecondGrid checks whole-node gangs against the
// cursor and the oracle where boundaries are tightest: times on a grid
// of nanoseconds, runs of 0 (taken as 1 ns) to 6 ns or never ending,
// releases that never come, reservations of any usable GPUs of a node at
// any time (not only where a query answers), distinct-node requests,
// bounded queries, and both the straight query and EarliestBy with its
// remembered answers. Earliest must not change the index either.
func TestWholeGangsOnANanosecondGrid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c topology.Cluster
		if rapid.Bool().Draw(t, "small") {
			c = drawSmallCluster(t)
		} else {
			c = gen.Cluster(t)
		}
		ix, p, o := drawHoldsReleased(t, &c, func(t *rapid.T) time.Duration {
			if rapid.IntRange(0, 5).Draw(t, "never") == 0 {
				return backfill.Forever
			}
			return nsTime(t, "release")
		})
		freed, took := false, false
		for range rapid.IntRange(1, 30).Draw(t, "calls") {
			op := rapid.IntRange(0, 9).Draw(t, "op")
			if op != 1 && op != 2 {
				if freed && took {
					p.Forget()
				}
				freed, took = false, false
			}
			switch op {
			case 0:
				// An arbitrary reservation of usable GPUs of one node.
				n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "rnode"))
				at, d := nsTime(t, "rat"), nsDur(t, "rd")
				u := o.usable(n, at, max(d, 1))
				if u == 0 {
					continue
				}
				s := topology.GPUSet(rapid.Uint64Range(1, uint64(u)).Draw(t, "rset")) & u
				if s == 0 {
					s = u
				}
				o.reserve(p, gang.Placement{Level: topology.ClusterLevel, Slots: []gang.Slot{{Node: n, GPUs: s, Members: 1}}}, at, d)
			case 1:
				endSome(t, ix, o)
				freed = true
			case 2:
				took = takeSome(t, ix, o) || took
			case 3:
				moveSomeRelease(t, ix, p, o, nsTime)
			case 4:
				r := drawRequest(t, ix)
				if rapid.Bool().Draw(t, "reserveWhole") {
					r = drawWholeRequest(t, ix)
				}
				d := nsDur(t, "other")
				st, ok := p.Earliest(r, d, nil, 0)
				if ok {
					o.reserve(p, st.Placement, st.At, d)
				}
			default:
				r := drawWholeRequest(t, ix)
				if rapid.IntRange(0, 5).Draw(t, "wholeDistinct") == 0 {
					r.Distinct = true
				}
				d := nsDur(t, "whole")
				if st, ok := checkWholeQuery(t, ix, p, o, r, d, nsTime); ok && rapid.Bool().Draw(t, "wholeReserve") {
					o.reserve(p, st.Placement, st.At, d)
				}
			}
			if err := backfill.CheckInvariants(p); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// checkWholeQuery asks p for the earliest start of the whole-node gang r
// for a run of d, with a scorer drawn, from a moment drawn by at up to a
// limit drawn the same way or none, straight or through EarliestBy's
// remembered answers, and fails t unless the index is left as it was,
// and the start and the GPUs are the cursor sweep's, the start the
// oracle's, and the placement valid there.
func checkWholeQuery(t *rapid.T, ix *topology.Index, p *backfill.Profile, o *oracle, r gang.Request, d time.Duration, at func(*rapid.T, string) time.Duration) (backfill.Start, bool) {
	s := rapid.SampledFrom([]binpack.Scorer{nil, binpack.Pack{}, binpack.Spread{}}).Draw(t, "scorer")
	from := at(t, "wholeFrom")
	limit := backfill.Forever
	if rapid.Bool().Draw(t, "wholeBounded") {
		limit = from + at(t, "wholeBy")
	}
	before := heldAll(ix)
	var st backfill.Start
	var ok bool
	if rapid.Bool().Draw(t, "straight") {
		st, ok = backfill.EarliestWithin(p, r, d, s, from, limit)
	} else {
		st, ok = p.EarliestBy(r, d, s, from, limit)
	}
	if !slices.Equal(before, heldAll(ix)) {
		t.Fatalf("Earliest changed the index")
	}
	want, wantOK := backfill.SweepWithin(p, r, d, s, from, limit)
	if ok != wantOK || ok && st.At != want.At {
		t.Fatalf("Earliest(%+v, %v, from %v to %v) = %v (ok %v), the cursor %v (ok %v)", r, d, from, limit, st.At, ok, want.At, wantOK)
	}
	if ok && !placementsEqual(st.Placement, want.Placement) {
		t.Fatalf("Earliest(%+v, %v, from %v) at %v placed %+v, the cursor %+v", r, d, from, st.At, st.Placement, want.Placement)
	}
	first, oracleOK := o.earliest(r, max(d, 1), from)
	if oracleOK && first > limit {
		oracleOK = false
	}
	if ok != oracleOK || ok && st.At != first {
		t.Fatalf("Earliest(%+v, %v, from %v to %v) = %v (ok %v), the oracle %v (ok %v)", r, d, from, limit, st.At, ok, first, oracleOK)
	}
	if ok {
		o.checkPlacement(t, r, st.Placement, st.At, max(d, 1))
	}
	return st, ok
}

// endSome frees some held GPUs of a node now, as a job that ended early
// does.
func endSome(t *rapid.T, ix *topology.Index, o *oracle) {
	n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "ended"))
	ix.Release(n, ix.Held(n).Lowest(rapid.IntRange(0, ix.Held(n).Len()).Draw(t, "freed")))
	o.freeNow[n] = ix.FreeSet(n)
}

// takeSome takes some free GPUs of a node now, for a job with no time
// limit and no release, where no reservation holds them, and reports
// whether it took any.
func takeSome(t *rapid.T, ix *topology.Index, o *oracle) bool {
	n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "taken"))
	free := ix.FreeSet(n)
	s := free.Lowest(rapid.IntRange(0, free.Len()).Draw(t, "takenGPUs"))
	if s == 0 || o.firstReserved(n, s) != backfill.Forever {
		return false
	}
	if err := ix.TakeSet(n, s); err != nil {
		t.Fatal(err)
	}
	o.freeNow[n] = ix.FreeSet(n)
	return true
}

// moveSomeRelease moves the held GPUs of a release to a moment drawn by
// at, or to never, no later than a reservation of those GPUs.
func moveSomeRelease(t *rapid.T, ix *topology.Index, p *backfill.Profile, o *oracle, at func(*rapid.T, string) time.Duration) {
	if len(o.releases) == 0 {
		return
	}
	e := rapid.SampledFrom(o.releases).Draw(t, "moved")
	s := e.set & ix.Held(e.n)
	if s == 0 {
		return
	}
	to := at(t, "movedTo")
	if rapid.IntRange(0, 5).Draw(t, "movedNever") == 0 {
		to = backfill.Forever
	}
	if to > o.firstReserved(e.n, s) {
		return
	}
	p.MoveRelease(e.n, s, to)
	o.moveRelease(e.n, s, to)
}
