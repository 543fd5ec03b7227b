package backfill_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// few draws a time on a coarse grid of a few values, so that events
// coincide; now and then a nanosecond off it.
func few(t *rapid.T, label string) time.Duration {
	v := time.Duration(rapid.IntRange(0, 6).Draw(t, label)) * quarter
	if rapid.IntRange(0, 5).Draw(t, label+"Odd") == 0 {
		v += time.Duration(rapid.IntRange(-1, 1).Draw(t, label+"Ns"))
	}
	return max(v, 0)
}

// fewRun draws a run length: on the grid, zero, a nanosecond off, or
// Forever.
func fewRun(t *rapid.T, label string) time.Duration {
	switch rapid.IntRange(0, 9).Draw(t, label+"Kind") {
	case 0:
		return backfill.Forever
	case 1:
		return 0
	}
	v := time.Duration(rapid.IntRange(1, 4).Draw(t, label)) * quarter
	if rapid.IntRange(0, 4).Draw(t, label+"Odd") == 0 {
		v += time.Duration(rapid.IntRange(-1, 1).Draw(t, label+"Ns"))
	}
	return v
}

// TestInterleavedOperationsAgreeWithOracle interleaves every operation
// of a profile over small worlds (gen.SmallCluster: draining and down
// nodes, unhealthy GPUs, up to two levels): releases added and moved (earlier, and
// later where no reservation holds the GPUs before the new time, to now
// and to never), PlaceNow, FitsNow, Earliest and EarliestBy with and
// without a start not before which to look, reservations of their
// answers (some stacked), jobs ending early and placed outside the
// profile, and Forget. Every answer must agree with the oracle, and the
// invariants hold throughout (checked after one operation in three, so
// that releases also wait to enter the timeline over several).
func TestInterleavedOperationsAgreeWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := gen.SmallCluster(t)
		ix, p, o := newWorld(t, &c)
		ready := func(n topology.NodeID) bool { return ix.State(n) == topology.Ready }
		// release draws a release time for s on n no later than its
		// first reservation; false when none may be drawn.
		release := func(n topology.NodeID, s topology.GPUSet, label string) (time.Duration, bool) {
			lim := o.firstReserved(n, s)
			if rapid.IntRange(0, 6).Draw(t, label+"Never") == 0 {
				return backfill.Forever, lim == backfill.Forever
			}
			if rapid.IntRange(0, 6).Draw(t, label+"Now") == 0 {
				return time.Duration(rapid.IntRange(-1, 0).Draw(t, label+"NowAt")), true
			}
			at := few(t, label)
			return at, at <= lim
		}
		addRelease := func(n topology.NodeID, s topology.GPUSet, at time.Duration) {
			p.AddRelease(n, s, at)
			if ready(n) && at != backfill.Forever && s != 0 {
				o.releases = append(o.releases, event{n: n, set: s, start: at, end: at})
			}
		}
		for n := range topology.NodeID(ix.NumNodes()) {
			all := topology.FirstN(ix.GPUs(n))
			busy := topology.GPUSet(rapid.Uint64Range(0, uint64(all)).Draw(t, "held"))
			if err := ix.TakeSet(n, busy); err != nil {
				t.Fatal(err)
			}
			for busy != 0 {
				s := busy & topology.GPUSet(rapid.Uint64Range(1, uint64(all)).Draw(t, "job"))
				if s == 0 {
					s = busy & -busy
				}
				busy &^= s
				if at, ok := release(n, s, "rel"); ok {
					addRelease(n, s, at)
				}
			}
			o.freeNow[n] = ix.FreeSet(n)
		}
		shapes := make([]gang.Request, rapid.IntRange(1, 3).Draw(t, "shapes"))
		for i := range shapes {
			shapes[i] = gang.NewRequest(rapid.IntRange(1, 4).Draw(t, "members"), min(rapid.SampledFrom([]int{1, 1, 2, 4}).Draw(t, "gpm"), ix.MaxGPUs()))
			if rapid.Bool().Draw(t, "typed") {
				shapes[i].Class, _ = ix.Class(rapid.SampledFrom(ix.Types()).Draw(t, "ty"))
			}
			if len(c.Levels) > 0 && rapid.Bool().Draw(t, "req") {
				shapes[i].Required = 0
			}
		}
		// The caller must call Forget when it frees GPUs in the index
		// without the count of free GPUs rising past what the profile saw
		// last.
		lastFree := ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType)
		freed := false
		beforeCall := func() {
			if freed && ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType) <= lastFree {
				p.Forget()
			}
			freed = false
		}
		afterCall := func() { lastFree = ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType) }
		node := func(label string) topology.NodeID {
			return topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, label))
		}
		var last []event // the last reservation, to stack on
		for step := range rapid.IntRange(10, 60).Draw(t, "calls") {
			r := rapid.SampledFrom(shapes).Draw(t, "shape")
			r.Members = max(1, r.Members+rapid.IntRange(-1, 1).Draw(t, "dm"))
			if rapid.IntRange(0, 9).Draw(t, "avoids") == 0 {
				avoid := rapid.Uint64().Draw(t, "avoided")
				r.Avoid = func(n topology.NodeID) bool { return avoid&(1<<n) != 0 }
			}
			r.Distinct = rapid.IntRange(0, 5).Draw(t, "distinct") == 0
			d := fewRun(t, "d")
			what := ""
			switch op := rapid.IntRange(0, 13).Draw(t, "op"); (op + 8) % 14 {
			case 0: // another release of held GPUs
				n := node("addOn")
				s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "addSet"))
				at, ok := release(n, s, "addAt")
				if s == 0 || !ok {
					continue
				}
				what = fmt.Sprintf("AddRelease(%d, %v, %s)", n, s.Indices(), at)
				addRelease(n, s, at)
			case 1, 2: // move a release, earlier or later
				n := node("moveOn")
				s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "moveSet"))
				at, ok := release(n, s, "moveAt")
				if s == 0 || !ok {
					continue
				}
				what = fmt.Sprintf("MoveRelease(%d, %v, %s)", n, s.Indices(), at)
				p.MoveRelease(n, s, at)
				if ready(n) {
					o.moveRelease(n, s, at)
				}
			case 3: // a job ends early
				n := node("endOn")
				s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "endSet"))
				if s == 0 {
					continue
				}
				what = fmt.Sprintf("ix.Release(%d, %v)", n, s.Indices())
				ix.Release(n, s)
				o.freeNow[n] |= s
				freed = true
			case 4: // a job placed outside the profile, until its release
				n := node("takeOn")
				s := ix.FreeSet(n) & topology.GPUSet(rapid.Uint64().Draw(t, "takeSet"))
				at, ok := release(n, s, "takeAt")
				if s == 0 || !ok {
					continue
				}
				what = fmt.Sprintf("ix.TakeSet(%d, %v) until %s", n, s.Indices(), at)
				if err := ix.TakeSet(n, s); err != nil {
					t.Fatal(err)
				}
				o.freeNow[n] &^= s
				switch {
				case rapid.Bool().Draw(t, "replace"):
					// What the GPUs were released at before (a job that
					// ended early) no longer holds.
					p.MoveRelease(n, s, at)
					if ready(n) {
						o.moveRelease(n, s, at)
					}
				case at != backfill.Forever:
					addRelease(n, s, at)
				}
			case 5:
				if rapid.IntRange(0, 9).Draw(t, "forget") > 0 {
					continue
				}
				what = "Forget"
				p.Forget()
			case 6: // start now
				what = fmt.Sprintf("PlaceNow(%+v, %s)", r, d)
				beforeCall()
				if rapid.Bool().Draw(t, "fitsNow") {
					o.placing = true
					want := o.fits(r, 0, max(d, 1))
					o.placing = false
					if out := p.FitsNow(r, d, nil); (out == gang.Placed) != want {
						t.Fatalf("step %d: FitsNow(%+v, %s) = %s, oracle says fits %v", step, r, d, out, want)
					}
				}
				o.placeNow(t, p, r, max(d, 1))
				afterCall()
				last = nil
			case 7: // stack a reservation on the last one
				if len(last) == 0 || last[0].end == backfill.Forever {
					continue
				}
				start := last[0].end
				var pl gang.Placement
				for _, e := range last {
					if e.set&^o.usable(e.n, start, max(d, 1)) != 0 {
						pl.Slots = nil
						break
					}
					pl.Slots = append(pl.Slots, gang.Slot{Node: e.n, GPUs: e.set, Members: 1})
				}
				if len(pl.Slots) == 0 {
					continue
				}
				what = fmt.Sprintf("Reserve(stacked at %s for %s)", start, d)
				p.Reserve(pl, start, d)
				last = last[:0]
				for _, s := range pl.Slots {
					e := event{n: s.Node, set: s.GPUs, start: start, end: plus(start, max(d, 1))}
					o.reserved = append(o.reserved, e)
					last = append(last, e)
				}
			default: // a query, its answer reserved now and then
				notBefore := time.Duration(0)
				if rapid.IntRange(0, 3).Draw(t, "late") == 0 {
					notBefore = few(t, "notBefore")
				}
				by := backfill.Forever
				if rapid.IntRange(0, 2).Draw(t, "bounded") == 0 {
					by = few(t, "by")
				}
				what = fmt.Sprintf("EarliestBy(%+v, %s, from %s, by %s)", r, d, notBefore, by)
				beforeCall()
				before := heldAll(ix)
				at, want := o.earliest(r, max(d, 1), notBefore)
				if want && at > by {
					want = false
				}
				var st backfill.Start
				var ok bool
				if by == backfill.Forever && rapid.Bool().Draw(t, "plain") {
					st, ok = p.Earliest(r, d, nil, notBefore)
				} else {
					st, ok = p.EarliestBy(r, d, nil, notBefore, by)
				}
				afterCall()
				if ok != want || ok && st.At != at {
					t.Fatalf("step %d: %s = %s (ok %v), oracle %s (ok %v)", step, what, st.At, ok, at, want)
				}
				if !slices.Equal(before, heldAll(ix)) {
					t.Fatalf("step %d: %s changed the index", step, what)
				}
				if !ok {
					continue
				}
				o.checkPlacement(t, r, st.Placement, st.At, max(d, 1))
				if rapid.IntRange(0, 3).Draw(t, "skipReserve") == 3 {
					continue
				}
				p.Reserve(st.Placement, st.At, d)
				last = last[:0]
				for _, s := range st.Placement.Slots {
					e := event{n: s.Node, set: s.GPUs, start: st.At, end: plus(st.At, max(d, 1))}
					o.reserved = append(o.reserved, e)
					last = append(last, e)
				}
			}
			// Not after every step: releases wait to enter the timeline
			// until a query needs it, and the check puts them there.
			if rapid.IntRange(0, 2).Draw(t, "check") == 0 {
				if err := backfill.CheckInvariants(p); err != nil {
					t.Fatalf("step %d, after %s: %v", step, what, err)
				}
			}
		}
	})
}
