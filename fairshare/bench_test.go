package fairshare

import (
	"fmt"
	"testing"
	"time"
)

// benchTree is 10 top-level teams of 10 sub-teams of 10 users (1,110 accounts).
func benchTree(b *testing.B) (*Tree, map[string]float64) {
	b.Helper()
	var accounts []Account
	usage := map[string]float64{}
	for i := range 10 {
		top := fmt.Sprintf("t%d", i)
		accounts = append(accounts, Account{Name: top, Share: float64(i + 1)})
		for j := range 10 {
			mid := fmt.Sprintf("%s.%d", top, j)
			accounts = append(accounts, Account{Name: mid, Share: float64(j + 1), Parent: top})
			for k := range 10 {
				leaf := fmt.Sprintf("%s.%d", mid, k)
				accounts = append(accounts, Account{Name: leaf, Share: 1, Parent: mid})
				usage[leaf] = float64((i*100 + j*10 + k) * 3600)
			}
		}
	}
	tree, err := NewTree(accounts)
	if err != nil {
		b.Fatal(err)
	}
	return tree, usage
}

func BenchmarkFactors(b *testing.B) {
	tree, usage := benchTree(b)
	b.ReportAllocs()
	for b.Loop() {
		tree.Factors(usage)
	}
}

func BenchmarkLedgerAdd(b *testing.B) {
	tree, _ := benchTree(b)
	l := tree.NewLedger(0)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = l.Add("t3.4.5", 8*3600, t0.Add(sec(i)))
		i++
	}
}

func sec(i int) (d time.Duration) { return time.Duration(i) * 1e9 }
