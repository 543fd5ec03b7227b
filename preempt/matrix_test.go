package preempt

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestDefaultMatrixRows(t *testing.T) {
	m := DefaultMatrix()
	require.NoError(t, m.Validate())
	require.Equal(t, 4, m.Tiers())
	tests := []struct {
		tier int
		row  []bool
	}{
		{0, []bool{false, true, true, true}},   // P0 preempts P1, P2, P3
		{1, []bool{false, false, true, true}},  // P1 preempts P2, P3
		{2, []bool{false, false, false, true}}, // P2 preempts P3
		{3, []bool{false, false, false, false}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.row, []bool(m[tt.tier]), "row %d", tt.tier)
		for v, want := range tt.row {
			require.Equal(t, want, m.CanPreempt(tt.tier, v), "CanPreempt(%d, %d)", tt.tier, v)
		}
	}
}

func TestOrdered(t *testing.T) {
	require.Nil(t, Ordered(0))
	for n := 1; n <= 6; n++ {
		m := Ordered(n)
		require.NoError(t, m.Validate())
		for p := 0; p < n; p++ {
			for v := 0; v < n; v++ {
				require.Equal(t, p < v, m.CanPreempt(p, v))
			}
		}
	}
}

func TestValidate(t *testing.T) {
	f, T := false, true
	tests := []struct {
		name string
		m    Matrix
		err  string
	}{
		{"nil", nil, "matrix: no tiers"},
		{"empty", Matrix{}, "matrix: no tiers"},
		{"one tier", Matrix{{f}}, ""},
		{"short row", Matrix{{f, T}, {f}}, "matrix[1]: row has 1 entries, want 2"},
		{"long row", Matrix{{f, T, T}, {f, f}}, "matrix[0]: row has 3 entries, want 2"},
		{"not square", Matrix{{f, T}, {f, f}, {f, f}}, "matrix[0]: row has 2 entries, want 3"},
		{"self", Matrix{{f, T}, {f, T}}, "matrix[1][1]: tier 1 may not preempt its own tier"},
		{"tier 0 self", Matrix{{T, T}, {f, f}}, "matrix[0][0]: tier 0 may not preempt tier 0"},
		{"tier 0 victim", Matrix{{f, T, T}, {f, f, T}, {T, f, f}}, "matrix[2][0]: tier 2 may not preempt tier 0"},
		{"custom upward", Matrix{{f, T, T}, {f, f, f}, {f, T, f}}, ""},
		{"mutual", Matrix{{f, T, T}, {f, f, T}, {f, T, f}}, "matrix[1][2] and matrix[2][1]: tiers 1 and 2 may not preempt each other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Validate()
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.err)
		})
	}
}

func TestCanPreemptGuards(t *testing.T) {
	// A malformed matrix that was never validated still never makes tier
	// 0 or a job's own tier a victim, and out-of-range tiers are refused.
	bad := Matrix{{true, true}, {true, true}, {true}}
	require.False(t, bad.CanPreempt(1, 0))
	require.False(t, bad.CanPreempt(1, 1))
	require.True(t, bad.CanPreempt(0, 1))
	require.False(t, bad.CanPreempt(2, 1), "short row")
	require.False(t, bad.CanPreempt(-1, 1))
	require.False(t, bad.CanPreempt(0, 3))
	require.False(t, bad.CanPreempt(5, 1))
	mutual := DefaultMatrix()
	mutual[3][2] = true
	require.False(t, mutual.CanPreempt(2, 3), "tiers that may preempt each other preempt neither")
	require.False(t, mutual.CanPreempt(3, 2))
	require.True(t, mutual.CanPreempt(1, 3))
}

func TestMatrixJSON(t *testing.T) {
	const policy = `{"preemption": {"matrix": [
	  [false, true,  true,  true ],
	  [false, false, true,  true ],
	  [false, false, false, true ],
	  [false, false, false, false]
	]}}`
	var p struct {
		Preemption struct {
			Matrix Matrix `json:"matrix"`
		} `json:"preemption"`
	}
	require.NoError(t, json.Unmarshal([]byte(policy), &p))
	require.NoError(t, p.Preemption.Matrix.Validate())
	require.Equal(t, DefaultMatrix(), p.Preemption.Matrix)
}

func TestEligible(t *testing.T) {
	cands := []Candidate{{ID: "a", Tier: 0}, {ID: "b", Tier: 1}, {ID: "c", Tier: 2}, {ID: "d", Tier: 3}, {ID: "e", Tier: 7}, {ID: "f", Tier: -1}}
	m := DefaultMatrix()
	require.Equal(t, []int{1, 2, 3}, Eligible(m, 0, cands))
	require.Equal(t, []int{2, 3}, Eligible(m, 1, cands))
	require.Equal(t, []int{3}, Eligible(m, 2, cands))
	require.Empty(t, Eligible(m, 3, cands))
	require.Empty(t, Eligible(m, 9, cands))
}

// TestMaxTiers: Ordered builds no matrix beyond MaxTiers tiers (it once
// panicked on math.MaxInt and allocated n² cells for any n), and Validate
// refuses one with more rows.
func TestMaxTiers(t *testing.T) {
	require.Nil(t, Ordered(math.MaxInt))
	require.Nil(t, Ordered(MaxTiers+1))
	require.Len(t, Ordered(MaxTiers), MaxTiers)
	require.NoError(t, Ordered(MaxTiers).Validate())
	big := make(Matrix, MaxTiers+1)
	require.EqualError(t, big.Validate(), "matrix: 257 tiers, more than the 256 allowed")
}

func TestMatrixRejectsCircles(t *testing.T) {
	m := Matrix{
		{false, false, false, false},
		{false, false, true, false},
		{false, false, false, true},
		{false, true, false, false},
	}
	require.EqualError(t, m.Validate(), "matrix[3][1]: tiers 1, 2 and 3 preempt each other in a circle (each would evict the next in turn, for ever)")
	// Without the edge that closes it, a lower tier may still preempt a
	// higher one.
	m[3][1] = false
	m[3][2] = false
	m[2][1] = true
	require.EqualError(t, m.Validate(), "matrix[1][2] and matrix[2][1]: tiers 1 and 2 may not preempt each other (each would evict the other in turn)")
	m[1][2] = false
	require.NoError(t, m.Validate())
	require.True(t, m.CanPreempt(2, 1))
	require.NoError(t, Ordered(MaxTiers).Validate())
}

// TestPropertyValidMatrixIsAcyclic: a valid matrix never lets jobs evict
// each other round a circle: following preemption edges from any tier
// never comes back to it.
func TestPropertyValidMatrixIsAcyclic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "n")
		m := make(Matrix, n)
		for p := range m {
			m[p] = make([]bool, n)
			for v := range m[p] {
				m[p][v] = v != 0 && v != p && rapid.Bool().Draw(t, "cell")
			}
		}
		if m.Validate() != nil {
			return
		}
		for start := range n {
			seen := make([]bool, n)
			stack := []int{start}
			for len(stack) > 0 {
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for v := range n {
					if !m[p][v] {
						continue
					}
					if v == start {
						t.Fatalf("valid matrix %v has a circle through tier %d", m, start)
					}
					if !seen[v] {
						seen[v] = true
						stack = append(stack, v)
					}
				}
			}
		}
	})
}
