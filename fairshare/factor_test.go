package fairshare

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// handTree is the hand-worked example of the factor tests:
//
//	eng  60 shares ─┬─ ml   3 shares, own usage 50
//	                └─ web  1 share,  own usage 20
//	ops  40 shares,           own usage 30
func handTree(t *testing.T) (*Tree, map[string]float64) {
	t.Helper()
	tree, err := NewTree([]Account{
		{Name: "eng", Share: 60}, {Name: "ops", Share: 40},
		{Name: "ml", Share: 3, Parent: "eng"}, {Name: "web", Share: 1, Parent: "eng"},
	})
	require.NoError(t, err)
	return tree, map[string]float64{"ml": 50, "web": 20, "ops": 30}
}

func TestClassicHandWorked(t *testing.T) {
	// Worked by hand. Cluster usage 100; eng rolls up 50+20 = 70.
	//
	//	account  S (normalized share)  U (normalized usage)  U_eff                         F = 2^(-U_eff/S)
	//	eng      60/100 = 0.6          70/100 = 0.7          0.7 (top level: U)            2^(-7/6)  ≈ 0.445449
	//	ml       0.6·3/4 = 0.45        50/100 = 0.5          0.5 + (0.7-0.5)·3/4 = 0.65    2^(-13/9) ≈ 0.367434
	//	web      0.6·1/4 = 0.15        20/100 = 0.2          0.2 + (0.7-0.2)·1/4 = 0.325   2^(-13/6) ≈ 0.222725
	//	ops      40/100 = 0.4          30/100 = 0.3          0.3 (top level: U)            2^(-3/4)  ≈ 0.594604
	tree, own := handTree(t)
	fs := tree.Factors(own)
	want := []struct {
		name              string
		s, u, ueff, f, fv float64
	}{
		{"eng", 0.6, 0.7, 0.7, math.Exp2(-7.0 / 6), 0.445449},
		{"ml", 0.45, 0.5, 0.65, math.Exp2(-13.0 / 9), 0.367434},
		{"web", 0.15, 0.2, 0.325, math.Exp2(-13.0 / 6), 0.222725},
		{"ops", 0.4, 0.3, 0.3, math.Exp2(-3.0 / 4), 0.594604},
	}
	rows := fs.Rows()
	require.Len(t, rows, len(want))
	for i, w := range want {
		r := rows[i]
		require.Equal(t, w.name, r.Account, "tree order")
		require.InDelta(t, w.s, r.NormShares, 1e-12, w.name)
		require.InDelta(t, w.u, r.NormUsage, 1e-12, w.name)
		require.InDelta(t, w.ueff, r.EffectiveUsage, 1e-12, w.name)
		require.InDelta(t, w.f, r.Classic, 1e-12, w.name)
		require.InDelta(t, w.fv, r.Classic, 1e-6, w.name)
		require.InDelta(t, w.f, fs.Value(w.name, Classic), 1e-12, w.name)
	}
	require.InDelta(t, 70, rows[0].RawUsage, 1e-12)
}

func TestFairTreeHandWorked(t *testing.T) {
	// Same tree. Top level: eng S = 0.6, U = 70/100 → LevelFS 0.857143;
	// ops S = 0.4, U = 30/100 → LevelFS 1.333333: ops goes first.
	// Under eng: ml S = 3/4, U = 50/70 → 1.05; web S = 1/4, U = 20/70 → 0.875.
	// Leaves in rank order: ops, ml, web; N = 3 → factors 3/3, 2/3, 1/3.
	// eng carries the rank of its best leaf, ml.
	tree, own := handTree(t)
	fs := tree.Factors(own)
	for _, w := range []struct {
		name    string
		levelFS float64
		rank    int
		factor  float64
	}{
		{"ops", 0.4 / 0.3, 0, 1},
		{"ml", 0.75 / (50.0 / 70), 1, 2.0 / 3},
		{"web", 0.25 / (20.0 / 70), 2, 1.0 / 3},
		{"eng", 0.6 / 0.7, 1, 2.0 / 3},
	} {
		f, ok := fs.Get(w.name)
		require.True(t, ok, w.name)
		require.InDelta(t, w.levelFS, f.LevelFS, 1e-12, w.name)
		require.Equal(t, w.rank, f.Rank, w.name)
		require.InDelta(t, w.factor, f.FairTree, 1e-15, w.name)
		require.InDelta(t, w.factor, fs.Value(w.name, FairTree), 1e-15, w.name)
	}
	_, ok := fs.Get("nope")
	require.False(t, ok)
	require.Zero(t, fs.Value("nope", FairTree))
}

// TestFairTreeVersusClassic reproduces the case Slurm's Fair Tree
// documentation motivates the algorithm with: a user of an account that is
// over its share must not outrank the users of a sibling account that is
// under its share, however little the user itself has used.
//
//	A 50 shares ─┬─ a1 1 share, usage 0
//	             └─ a2 1 share, usage 60
//	B 50 shares ─┬─ b1 1 share, usage 40
//	             └─ b2 1 share, usage 0
//
// Fair Tree: LevelFS(A) = 0.5/0.6 < LevelFS(B) = 0.5/0.4, so B's users come
// first; within each account the unused user (LevelFS +Inf) comes first:
// b2, b1, a1, a2 with factors 1, 3/4, 1/2, 1/4.
//
// Classic: a1 has U_eff = 0 + (0.6-0)·1/2 = 0.3 and S = 0.25, F = 2^(-1.2)
// ≈ 0.435; b1 has U_eff = 0.4 + (0.4-0.4)·1/2 = 0.4, F = 2^(-1.6) ≈ 0.330:
// classic puts a1 above b1, which Fair Tree forbids.
func TestFairTreeVersusClassic(t *testing.T) {
	tree, err := NewTree([]Account{
		{Name: "A", Share: 50}, {Name: "B", Share: 50},
		{Name: "a1", Share: 1, Parent: "A"}, {Name: "a2", Share: 1, Parent: "A"},
		{Name: "b1", Share: 1, Parent: "B"}, {Name: "b2", Share: 1, Parent: "B"},
	})
	require.NoError(t, err)
	fs := tree.Factors(map[string]float64{"a2": 60, "b1": 40})
	for name, want := range map[string]float64{"b2": 1, "b1": 0.75, "a1": 0.5, "a2": 0.25, "B": 1, "A": 0.5} {
		require.InDelta(t, want, fs.Value(name, FairTree), 1e-15, name)
	}
	a1, _ := fs.Get("a1")
	require.True(t, math.IsInf(a1.LevelFS, 1))
	require.InDelta(t, math.Exp2(-1.2), fs.Value("a1", Classic), 1e-12)
	require.InDelta(t, math.Exp2(-1.6), fs.Value("b1", Classic), 1e-12)
	require.Greater(t, fs.Value("a1", Classic), fs.Value("b1", Classic))
}

func TestFactorsEdgeCases(t *testing.T) {
	tree, err := NewTree([]Account{{Name: "b", Share: 1}, {Name: "a", Share: 1}, {Name: "z", Share: 0}})
	require.NoError(t, err)

	t.Run("no usage: classic 1, Fair Tree by name, zero share last", func(t *testing.T) {
		fs := tree.Factors(nil)
		require.Equal(t, 1.0, fs.Value("a", Classic))
		require.Equal(t, 1.0, fs.Value("b", Classic))
		require.Zero(t, fs.Value("z", Classic))
		require.Equal(t, 1.0, fs.Value("a", FairTree))
		require.InDelta(t, 2.0/3, fs.Value("b", FairTree), 1e-15)
		require.InDelta(t, 1.0/3, fs.Value("z", FairTree), 1e-15)
		z, _ := fs.Get("z")
		require.Zero(t, z.LevelFS)
	})
	t.Run("bad and unknown usage is ignored", func(t *testing.T) {
		fs := tree.Factors(map[string]float64{"a": math.NaN(), "b": -5, "ghost": 1e9})
		require.Equal(t, 1.0, fs.Value("a", Classic))
		require.Equal(t, 1.0, fs.Value("b", Classic))
	})
	t.Run("infinite usage stays finite", func(t *testing.T) {
		fs := tree.Factors(map[string]float64{"a": math.Inf(1), "b": 1})
		for _, r := range fs.Rows() {
			require.False(t, math.IsNaN(r.Classic) || math.IsNaN(r.NormUsage), r.Account)
		}
		require.Equal(t, 1.0, fs.Value("b", FairTree))
	})
	t.Run("nil factors", func(t *testing.T) {
		var fs *Factors
		require.Nil(t, fs.Rows())
		require.Zero(t, fs.Value("a", FairTree))
	})
}

func TestAlgorithm(t *testing.T) {
	require.Equal(t, FairTree, Algorithm(0))
	for _, tc := range []struct {
		in   string
		want Algorithm
	}{{"", FairTree}, {"fairtree", FairTree}, {"classic", Classic}} {
		got, err := ParseAlgorithm(tc.in)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
		if tc.in != "" {
			require.Equal(t, tc.in, got.String())
		}
	}
	_, err := ParseAlgorithm("fifo")
	require.EqualError(t, err, `fairshare: unknown algorithm "fifo" (want "fairtree" or "classic")`)
	require.Equal(t, "Algorithm(7)", Algorithm(7).String())
	f := Factor{Classic: 0.25, FairTree: 0.5}
	require.Equal(t, 0.25, f.Value(Classic))
	require.Equal(t, 0.5, f.Value(FairTree))
}

// TestFairTreeRanksExactRatios: siblings whose level fair-shares are
// equal tie by name even when rounding makes the float ratios differ,
// huge shares still normalize, and a tiny usage whose ratio overflows
// ranks after an account with no usage.
func TestFairTreeRanksExactRatios(t *testing.T) {
	t.Run("equal ratios tie by name", func(t *testing.T) {
		tree, err := NewTree([]Account{{Name: "a", Share: 3}, {Name: "b", Share: 4}, {Name: "c", Share: 33}})
		require.NoError(t, err)
		// 3/40 over 12/29 and 4/40 over 16/29 are equal; in floats b's
		// came out a bit larger and b ranked first.
		fs := tree.Factors(map[string]float64{"a": 12, "b": 16, "c": 1})
		ra, _ := fs.Get("a")
		rb, _ := fs.Get("b")
		require.Less(t, ra.Rank, rb.Rank)
	})
	t.Run("huge shares", func(t *testing.T) {
		tree, err := NewTree([]Account{{Name: "a", Share: math.MaxFloat64}, {Name: "b", Share: math.MaxFloat64 / 2}})
		require.NoError(t, err)
		require.InDelta(t, 2.0/3, tree.NormalizedShare("a"), 1e-15)
		require.InDelta(t, 1.0/3, tree.NormalizedShare("b"), 1e-15)
		fs := tree.Factors(map[string]float64{"a": 1e6, "b": 1e5})
		require.Equal(t, 1.0, fs.Value("b", FairTree), "b used less than its third")
		require.Greater(t, fs.Value("a", Classic), 0.0)
	})
	t.Run("tiny usage", func(t *testing.T) {
		tree, err := NewTree([]Account{{Name: "a", Share: 1}, {Name: "b", Share: 1}, {Name: "c", Share: 1}})
		require.NoError(t, err)
		// a's usage over the group's overflows S/U to +Inf; b has none
		// and comes first, though a comes first by name.
		fs := tree.Factors(map[string]float64{"a": 5e-324, "c": 1e300})
		ra, _ := fs.Get("a")
		rb, _ := fs.Get("b")
		rc, _ := fs.Get("c")
		require.Equal(t, []int{1, 0, 2}, []int{ra.Rank, rb.Rank, rc.Rank})
	})
}
