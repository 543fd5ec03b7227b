package backfill

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// naiveSky is the skyline's obviously correct twin: the list of ranges
// added, evaluated point by point.
type naiveSky struct {
	adds []struct {
		from, to time.Duration
		k        int32
	}
}

func (n *naiveSky) at(t time.Duration) int32 {
	v := int32(0)
	for _, a := range n.adds {
		if a.from <= t && t < a.to {
			v += a.k
		}
	}
	return v
}

// firstFit tries t0 and every moment a range starts or ends after it.
func (n *naiveSky) firstFit(t0, d time.Duration, level int32) time.Duration {
	cands := []time.Duration{t0}
	for _, a := range n.adds {
		for _, x := range []time.Duration{a.from, a.to} {
			if x > t0 && x != Forever {
				cands = append(cands, x)
			}
		}
	}
	slices.Sort(cands)
	for _, t := range cands {
		ok := n.at(t) >= level
		for _, a := range n.adds {
			for _, x := range []time.Duration{a.from, a.to} {
				if x > t && x < add(t, d) && n.at(x) < level {
					ok = false
				}
			}
		}
		if ok {
			return t
		}
	}
	return Forever
}

// TestSkylineAgreesWithNaive: random range additions and queries agree
// with point evaluation, on blocks small enough to split often.
func TestSkylineAgreesWithNaive(t *testing.T) {
	split := 0
	rapid.Check(t, func(t *rapid.T) {
		s, n := newSkylineSized(rapid.IntRange(1, 8).Draw(t, "blockSize")), &naiveSky{}
		defer func() {
			if len(s.blocks) > 1 {
				split++
			}
		}()
		unit := time.Minute
		for range rapid.IntRange(1, 300).Draw(t, "ops") {
			from := time.Duration(rapid.IntRange(0, 300).Draw(t, "from")) * unit
			to := from + time.Duration(rapid.IntRange(1, 100).Draw(t, "len"))*unit
			if rapid.IntRange(0, 4).Draw(t, "forever") == 0 {
				to = Forever
			}
			k := int32(rapid.IntRange(-8, 8).Draw(t, "k"))
			s.add(from, to, k)
			n.adds = append(n.adds, struct {
				from, to time.Duration
				k        int32
			}{from, to, k})
			if rapid.IntRange(0, 9).Draw(t, "check") != 0 {
				continue
			}
			x := time.Duration(rapid.IntRange(0, 450).Draw(t, "x")) * unit
			bi, i := s.locate(x)
			if got := s.blocks[bi].values[i] + s.blocks[bi].addend; got != n.at(x) {
				t.Fatalf("value at %s = %d, want %d", x, got, n.at(x))
			}
			d := time.Duration(rapid.IntRange(1, 120).Draw(t, "d")) * unit
			if rapid.IntRange(0, 4).Draw(t, "dForever") == 0 {
				d = Forever
			}
			level := int32(rapid.IntRange(-10, 10).Draw(t, "level"))
			if got, want := s.firstFit(x, d, level), n.firstFit(x, d, level); got != want {
				t.Fatalf("firstFit(%s, %s, %d) = %s, want %s", x, d, level, got, want)
			}
		}
		for bi := range s.blocks {
			b := &s.blocks[bi]
			if lo, hi := slices.Min(b.values), slices.Max(b.values); lo != b.lo || hi != b.hi {
				t.Fatalf("block %d bounds %d..%d, values %d..%d", bi, b.lo, b.hi, lo, hi)
			}
			if bi > 0 && s.blocks[bi-1].at[len(s.blocks[bi-1].at)-1] >= b.at[0] {
				t.Fatalf("blocks out of order at %d", bi)
			}
		}
	})
	if split == 0 {
		t.Fatal("no skyline ever split a block: the test did not reach the splitting code")
	}
}

// TestSkylineBuiltAgreesWithIncremental: counts built at the first query
// from the events recorded so far, then kept up to date, equal counts
// kept up to date from the start.
func TestSkylineBuiltAgreesWithIncremental(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := topology.Uniform(rapid.IntRange(1, 6).Draw(t, "nodes"), 8, "H100")
		if rapid.Bool().Draw(t, "typed") {
			c.Nodes[0].GPUType = "A100"
			c.Nodes[0].Unhealthy = []int{7}
		}
		ix, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		p := NewProfile(ix)
		early := NewProfile(ix)
		early.buildSky()
		for n := range topology.NodeID(ix.NumNodes()) {
			held := topology.GPUSet(rapid.Uint64Range(0, uint64(topology.FirstN(8))).Draw(t, "held"))
			if err := ix.TakeSet(n, held); err != nil {
				t.Fatal(err)
			}
			at := time.Duration(rapid.IntRange(0, 10).Draw(t, "release")) * 30 * time.Minute
			p.AddRelease(n, held, at)
			early.AddRelease(n, held, at)
		}
		for range rapid.IntRange(0, 6).Draw(t, "reservations") {
			r := gang.NewRequest(rapid.IntRange(1, 4).Draw(t, "members"), rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "g"))
			d := time.Duration(rapid.IntRange(1, 8).Draw(t, "d")) * time.Hour
			st, ok := p.Earliest(r, d, nil, 0)
			if !ok {
				continue
			}
			p.Reserve(st.Placement, st.At, d)
			early.Reserve(st.Placement, st.At, d)
		}
		if p.skylines == nil {
			p.buildSky()
		}
		rebuilt := &Profile{ix: ix, nodes: p.nodes, eventful: p.eventful, dense: denseNodes{class: p.dense.class}}
		rebuilt.buildSky()
		for c := range p.skylines {
			for x := time.Duration(0); x <= 20*time.Hour; x += 15 * time.Minute {
				a, b, r := valueAt(p.skylines[c], x), valueAt(early.skylines[c], x), valueAt(rebuilt.skylines[c], x)
				if a != b || r != b {
					t.Fatalf("class %d at %s: built at the first query %d, rebuilt now %d, kept from the start %d", c, x, a, r, b)
				}
			}
		}
	})
}

func valueAt(s *skyline, x time.Duration) int32 {
	bi, i := s.locate(x)
	return s.blocks[bi].values[i] + s.blocks[bi].addend
}
