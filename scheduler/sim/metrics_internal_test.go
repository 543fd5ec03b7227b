package sim

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDurSumMatchesBigInt checks the 128-bit duration sum and its mean
// against arbitrary-precision arithmetic, for sums far past an int64 in
// both directions and for small ones that must equal plain integer
// division of Durations.
func TestDurSumMatchesBigInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draws := []func() time.Duration{
		func() time.Duration { return time.Duration(rng.Int64()) },                       // huge, positive
		func() time.Duration { return -time.Duration(rng.Int64()) },                      // huge, negative
		func() time.Duration { return time.Duration(rng.Int64N(2e9) - 1e9) },             // small, both signs
		func() time.Duration { return time.Duration(rng.Int64()) - math.MaxInt64/2 - 1 }, // mixed
	}
	for trial := range 2000 {
		draw := draws[trial%len(draws)]
		n := 1 + rng.IntN(300)
		var s durSum
		var plain time.Duration
		overflow := false
		want := new(big.Int)
		for range n {
			d := draw()
			s.add(d)
			want.Add(want, big.NewInt(int64(d)))
			if (d > 0 && plain > math.MaxInt64-d) || (d < 0 && plain < math.MinInt64-d) {
				overflow = true
			}
			plain += d
		}
		want.Quo(want, big.NewInt(int64(n))) // truncates toward zero
		got := s.mean(n)
		if !want.IsInt64() || got != time.Duration(want.Int64()) {
			t.Fatalf("trial %d: mean of %d = %d, want %s", trial, n, got, want)
		}
		if !overflow && got != plain/time.Duration(n) {
			t.Fatalf("trial %d: mean %d differs from plain division %d", trial, got, plain/time.Duration(n))
		}
	}
	var s durSum
	s.add(math.MinInt64)
	s.add(math.MinInt64)
	if got := s.mean(2); got != math.MinInt64 {
		t.Fatalf("mean of two MinInt64 = %d", got)
	}
}
