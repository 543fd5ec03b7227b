package backfill

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
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
			if got := s.blocks[bi].v[i] + s.blocks[bi].add; got != n.at(x) {
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
			if lo, hi := slices.Min(b.v), slices.Max(b.v); lo != b.lo || hi != b.hi {
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
