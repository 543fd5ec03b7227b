package fairshare

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// genTree draws a random forest of up to 10 accounts (parents are always
// drawn among earlier accounts, so it is acyclic) and own usage for some.
func genTree(t *rapid.T) ([]Account, map[string]float64) {
	n := rapid.IntRange(1, 10).Draw(t, "n")
	accounts := make([]Account, n)
	usage := make(map[string]float64)
	for i := range accounts {
		a := Account{Name: fmt.Sprintf("t%d", i), Share: float64(rapid.IntRange(0, 10).Draw(t, "share"))}
		if i > 0 && rapid.Bool().Draw(t, "nested") {
			a.Parent = fmt.Sprintf("t%d", rapid.IntRange(0, i-1).Draw(t, "parent"))
		}
		accounts[i] = a
		if rapid.Bool().Draw(t, "used") {
			usage[a.Name] = rapid.Float64Range(0, 1e6).Draw(t, "usage")
		}
	}
	return accounts, usage
}

func mustTree(t *rapid.T, accounts []Account) *Tree {
	tree, err := NewTree(accounts)
	if err != nil {
		t.Fatalf("NewTree: %v", err)
	}
	return tree
}

func TestPropertyFactorsInUnitInterval(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		accounts, usage := genTree(t)
		for _, f := range mustTree(t, accounts).Factors(usage).Rows() {
			for _, v := range []float64{f.Classic, f.FairTree, f.NormShares, f.NormUsage, f.EffectiveUsage} {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("%s: value %v outside [0,1] in %+v", f.Account, v, f)
				}
			}
			if f.Leaf && f.FairTree == 0 {
				t.Fatalf("%s: Fair Tree factor of a leaf is 0", f.Account)
			}
		}
	})
}

func TestPropertyMoreUsageNeverRaisesFactor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		accounts, usage := genTree(t)
		tree := mustTree(t, accounts)
		team := accounts[rapid.IntRange(0, len(accounts)-1).Draw(t, "team")].Name
		before := tree.Factors(usage)
		more := make(map[string]float64, len(usage)+1)
		for k, v := range usage {
			more[k] = v
		}
		more[team] += rapid.Float64Range(1e-3, 1e6).Draw(t, "extra")
		after := tree.Factors(more)
		// The team and every ancestor of it (whose usage grew too).
		for name := team; name != ""; name, _ = tree.Parent(name) {
			b, _ := before.Get(name)
			a, _ := after.Get(name)
			if a.FairTree > b.FairTree {
				t.Fatalf("%s (charged %s): Fair Tree factor rose from %v to %v", name, team, b.FairTree, a.FairTree)
			}
			if a.Classic > b.Classic*(1+1e-12) {
				t.Fatalf("%s (charged %s): classic factor rose from %v to %v", name, team, b.Classic, a.Classic)
			}
		}
	})
}

func TestPropertyIndependentOfInputOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		accounts, usage := genTree(t)
		want := mustTree(t, accounts).Factors(usage).Rows()
		perm := rapid.Permutation(accounts).Draw(t, "perm")
		got := mustTree(t, perm).Factors(usage).Rows()
		if !slices.Equal(want, got) {
			t.Fatalf("factors depend on input order:\n%v\n%v", want, got)
		}
	})
}

func TestPropertyNeverLowerTierFirst(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := Weights{
			FairShare: rapid.Float64Range(0, 1e4).Draw(t, "wfs"),
			Age:       rapid.Float64Range(0, 1e4).Draw(t, "wage"),
			Size:      rapid.Float64Range(0, 1e4).Draw(t, "wsize"),
			Explicit:  rapid.Bool().Draw(t, "explicit"),
		}
		jobs := rapid.SliceOf(rapid.Custom(func(t *rapid.T) JobFactors {
			return JobFactors{
				Tier:        rapid.IntRange(0, 3).Draw(t, "tier"),
				FairShare:   rapid.Float64Range(0, 1).Draw(t, "fs"),
				Age:         time.Duration(rapid.Int64Range(-1e15, 1e15).Draw(t, "age")),
				GPUs:        rapid.IntRange(0, 1024).Draw(t, "gpus"),
				ClusterGPUs: rapid.IntRange(0, 1024).Draw(t, "cluster"),
			}
		})).Draw(t, "jobs")
		slices.SortStableFunc(jobs, w.Compare)
		for i := 1; i < len(jobs); i++ {
			if jobs[i].Tier < jobs[i-1].Tier {
				t.Fatalf("tier %d ordered after tier %d", jobs[i].Tier, jobs[i-1].Tier)
			}
			if jobs[i].Tier == jobs[i-1].Tier && w.Priority(jobs[i]) > w.Priority(jobs[i-1]) {
				t.Fatalf("higher priority ordered second inside tier %d", jobs[i].Tier)
			}
		}
	})
}

func TestPropertyLedgerMatchesFormula(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hl := time.Duration(rapid.Int64Range(24, 1000).Draw(t, "halfLifeHours")) * time.Hour
		l := NewLedger(hl)
		n := rapid.IntRange(1, 20).Draw(t, "n")
		at := t0.Add(time.Duration(rapid.Int64Range(0, 2000).Draw(t, "atHours")) * time.Hour)
		want := 0.0
		for range n {
			amount := rapid.Float64Range(0, 1e6).Draw(t, "amount")
			when := t0.Add(time.Duration(rapid.Int64Range(0, 2000*3600).Draw(t, "sec")) * time.Second)
			if err := l.Add("x", amount, when); err != nil {
				t.Fatal(err)
			}
			want += amount * math.Exp2(-at.Sub(when).Seconds()/hl.Seconds())
		}
		got := l.Usage("x", at)
		if math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Fatalf("usage %v, formula %v", got, want)
		}
	})
}
