package backfill_test

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
)

// TestRememberedAnswersAgreeWithOracle: long call sequences over a few
// request shapes, so that Earliest answers from what it remembers, with
// releases moved earlier now and then (the profile loosens), still agree
// with the oracle.
func TestRememberedAnswersAgreeWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix, p, o := drawWorld(t)
		shapes := make([]gang.Request, rapid.IntRange(1, 3).Draw(t, "shapes"))
		for i := range shapes {
			shapes[i] = drawRequest(t, ix)
		}
		for range rapid.IntRange(1, 40).Draw(t, "calls") {
			r := rapid.SampledFrom(shapes).Draw(t, "shape")
			r.Members = max(1, r.Members+rapid.IntRange(-2, 2).Draw(t, "dm"))
			d := time.Duration(rapid.IntRange(1, 4).Draw(t, "limit")) * time.Hour
			if rapid.IntRange(0, 5).Draw(t, "forever") == 0 {
				d = backfill.Forever
			}
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0:
				want := o.fits(r, 0, d)
				pl, out := p.PlaceNow(r, d, nil)
				if (out == gang.Placed) != want {
					t.Fatalf("PlaceNow(%+v, %s) = %s, oracle says fits %v", r, d, out, want)
				}
				if out != gang.Placed {
					continue
				}
				o.checkPlacement(t, r, pl, 0, d)
				for _, s := range pl.Slots {
					o.freeNow[s.Node] &^= s.GPUs
					if d != backfill.Forever {
						o.releases = append(o.releases, event{n: s.Node, set: s.GPUs, start: d, end: d})
					}
				}
				continue
			case 1:
				// Move a release earlier: the profile loosens.
				if len(o.releases) == 0 {
					continue
				}
				e := rapid.SampledFrom(o.releases).Draw(t, "moved")
				if e.set == 0 {
					continue
				}
				at := time.Duration(rapid.Int64Range(1, int64(e.start)).Draw(t, "movedTo"))
				p.MoveRelease(e.n, e.set, at)
				for i := range o.releases {
					if o.releases[i].n == e.n {
						o.releases[i].set &^= e.set
					}
				}
				o.releases = append(o.releases, event{n: e.n, set: e.set, start: at, end: at})
				continue
			}
			notBefore := time.Duration(0)
			if rapid.IntRange(0, 3).Draw(t, "later") == 0 {
				notBefore = time.Duration(rapid.IntRange(1, 20).Draw(t, "notBefore")) * 15 * time.Minute
			}
			before := heldAll(ix)
			at, want := o.earliest(r, d, notBefore)
			var st backfill.Start
			var ok bool
			if rapid.IntRange(0, 2).Draw(t, "bounded") == 0 {
				// A bounded query: a start no later than by, or none. Its
				// misses are remembered as bounds for later queries.
				by := time.Duration(rapid.IntRange(0, 24).Draw(t, "by")) * 15 * time.Minute
				st, ok = p.EarliestBy(r, d, nil, notBefore, by)
				if want && at > by {
					want = false
				}
				if ok != want || ok && st.At != at {
					t.Fatalf("EarliestBy(%+v, %s, from %s, by %s) = %s (ok %v), oracle %s (ok %v)", r, d, notBefore, by, st.At, ok, at, want)
				}
			} else {
				st, ok = p.Earliest(r, d, nil, notBefore)
				if ok != want || ok && st.At != at {
					t.Fatalf("Earliest(%+v, %s, from %s) = %s (ok %v), oracle %s (ok %v)", r, d, notBefore, st.At, ok, at, want)
				}
			}
			if !slices.Equal(before, heldAll(ix)) {
				t.Fatalf("Earliest changed the index")
			}
			if !ok || rapid.IntRange(0, 2).Draw(t, "skipReserve") == 0 {
				continue
			}
			o.checkPlacement(t, r, st.Placement, st.At, d)
			p.Reserve(st.Placement, st.At, d)
			for _, s := range st.Placement.Slots {
				o.reserved = append(o.reserved, event{n: s.Node, set: s.GPUs, start: st.At, end: plus(st.At, d)})
			}
		}
	})
}
