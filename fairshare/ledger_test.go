package fairshare

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func TestDecay(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name     string
		value    float64
		elapsed  time.Duration
		halfLife time.Duration
		want     float64
	}{
		{"no time", 100, 0, 0, 100},
		{"one half-life", 100, 7 * day, 0, 50},
		{"two half-lives", 100, 14 * day, 0, 25},
		{"ten half-lives", 1024, 70 * day, DefaultHalfLife, 1},
		{"half a half-life", 100, 84 * time.Hour, 0, 100 / math.Sqrt2},
		{"custom half-life", 8, 3 * time.Hour, time.Hour, 1},
		{"negative half-life means default", 100, 7 * day, -time.Hour, 50},
		{"backwards", 50, -7 * day, 0, 100},
		{"zero", 0, 7 * day, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, Decay(tc.value, tc.elapsed, tc.halfLife), 1e-12)
		})
	}
}

func TestLedgerHalfLife(t *testing.T) {
	var l Ledger // zero value: default half-life
	require.Equal(t, DefaultHalfLife, l.HalfLife())
	require.NoError(t, l.Add("a", 1000, t0))
	require.InDelta(t, 1000, l.Usage("a", t0), 1e-9)
	require.InDelta(t, 500, l.Usage("a", t0.Add(DefaultHalfLife)), 1e-9)
	require.InDelta(t, 250, l.Usage("a", t0.Add(2*DefaultHalfLife)), 1e-9)
	require.Zero(t, l.Usage("b", t0))

	require.Equal(t, DefaultHalfLife, NewLedger(0).HalfLife())
	short := NewLedger(time.Hour)
	require.Equal(t, time.Hour, short.HalfLife())
	require.NoError(t, short.Add("a", 1000, t0))
	require.InDelta(t, 250, short.Usage("a", t0.Add(2*time.Hour)), 1e-9)
}

func TestLedgerAdditivity(t *testing.T) {
	// a at t0, b two days later, read a week after that.
	l := NewLedger(0)
	a, b := 3000.0, 7000.0
	ta, tb, at := t0, t0.Add(48*time.Hour), t0.Add(9*24*time.Hour)
	require.NoError(t, l.Add("x", a, ta))
	require.NoError(t, l.Add("x", b, tb))
	want := Decay(a, at.Sub(ta), 0) + Decay(b, at.Sub(tb), 0)
	require.InDelta(t, want, l.Usage("x", at), 1e-9)
	// Reading between the adds, and before both, uses the same formula.
	require.InDelta(t, Decay(a, 24*time.Hour, 0)+Decay(b, -24*time.Hour, 0), l.Usage("x", t0.Add(24*time.Hour)), 1e-9)
}

func TestLedgerOutOfOrder(t *testing.T) {
	type add struct {
		amount float64
		at     time.Time
	}
	adds := []add{
		{100, t0.Add(10 * time.Hour)},
		{200, t0},
		{300, t0.Add(200 * time.Hour)},
		{400, t0.Add(5 * time.Hour)},
		{500, t0.Add(-100 * time.Hour)},
	}
	inOrder, outOfOrder := NewLedger(0), NewLedger(0)
	for _, i := range []int{4, 1, 3, 0, 2} {
		require.NoError(t, inOrder.Add("x", adds[i].amount, adds[i].at))
	}
	for _, a := range adds {
		require.NoError(t, outOfOrder.Add("x", a.amount, a.at))
	}
	at := t0.Add(300 * time.Hour)
	want := 0.0
	for _, a := range adds {
		want += a.amount * math.Exp2(-at.Sub(a.at).Hours()/168)
	}
	require.InDelta(t, want, inOrder.Usage("x", at), 1e-9)
	require.InDelta(t, want, outOfOrder.Usage("x", at), 1e-9)
}

func TestLedgerRollUp(t *testing.T) {
	tree, err := NewTree([]Account{
		{Name: "eng", Share: 1}, {Name: "ml", Share: 1, Parent: "eng"},
		{Name: "vision", Share: 1, Parent: "ml"}, {Name: "ops", Share: 1},
	})
	require.NoError(t, err)
	l := tree.NewLedger(0)
	require.NoError(t, l.Add("vision", 100, t0))
	require.NoError(t, l.Add("ml", 50, t0.Add(DefaultHalfLife)))
	require.NoError(t, l.Add("eng", 10, t0.Add(DefaultHalfLife)))
	require.NoError(t, l.Add("stray", 7, t0)) // not in the tree: its own root
	at := t0.Add(DefaultHalfLife)
	require.InDelta(t, 50, l.Usage("vision", at), 1e-9)
	require.InDelta(t, 100, l.Usage("ml", at), 1e-9)
	require.InDelta(t, 110, l.Usage("eng", at), 1e-9)
	require.InDelta(t, 10, l.Own("eng", at), 1e-9)
	require.InDelta(t, 50, l.Own("ml", at), 1e-9)
	require.Zero(t, l.Usage("ops", at))
	require.InDelta(t, 3.5, l.Usage("stray", at), 1e-9)
	require.Equal(t, []string{"eng", "ml", "stray", "vision"}, l.Accounts())

	own := l.OwnUsage(at)
	require.Len(t, own, 4)
	require.InDelta(t, 50, own["vision"], 1e-9)
	require.InDelta(t, 50, own["ml"], 1e-9)
	require.InDelta(t, 10, own["eng"], 1e-9)
}

func TestLedgerAddErrors(t *testing.T) {
	l := NewLedger(0)
	require.EqualError(t, l.Add("", 1, t0), "fairshare: ledger: empty account name")
	require.EqualError(t, l.Add("a", -1, t0), `fairshare: ledger: account "a": usage must be a finite number >= 0, got -1`)
	require.Error(t, l.Add("a", math.NaN(), t0))
	require.Error(t, l.Add("a", math.Inf(1), t0))
	require.Empty(t, l.Accounts())

	var nilLedger *Ledger
	require.Zero(t, nilLedger.Usage("a", t0))
	require.Zero(t, nilLedger.Own("a", t0))
	require.Nil(t, nilLedger.OwnUsage(t0))
	require.Nil(t, nilLedger.Accounts())
}

// Zero usage stays zero however far back it is decayed: far enough back,
// the factor overflows to +Inf, and 0·Inf would be NaN.
func TestDecayZeroFarBack(t *testing.T) {
	if v := Decay(0, -1100*time.Hour, time.Hour); v != 0 {
		t.Fatalf("Decay(0, -1100h, 1h) = %v, want 0", v)
	}
	if v := Decay(1, -1100*time.Hour, time.Hour); !math.IsInf(v, 1) {
		t.Fatalf("Decay(1, -1100h, 1h) = %v, want +Inf", v)
	}
	tr, err := NewTree([]Account{{Name: "p", Share: 1}, {Name: "c", Share: 1, Parent: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	l := tr.NewLedger(time.Hour)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := l.Add("c", 10, at); err != nil {
		t.Fatal(err)
	}
	if v := l.Own("p", at.Add(-1100*time.Hour)); v != 0 {
		t.Fatalf("Own(p) = %v, want 0", v)
	}
}

// TestLedgerSaturates: usage too large for a float64 saturates instead
// of becoming +Inf, which decayed far ahead gave NaN (Inf·0).
func TestLedgerSaturates(t *testing.T) {
	var l Ledger
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, l.Add("a", math.MaxFloat64, t0))
	require.NoError(t, l.Add("a", math.MaxFloat64, t0))
	require.Equal(t, math.MaxFloat64, l.Usage("a", t0))
	require.Equal(t, Decay(math.MaxFloat64, 10000*time.Hour, 0), l.Usage("a", t0.Add(10000*time.Hour)))
	require.Zero(t, l.Usage("a", t0.Add(1e6*time.Hour)), "2^-5952 underflows to 0")
	require.False(t, math.IsNaN(Decay(math.Inf(1), 1e6*time.Hour, time.Hour)))
}
