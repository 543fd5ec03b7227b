package fairshare

import (
	"math"
	"math/big"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// descends reports whether a is d or a descendant of d in accounts.
func descends(accounts []Account, a, d string) bool {
	parent := map[string]string{}
	for _, x := range accounts {
		parent[x.Name] = x.Parent
	}
	for n := a; n != ""; n = parent[n] {
		if n == d {
			return true
		}
	}
	return false
}

// TestPropertyTreeLedgerMatchesDirectSum charges random amounts at random
// instants, in any order, to the accounts of a random tree, and compares
// Own and Usage of every account at a random instant (before or after the
// charges) with the direct sum of exponentially decayed charges: its own,
// and its subtree's. Half-lives range from a second to the largest
// Duration.
func TestPropertyTreeLedgerMatchesDirectSum(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		accounts, _ := genTree(t)
		tree := mustTree(t, accounts)
		hl := rapid.SampledFrom([]time.Duration{0, -1, time.Second, time.Hour, DefaultHalfLife, 100 * 365 * 24 * time.Hour, math.MaxInt64}).Draw(t, "halfLife")
		l := tree.NewLedger(hl)
		eff := hl
		if eff <= 0 {
			eff = DefaultHalfLife
		}
		if l.HalfLife() != eff {
			t.Fatalf("HalfLife %v, want %v", l.HalfLife(), eff)
		}
		type charge struct {
			account string
			amount  float64
			at      time.Time
		}
		var charges []charge
		for range rapid.IntRange(0, 15).Draw(t, "charges") {
			c := charge{
				account: accounts[rapid.IntRange(0, len(accounts)-1).Draw(t, "who")].Name,
				amount:  rapid.Float64Range(0, 1e6).Draw(t, "amount"),
				at:      t0.Add(time.Duration(rapid.Int64Range(0, 30*24*3600).Draw(t, "sec")) * time.Second),
			}
			if err := l.Add(c.account, c.amount, c.at); err != nil {
				t.Fatal(err)
			}
			charges = append(charges, c)
		}
		// Queried at or after its latest charge: a record moved forward
		// and back again can underflow where the direct sum does not.
		latest := t0
		for _, c := range charges {
			if c.at.After(latest) {
				latest = c.at
			}
		}
		at := latest.Add(time.Duration(rapid.Int64Range(0, 60*24*3600).Draw(t, "atSec")) * time.Second)
		decay := func(c charge) float64 {
			return c.amount * math.Exp2(-at.Sub(c.at).Seconds()/eff.Seconds())
		}
		near := func(got, want, scale float64) bool {
			return got == want || math.Abs(got-want) <= 1e-9*math.Max(1, scale)
		}
		for _, a := range accounts {
			own, total, scale := 0.0, 0.0, 0.0
			for _, c := range charges {
				if c.account == a.Name {
					own += decay(c)
				}
				if descends(accounts, c.account, a.Name) {
					total += decay(c)
					scale += decay(c)
				}
			}
			if got := l.Own(a.Name, at); !near(got, own, scale) {
				t.Fatalf("Own(%s) = %v, direct sum %v", a.Name, got, own)
			}
			if got := l.Usage(a.Name, at); !near(got, total, scale) {
				t.Fatalf("Usage(%s) = %v, direct sum %v", a.Name, got, total)
			}
			// OwnUsage lists the accounts whose own usage is above 0 (the
			// direct sum may underflow to 0 a little before the ledger does).
			if got, ok := l.OwnUsage(at)[a.Name]; ok != (l.Own(a.Name, at) > 0) || ok && got != l.Own(a.Name, at) {
				t.Fatalf("OwnUsage[%s] = %v, %v; Own %v", a.Name, got, ok, l.Own(a.Name, at))
			}
		}
	})
}

// TestPropertyFactorsMatchDefinitions recomputes, from the accounts and
// own usage alone, what Factors documents: raw usage (subtree sums),
// normalized shares and usage, the classic effective usage and factor,
// and the Fair Tree ranking (siblings by exact S/U descending, ties by
// name, depth first; factor (N-rank)/N).
func TestPropertyFactorsMatchDefinitions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		accounts, usage := genTree(t)
		if rapid.Bool().Draw(t, "oddValues") { // fractional and far-apart shares and usage
			for i := range accounts {
				accounts[i].Share = rapid.SampledFrom([]float64{0, 1e-300, 0.3, 1, 7.25, 1e6, 1e200}).Draw(t, "oddShare")
			}
			for k := range usage {
				usage[k] = rapid.SampledFrom([]float64{0, 5e-324, 1e-300, 0.1, 3, 1e9, 1e250}).Draw(t, "oddUsage")
			}
		}
		if rapid.Bool().Draw(t, "someZero") {
			for k := range usage {
				if rapid.Bool().Draw(t, "zero") {
					usage[k] = 0
				}
			}
		}
		tree := mustTree(t, accounts)
		fs := tree.Factors(usage)
		byName := map[string]Account{}
		kids := map[string][]string{}
		for _, a := range accounts {
			byName[a.Name] = a
			kids[a.Parent] = append(kids[a.Parent], a.Name)
		}
		for k := range kids {
			slices.Sort(kids[k])
		}
		var raw func(n string) float64
		raw = func(n string) float64 {
			u := max(usage[n], 0)
			for _, c := range kids[n] {
				u += raw(c)
			}
			return u
		}
		cluster := 0.0
		for _, r := range kids[""] {
			cluster += raw(r)
		}
		siblingShares := func(n string) float64 {
			s := 0.0
			for _, c := range kids[byName[n].Parent] {
				s += byName[c].Share
			}
			return s
		}
		frac := func(n string) float64 {
			if s := siblingShares(n); s > 0 {
				return byName[n].Share / s
			}
			return 0
		}
		close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
		var norm func(n string) float64
		norm = func(n string) float64 {
			if n == "" {
				return 1
			}
			return norm(byName[n].Parent) * frac(n)
		}
		var ueff func(n string) float64
		ueff = func(n string) float64 {
			u := 0.0
			if cluster > 0 {
				u = raw(n) / cluster
			}
			if p := byName[n].Parent; p != "" {
				return u + (ueff(p)-u)*frac(n)
			}
			return u
		}
		for _, a := range accounts {
			f, ok := fs.Get(a.Name)
			if !ok {
				t.Fatalf("no factor for %s", a.Name)
			}
			if !close(f.RawUsage, raw(a.Name)) {
				t.Fatalf("%s: RawUsage %v, want %v", a.Name, f.RawUsage, raw(a.Name))
			}
			if !close(f.NormShares, norm(a.Name)) {
				t.Fatalf("%s: NormShares %v, want %v", a.Name, f.NormShares, norm(a.Name))
			}
			if !close(f.EffectiveUsage, ueff(a.Name)) {
				t.Fatalf("%s: EffectiveUsage %v, want %v", a.Name, f.EffectiveUsage, ueff(a.Name))
			}
			want := 0.0
			if n := norm(a.Name); n > 0 {
				want = math.Exp2(-ueff(a.Name) / n)
			}
			if !close(f.Classic, want) {
				t.Fatalf("%s: Classic %v, want %v", a.Name, f.Classic, want)
			}
		}
		// Fair Tree: an exact ranking.
		exact := func(n string) *big.Rat { // S/U among siblings; nil for +Inf
			if byName[n].Share == 0 {
				return new(big.Rat)
			}
			if raw(n) == 0 {
				return nil
			}
			return new(big.Rat).Quo(new(big.Rat).SetFloat64(byName[n].Share), new(big.Rat).SetFloat64(raw(n)))
		}
		cmpFS := func(a, b string) int { // descending LevelFS, then name
			x, y := exact(a), exact(b)
			switch {
			case x == nil && y != nil:
				return -1
			case x != nil && y == nil:
				return 1
			case x != nil && y != nil:
				if c := y.Cmp(x); c != 0 {
					return c
				}
			}
			if a < b {
				return -1
			}
			return 1
		}
		leaves := 0
		for _, a := range accounts {
			if len(kids[a.Name]) == 0 {
				leaves++
			}
		}
		next := 0
		var visit func(group []string)
		visit = func(group []string) {
			g := slices.Clone(group)
			slices.SortFunc(g, cmpFS)
			for _, n := range g {
				f, _ := fs.Get(n)
				if f.Rank != next {
					t.Fatalf("%s: rank %d, want %d (group %v)", n, f.Rank, next, g)
				}
				if want := float64(leaves-next) / float64(leaves); f.FairTree != want {
					t.Fatalf("%s: FairTree %v, want %v", n, f.FairTree, want)
				}
				if len(kids[n]) > 0 {
					visit(kids[n])
				} else {
					next++
				}
			}
		}
		visit(kids[""])
		if next != leaves {
			t.Fatalf("ranked %d leaves of %d", next, leaves)
		}
	})
}

// TestPropertyCompareOrdersByTierThenPriority checks Compare against its
// definition and that it is antisymmetric.
func TestPropertyCompareOrdersByTierThenPriority(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := Weights{FairShare: rapid.Float64Range(0, 2000).Draw(t, "fs"), Age: rapid.Float64Range(0, 200).Draw(t, "age"),
			Size: rapid.Float64Range(0, 20).Draw(t, "size"), Explicit: rapid.Bool().Draw(t, "explicit")}
		job := func(name string) JobFactors {
			return JobFactors{Tier: rapid.IntRange(0, 3).Draw(t, name+"tier"), FairShare: rapid.Float64Range(-0.5, 1.5).Draw(t, name+"fs"),
				Age: time.Duration(rapid.Int64Range(-1e15, 1e15).Draw(t, name+"age")), GPUs: rapid.IntRange(-2, 64).Draw(t, name+"gpus"), ClusterGPUs: 32}
		}
		a, b := job("a"), job("b")
		c := w.Compare(a, b)
		if c != -w.Compare(b, a) {
			t.Fatalf("not antisymmetric: %d, %d", c, w.Compare(b, a))
		}
		r := w.Resolved()
		prio := func(f JobFactors) float64 {
			fsv := math.Min(math.Max(f.FairShare, 0), 1)
			return r.FairShare*fsv + r.Age*AgeFactor(f.Age, r.AgeMax) + r.Size*SizeFactor(f.GPUs, f.ClusterGPUs)
		}
		want := 0
		switch {
		case a.Tier != b.Tier:
			want = map[bool]int{true: -1, false: 1}[a.Tier < b.Tier]
		case prio(a) > prio(b):
			want = -1
		case prio(a) < prio(b):
			want = 1
		}
		if c != want {
			t.Fatalf("Compare = %d, want %d (priorities %v, %v)", c, want, prio(a), prio(b))
		}
	})
}
