package fairshare

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// DefaultHalfLife is the usage decay half-life used when none is given:
// 7 days, like Slurm's default PriorityDecayHalfLife.
const DefaultHalfLife = 168 * time.Hour

// Decay returns value decayed over elapsed with the given half-life:
// value · 2^(-elapsed/halfLife). A halfLife <= 0 means DefaultHalfLife.
// A negative elapsed runs the decay backwards (the value grows), which is
// the exact inverse, so Decay(Decay(v, d, h), -d, h) == v up to rounding.
// The result overflows to ±Inf or underflows to 0 only where the product
// does, not where 2^(-elapsed/halfLife) alone would.
func Decay(value float64, elapsed, halfLife time.Duration) float64 {
	if halfLife <= 0 {
		halfLife = DefaultHalfLife
	}
	return decay(value, float64(elapsed)/float64(halfLife))
}

// decay returns value · 2^-h, for h half-lives.
func decay(value, h float64) float64 {
	if h == 0 || value == 0 || math.IsInf(value, 0) || math.IsNaN(value) {
		return value // 0 stays 0 even where the factor overflows to +Inf, and ±Inf stays (not NaN where it underflows to 0)
	}
	if math.Abs(h) < 1000 {
		return value * math.Exp2(-h) // the factor is a normal float
	}
	// value = f · 2^e with f in [0.5, 1): scale f by the fraction of a
	// power and add the whole powers to e, so that only the result can
	// overflow or underflow.
	switch {
	case h > 1<<12:
		return math.Copysign(0, value) // below the smallest float64 however large value is
	case h < -(1 << 12):
		return math.Copysign(math.Inf(1), value)
	}
	n := math.Floor(-h)
	f, e := math.Frexp(value)
	return math.Ldexp(f*math.Exp2(-h-n), e+int(n))
}

// halfLives returns how many half-lives pass from a to b (negative when b
// comes first), past the ±292 years that time.Time.Sub can tell apart.
func halfLives(a, b time.Time, halfLife time.Duration) float64 {
	if d := b.Sub(a); d != math.MaxInt64 && d != math.MinInt64 {
		return float64(d) / float64(halfLife)
	}
	secs := float64(b.Unix()) - float64(a.Unix()) + float64(b.Nanosecond()-a.Nanosecond())/1e9 // no int64 difference to overflow
	return secs / halfLife.Seconds()
}

// entry is the decayed usage of one account as of one instant.
type entry struct {
	own   float64 // usage charged to this account itself
	total float64 // own plus the usage of all descendants
	asOf  time.Time
}

// at returns the entry's values decayed (or un-decayed) to t.
func (e *entry) at(t time.Time, halfLife time.Duration) (own, total float64) {
	h := halfLives(e.asOf, t, halfLife)
	return decay(e.own, h), decay(e.total, h)
}

// Ledger records usage (in GPU-seconds) per account and decays it
// exponentially with a half-life, so that
//
//	Usage(a, at) = Σ amount · 2^(-(at - t)/halfLife)
//
// over every Add(a', amount, t) with a' equal to a or a descendant of a.
//
// A Ledger stores one record per account (its decayed value and the instant
// it is valid at), so memory is O(accounts), Add is O(depth) and Usage is
// O(1); nothing is kept per event. Time is always passed in; the Ledger never
// reads a clock.
//
// The zero value is a ledger with DefaultHalfLife and no tree: every account
// is its own root. Use a *Ledger; do not copy a Ledger after first use.
// A Ledger is not safe for concurrent mutation.
type Ledger struct {
	halfLife time.Duration
	tree     *Tree
	entries  map[string]*entry
}

// NewLedger returns an empty ledger with the given half-life
// (<= 0 means DefaultHalfLife) and no tree: usage does not roll up.
func NewLedger(halfLife time.Duration) *Ledger {
	return &Ledger{halfLife: halfLife}
}

// NewLedger returns an empty ledger bound to t: usage added to an account
// also counts for every ancestor of it in t. Accounts absent from t are kept
// as roots. A halfLife <= 0 means DefaultHalfLife.
func (t *Tree) NewLedger(halfLife time.Duration) *Ledger {
	return &Ledger{halfLife: halfLife, tree: t}
}

// HalfLife returns the half-life in effect.
func (l *Ledger) HalfLife() time.Duration {
	if l == nil || l.halfLife <= 0 {
		return DefaultHalfLife
	}
	return l.halfLife
}

// Add charges gpuSeconds of usage to account at the given instant, and to
// all its ancestors when the ledger is bound to a tree. Adds may come in any
// time order: an amount added before an account's latest record is decayed
// forward to that record, which is exact. Recorded usage saturates at
// math.MaxFloat64. It returns an error, and records
// nothing, for an empty account or an amount that is negative, infinite or
// NaN.
func (l *Ledger) Add(account string, gpuSeconds float64, at time.Time) error {
	switch {
	case account == "":
		return fmt.Errorf("fairshare: ledger: empty account name")
	case math.IsNaN(gpuSeconds) || math.IsInf(gpuSeconds, 0) || gpuSeconds < 0:
		return fmt.Errorf("fairshare: ledger: account %q: usage must be a finite number >= 0, got %v", account, gpuSeconds)
	}
	if l.entries == nil {
		l.entries = make(map[string]*entry)
	}
	hl := l.HalfLife()
	own := true
	for name := account; name != ""; name = l.parent(name) {
		e := l.entries[name]
		if e == nil {
			e = &entry{asOf: at}
			l.entries[name] = e
		}
		amount := gpuSeconds
		if at.After(e.asOf) {
			e.own, e.total = e.at(at, hl)
			e.asOf = at
		} else {
			amount = decay(gpuSeconds, halfLives(at, e.asOf, hl))
		}
		// Sums saturate at the largest float64: an infinite usage would
		// decay to NaN (Inf·0) far enough ahead.
		if own {
			e.own = min(e.own+amount, math.MaxFloat64)
			own = false
		}
		e.total = min(e.total+amount, math.MaxFloat64)
	}
	return nil
}

func (l *Ledger) parent(name string) string {
	p, _ := l.tree.Parent(name)
	return p
}

// Usage returns the decayed usage of account at the given instant,
// including its descendants when the ledger is bound to a tree. It is 0 for
// an account never charged. Usage is O(1).
func (l *Ledger) Usage(account string, at time.Time) float64 {
	if l == nil {
		return 0
	}
	e := l.entries[account]
	if e == nil {
		return 0
	}
	_, total := e.at(at, l.HalfLife())
	return total
}

// Own returns the decayed usage charged to account itself, without its
// descendants.
func (l *Ledger) Own(account string, at time.Time) float64 {
	if l == nil {
		return 0
	}
	e := l.entries[account]
	if e == nil {
		return 0
	}
	own, _ := e.at(at, l.HalfLife())
	return own
}

// OwnUsage returns the decayed own usage of every charged account at the
// given instant, as the input that Tree.Factors expects. The map is a lookup
// table; use Accounts for a deterministic order.
func (l *Ledger) OwnUsage(at time.Time) map[string]float64 {
	if l == nil {
		return nil
	}
	out := make(map[string]float64, len(l.entries))
	for name, e := range l.entries {
		if own, _ := e.at(at, l.HalfLife()); own > 0 {
			out[name] = own
		}
	}
	return out
}

// Accounts returns the names of all charged accounts (including ancestors
// charged through roll-up), sorted.
func (l *Ledger) Accounts() []string {
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l.entries))
	for name := range l.entries {
		out = append(out, name)
	}
	slices.SortFunc(out, strings.Compare)
	return out
}
