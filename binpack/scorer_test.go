package binpack_test

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/binpack"
)

func TestScores(t *testing.T) {
	cases := []struct {
		name   string
		c      binpack.Candidate
		pack   int64
		spread int64
	}{
		{"exact fit", binpack.Candidate{Free: 4, Request: 4}, 0, 4},
		{"half left", binpack.Candidate{Free: 8, Request: 4}, -4, 8},
		{"one GPU on an empty node", binpack.Candidate{Free: 8, Request: 1}, -7, 8},
		{"type does not matter", binpack.Candidate{Free: 3, Request: 1, GPUType: "B200"}, -2, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.pack, binpack.Pack{}.Score(tc.c))
			require.Equal(t, tc.spread, binpack.Spread{}.Score(tc.c))
		})
	}
}

func TestConsolidate(t *testing.T) {
	var s binpack.Scorer = binpack.Pack{}
	c, ok := s.(binpack.Consolidator)
	require.True(t, ok, "Pack consolidates gangs")
	require.True(t, c.Consolidate())

	s = binpack.Spread{}
	_, ok = s.(binpack.Consolidator)
	require.False(t, ok, "Spread scores member by member")

	s = binpack.ScorerFunc(func(binpack.Candidate) int64 { return 0 })
	_, ok = s.(binpack.Consolidator)
	require.False(t, ok, "a ScorerFunc scores member by member")
}

func TestScorerFunc(t *testing.T) {
	var got []binpack.Candidate
	f := binpack.ScorerFunc(func(c binpack.Candidate) int64 {
		got = append(got, c)
		return int64(c.Free * 10)
	})
	c := binpack.Candidate{Free: 6, Request: 2, GPUType: "H100"}
	require.Equal(t, int64(60), f.Score(c))
	require.Equal(t, []binpack.Candidate{c}, got)
}

// newestFirst is the scorer of the package documentation: pack, but on
// B200 nodes first.
var newestFirst = binpack.ScorerFunc(func(c binpack.Candidate) int64 {
	score := -int64(c.Free - c.Request)
	if c.GPUType == "B200" {
		score += 1000
	}
	return score
})

// best returns the candidate a placer picks: the highest score, then
// fewer free GPUs, then GPU type.
func best(s binpack.Scorer, cs []binpack.Candidate) binpack.Candidate {
	return slices.MinFunc(cs, func(a, b binpack.Candidate) int {
		return cmp.Or(
			cmp.Compare(s.Score(b), s.Score(a)),
			cmp.Compare(a.Free, b.Free),
			cmp.Compare(a.GPUType, b.GPUType),
		)
	})
}

func TestWinner(t *testing.T) {
	h := func(free int) binpack.Candidate { return binpack.Candidate{Free: free, Request: 2, GPUType: "H100"} }
	b := func(free int) binpack.Candidate { return binpack.Candidate{Free: free, Request: 2, GPUType: "B200"} }
	cases := []struct {
		name   string
		scorer binpack.Scorer
		cs     []binpack.Candidate
		want   binpack.Candidate
	}{
		{"pack takes the fullest that fits", binpack.Pack{}, []binpack.Candidate{h(8), h(3), h(5)}, h(3)},
		{"pack prefers an exact fit", binpack.Pack{}, []binpack.Candidate{h(2), h(3), h(8)}, h(2)},
		{"spread takes the emptiest", binpack.Spread{}, []binpack.Candidate{h(3), h(8), h(5)}, h(8)},
		{"pack ties by type", binpack.Pack{}, []binpack.Candidate{h(4), b(4)}, b(4)},
		{"custom: B200 before a tighter H100", newestFirst, []binpack.Candidate{h(2), b(8)}, b(8)},
		{"custom: pack among B200", newestFirst, []binpack.Candidate{b(8), b(4), h(2)}, b(4)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, best(tc.scorer, tc.cs))
		})
	}
}

// TestPackSpreadOrder: for candidates that fit one request, Pack ranks
// by fewest GPUs left and Spread by most free GPUs, so the two orders
// are reverses of each other.
func TestPackSpreadOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := rapid.IntRange(1, 8).Draw(t, "request")
		a := binpack.Candidate{Free: rapid.IntRange(req, 64).Draw(t, "a"), Request: req}
		b := binpack.Candidate{Free: rapid.IntRange(req, 64).Draw(t, "b"), Request: req}
		p := cmp.Compare(binpack.Pack{}.Score(a), binpack.Pack{}.Score(b))
		s := cmp.Compare(binpack.Spread{}.Score(a), binpack.Spread{}.Score(b))
		if p != -cmp.Compare(a.Free, b.Free) || s != cmp.Compare(a.Free, b.Free) {
			t.Fatalf("free %d vs %d: pack %d, spread %d", a.Free, b.Free, p, s)
		}
	})
}
