package scheduler

import "strconv"

// Tier is a job's priority tier. Tier 0 is the highest (production:
// never preempted under the default matrix); a larger number is a lower
// tier. The zero value is unset: it stands for the lowest tier of the
// policy in force (Config.Tiers - 1, so 3 under the default four
// tiers), which is preempted by every higher tier and preempts nothing
// under the default matrix. A job that does not say its tier is thus the
// least powerful one, in Go as in JSON, where a job without "tier"
// decodes to the zero Tier.
//
// Tiers are compared through [Tier.Level], which resolves the unset tier
// against a number of tiers. Two Tiers are == when both are unset or both
// name the same level; an unset Tier is never == a set one, even when it
// resolves to the same level.
type Tier struct {
	// n is level+1 for a set level >= 0, the level itself for a negative
	// one (kept so that validation can name it), 0 when unset.
	n int
}

// The tiers of the default policy, highest first. P3 is also what an
// unset Tier resolves to under the default four tiers.
var (
	// P0 is tier 0: production, never preempted by default; it may
	// preempt every lower tier.
	P0 = TierN(0)
	// P1 is tier 1: preemptible only by P0 under the default matrix.
	P1 = TierN(1)
	// P2 is tier 2: preemptible by P0 and P1 under the default matrix.
	P2 = TierN(2)
	// P3 is tier 3, the lowest of the default policy: preemptible by
	// every higher tier.
	P3 = TierN(3)
)

// TierN returns tier k (0 the highest), for policies of any number of
// tiers. It never fails: a k outside 0..Tiers-1 of the policy in force
// (negative, or too large) is kept as given, and Step and Validate report
// it as an input error naming the job's tier.
func TierN(k int) Tier {
	switch {
	case k < 0:
		return Tier{n: k}
	case k == int(^uint(0)>>1): // the largest int: keep it invalid without overflow
		return Tier{n: k}
	}
	return Tier{n: k + 1}
}

// IsSet reports whether t names a tier; the zero Tier is unset.
func (t Tier) IsSet() bool { return t.n != 0 }

// Level returns the tier number t stands for under a policy of tiers
// tiers: its own number when set (even one outside 0..tiers-1, which
// validation rejects), tiers-1 (the lowest tier) when unset. tiers below
// 1 count as [DefaultTiers].
func (t Tier) Level(tiers int) int {
	switch {
	case t.n > 0:
		return t.n - 1
	case t.n < 0:
		return t.n
	case tiers < 1:
		return DefaultTiers - 1
	}
	return tiers - 1
}

// String returns "P<k>" for tier k (as in "P0", "P3") and "unset" for
// the zero Tier.
func (t Tier) String() string {
	if !t.IsSet() {
		return "unset"
	}
	return "P" + strconv.Itoa(t.Level(0))
}
