package fairshare

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestFairTreeExactOrderWideFloats: siblings are ranked in the exact
// order of S/U (highest first; no usage first, no share last, ties by
// name), checked with rational arithmetic, for shares and usages that
// include subnormal numbers and far-apart magnitudes, where a ratio of
// rounded fractions can lose most of its bits.
func TestFairTreeExactOrderWideFloats(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		accounts, usage := genTree(t)
		tiny := math.SmallestNonzeroFloat64
		pick := func(label string) float64 {
			switch rapid.IntRange(0, 3).Draw(t, label+"Kind") {
			case 0:
				return float64(rapid.IntRange(0, 64).Draw(t, label+"Ulps")) * tiny
			case 1:
				return rapid.Float64Range(1e-300, 1e-280).Draw(t, label+"Tiny")
			case 2:
				return float64(rapid.IntRange(0, 10).Draw(t, label+"Small"))
			}
			return rapid.Float64Range(1, 1e12).Draw(t, label+"Big")
		}
		for i := range accounts {
			accounts[i].Share = pick("share")
			usage[accounts[i].Name] = pick("usage")
		}
		tree := mustTree(t, accounts)
		fs := tree.Factors(usage)
		exact := func(name string) (kind int, r *big.Rat) {
			f, _ := fs.Get(name)
			switch {
			case f.RawShares == 0:
				return 0, nil
			case f.RawUsage == 0:
				return 2, nil
			}
			return 1, new(big.Rat).Quo(new(big.Rat).SetFloat64(f.RawShares), new(big.Rat).SetFloat64(f.RawUsage))
		}
		var check func(parent string)
		check = func(parent string) {
			kids := tree.Children(parent)
			for i := range kids {
				for j := range kids {
					a, b := kids[i], kids[j]
					if a == b {
						continue
					}
					fa, _ := fs.Get(a)
					fb, _ := fs.Get(b)
					ka, ra := exact(a)
					kb, rb := exact(b)
					first := ka > kb || ka == kb && (ka == 1 && ra.Cmp(rb) > 0 || (ka != 1 || ra.Cmp(rb) == 0) && a < b)
					if first && fa.Rank >= fb.Rank {
						t.Fatalf("under %q: %s (S %g, U %g) should precede %s (S %g, U %g); ranks %d, %d; LevelFS %g, %g",
							parent, a, fa.RawShares, fa.RawUsage, b, fb.RawShares, fb.RawUsage, fa.Rank, fb.Rank, fa.LevelFS, fb.LevelFS)
					}
				}
				check(kids[i])
			}
		}
		check("")
	})
}

// TestFairTreeSubnormalFraction: A has a share of 32 and B of 31 times the
// smallest float, next to C with 3. Their fractions of the group's shares
// round in the subnormal range (32/3 to 11, 31/3 to 10 of the smallest),
// about 5% off; ranked by those, A came first. Exactly, S/U is 32 for A
// and 31/0.95 = 32.6 for B: B first.
func TestFairTreeSubnormalFraction(t *testing.T) {
	u := math.SmallestNonzeroFloat64
	tree, err := NewTree([]Account{{Name: "A", Share: 32 * u}, {Name: "B", Share: 31 * u}, {Name: "C", Share: 3}})
	if err != nil {
		t.Fatal(err)
	}
	fs := tree.Factors(map[string]float64{"A": 1, "B": 0.95, "C": 1e10})
	a, _ := fs.Get("A")
	b, _ := fs.Get("B")
	if !(b.Rank < a.Rank) {
		t.Fatalf("exact S/U: B (31u/0.95) > A (32u/1), want B ranked first; got rank A=%d (LevelFS %g) B=%d (LevelFS %g)", a.Rank, a.LevelFS, b.Rank, b.LevelFS)
	}
}

// TestLedgerDecaysPastTimeSubRange: time.Time.Sub saturates at about 292
// years; with a 100-year half-life, usage 400 years on must have decayed
// by 2^-4, not by the 2^-2.92 of a saturated difference.
func TestLedgerDecaysPastTimeSubRange(t *testing.T) {
	hl := 100 * 365 * 24 * time.Hour
	l := NewLedger(hl)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := l.Add("x", 1, t0); err != nil {
		t.Fatal(err)
	}
	at := t0.AddDate(400, 0, 0)
	want := math.Exp2(-float64(at.Unix()-t0.Unix()) / hl.Seconds())
	if got := l.Usage("x", at); math.Abs(got-want) > 1e-9 {
		t.Fatalf("Usage 400y later with 100y half-life = %v, want %v", got, want)
	}
}

// TestDecayOverflowsOnlyWithTheResult: 2^1100 and 2^-1100 are beyond
// float64, but 1e-300 grown and 1e300 decayed by them are ordinary
// numbers.
func TestDecayOverflowsOnlyWithTheResult(t *testing.T) {
	h := time.Hour
	if got, want := Decay(1e-300, -1100*h, h), math.Ldexp(1e-300, 1100); got != want {
		t.Errorf("Decay(1e-300, -1100h, 1h) = %v, want %v", got, want)
	}
	if got, want := Decay(1e300, 1100*h, h), math.Ldexp(1e300, -1100); got != want {
		t.Errorf("Decay(1e300, 1100h, 1h) = %v, want %v", got, want)
	}
}

// TestNewTreeRefusesTreesTooDeep: a chain of accounts MaxDepth levels
// below its top is a tree; one level more is refused, naming the
// account MaxDepth+1 levels down, instead of being walked (deep enough
// chains overflowed the stack).
func TestNewTreeRefusesTreesTooDeep(t *testing.T) {
	chain := func(n int) []Account {
		as := []Account{{Name: "a0000", Share: 1}}
		for i := 1; i < n; i++ {
			as = append(as, Account{Name: fmt.Sprintf("a%04d", i), Share: 1, Parent: fmt.Sprintf("a%04d", i-1)})
		}
		return as
	}
	if _, err := NewTree(chain(MaxDepth + 1)); err != nil {
		t.Fatalf("a chain %d deep: %v", MaxDepth, err)
	}
	_, err := NewTree(chain(MaxDepth + 2))
	var ae *AccountError
	if !errors.As(err, &ae) || ae.Account != fmt.Sprintf("a%04d", MaxDepth+1) {
		t.Fatalf("a chain %d deep: got %v, want an error naming a%04d", MaxDepth+1, err, MaxDepth+1)
	}
}

// TestLedgerDecaysAcrossTheWholeTimeRange: between the earliest and the
// latest instants a time.Time holds, more than 2^63 seconds apart, usage
// decays to 0; a difference of their Unix seconds in int64 wrapped to a
// negative number, and the usage grew to +Inf.
func TestLedgerDecaysAcrossTheWholeTimeRange(t *testing.T) {
	lo := time.Unix(math.MinInt64, 0)
	hi := time.Unix(math.MaxInt64-62135596800, 0) // the latest Unix time a time.Time holds
	if h := halfLives(lo, hi, DefaultHalfLife); !(h > 0) {
		t.Fatalf("halfLives from the earliest to the latest time = %v, want > 0", h)
	}
	l := NewLedger(0)
	if err := l.Add("a", 1, lo); err != nil {
		t.Fatal(err)
	}
	if u := l.Usage("a", hi); u != 0 {
		t.Fatalf("usage a whole time range later = %v, want 0", u)
	}
}
