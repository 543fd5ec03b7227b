package fairshare

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
)

// Algorithm selects how the fair-share factor of an account is computed.
// The zero value is FairTree, the default.
type Algorithm int

const (
	// FairTree ranks accounts level by level by LevelFS = S/U (Slurm's
	// Fair Tree, the Slurm default since 19.05). It is the default.
	FairTree Algorithm = iota
	// Classic is Slurm's classic factor F = 2^(-U_eff/S).
	Classic
)

// String returns "fairtree" or "classic".
func (a Algorithm) String() string {
	switch a {
	case FairTree:
		return "fairtree"
	case Classic:
		return "classic"
	default:
		return fmt.Sprintf("Algorithm(%d)", int(a))
	}
}

// ParseAlgorithm parses "fairtree" (or "") and "classic".
func ParseAlgorithm(s string) (Algorithm, error) {
	switch s {
	case "", "fairtree":
		return FairTree, nil
	case "classic":
		return Classic, nil
	default:
		return FairTree, fmt.Errorf("fairshare: unknown algorithm %q (want \"fairtree\" or \"classic\")", s)
	}
}

// Factor holds the fair-share figures of one account, the columns of an
// `sshare -l` line.
type Factor struct {
	// Account and Parent name the account and its parent ("" at the top).
	Account, Parent string
	// Depth is 0 for top-level accounts.
	Depth int
	// Leaf is true for accounts without children.
	Leaf bool
	// RawShares is the account's configured share.
	RawShares float64
	// NormShares is the account's share of the whole cluster, in [0,1].
	NormShares float64
	// RawUsage is the decayed usage of the account and its descendants.
	RawUsage float64
	// NormUsage is RawUsage divided by the usage of the whole cluster.
	NormUsage float64
	// EffectiveUsage is the classic effective usage U_eff.
	EffectiveUsage float64
	// Classic is the classic factor 2^(-U_eff/S), in [0,1].
	Classic float64
	// LevelFS is the Fair Tree level fair-share S/U among siblings
	// (+Inf when the account has no usage or S/U exceeds the float64
	// range, 0 when it has no share or its fraction of the shares is
	// below the float64 range). Ranks compare the exact ratios, not these
	// rounded values.
	LevelFS float64
	// Rank is the Fair Tree position: 0 for the best leaf. An interior
	// account carries the rank of the best leaf below it.
	Rank int
	// FairTree is the Fair Tree factor (N - Rank)/N over N leaves, in (0,1].
	FairTree float64
}

// Value returns the factor of the chosen algorithm.
func (f Factor) Value(a Algorithm) float64 {
	if a == Classic {
		return f.Classic
	}
	return f.FairTree
}

// Factors is the result of Tree.Factors: one Factor per account in tree
// order, with a lookup by name.
type Factors struct {
	rows  []Factor
	index map[string]int
}

// Rows returns a copy of the factors in tree order (depth first, children by
// name).
func (fs *Factors) Rows() []Factor {
	if fs == nil {
		return nil
	}
	return slices.Clone(fs.rows)
}

// Get returns the factors of one account.
func (fs *Factors) Get(account string) (Factor, bool) {
	if fs == nil {
		return Factor{}, false
	}
	i, ok := fs.index[account]
	if !ok {
		return Factor{}, false
	}
	return fs.rows[i], true
}

// Value returns the factor of account under algorithm a, or 0 for an
// account the tree does not hold (use Tree.WithMissing to give such teams
// their default share first).
func (fs *Factors) Value(account string, a Algorithm) float64 {
	f, _ := fs.Get(account)
	return f.Value(a)
}

// Factors computes both fair-share factors of every account from the own
// usage of each account (usage charged to the account itself, not to its
// descendants, e.g. Ledger.OwnUsage). The tree rolls usage up to parents.
// Usage of accounts the tree does not hold is ignored; negative and NaN
// usage counts as 0. The result does not depend on map order.
//
// Classic (Slurm's classic fair-share, priority/multifactor documentation):
//
//	S      = Π over the path (share / Σ sibling shares)       normalized shares
//	U      = usage(subtree) / usage(cluster)                  normalized usage
//	U_eff  = U                                    for a top-level account
//	U_eff  = U + (U_eff(parent) - U) · share/Σ sibling shares otherwise
//	F      = 2^(-U_eff / S)                       (0 when S = 0)
//
// Fair Tree (Slurm's fair_tree documentation): among siblings,
// S = share / Σ sibling shares and U = usage / Σ sibling usage, and
// LevelFS = S / U (+Inf when U = 0; 0 when S = 0). Siblings are sorted by
// LevelFS descending, ties by name, and visited depth first; the k-th leaf
// visited (k from 0) has rank k and factor (N - k)/N over N leaves. So
// every leaf under a sibling with higher LevelFS outranks every leaf under
// a sibling with lower LevelFS, at every level.
//
// Factors runs in O(n log n) for n accounts.
func (t *Tree) Factors(own map[string]float64) *Factors {
	fs := &Factors{index: make(map[string]int, t.Len())}
	if t.Len() == 0 {
		return fs
	}
	total := t.subtreeUsage(own)
	fs.rows = t.factorRows(total)
	for i := range t.nodes {
		fs.index[t.nodes[i].Name] = i
	}
	t.setClassic(fs.rows)
	t.setLevelFS(fs.rows, total)
	t.rankFairTree(fs.rows, total)
	return fs
}

// subtreeUsage returns, per account in tree order, the usage of its
// subtree: its own usage (0 when NaN or negative, capped so that sums
// over the tree stay finite) plus its descendants'. O(n).
func (t *Tree) subtreeUsage(own map[string]float64) []float64 {
	n := len(t.nodes)
	usageCap := math.MaxFloat64 / float64(n+1)
	total := make([]float64, n)
	for i := n - 1; i >= 0; i-- { // children come after their parent
		nd := &t.nodes[i]
		u := own[nd.Name]
		switch {
		case !(u > 0): // NaN and negatives
			u = 0
		case u > usageCap:
			u = usageCap
		}
		for _, c := range nd.children {
			u += total[c]
		}
		total[i] = u
	}
	return total
}

// factorRows returns one row per account in tree order, with its place
// in the tree, its shares and its usage filled in; the factors are 0.
func (t *Tree) factorRows(total []float64) []Factor {
	cluster := 0.0
	for _, r := range t.roots {
		cluster += total[r]
	}
	rows := make([]Factor, len(t.nodes))
	for i := range t.nodes {
		nd := &t.nodes[i]
		f := &rows[i]
		f.Account, f.Parent, f.Depth, f.Leaf = nd.Name, nd.Parent, nd.depth, len(nd.children) == 0
		f.RawShares, f.NormShares, f.RawUsage = nd.Share, nd.normShare, total[i]
		if cluster > 0 {
			f.NormUsage = total[i] / cluster
		}
	}
	return rows
}

// setClassic sets EffectiveUsage and Classic of every row, top down
// (parents precede children in tree order).
func (t *Tree) setClassic(rows []Factor) {
	t.eachGroup(func(parent int, group []int) {
		for _, c := range group {
			f := &rows[c]
			if parent < 0 {
				f.EffectiveUsage = f.NormUsage
			} else {
				r := t.nodes[c].frac
				// U + (Up - U)·r, written as U·(1-r) + Up·r so that it is
				// monotone in U and Up under rounding.
				f.EffectiveUsage = f.NormUsage*(1-r) + rows[parent].EffectiveUsage*r
			}
			if f.NormShares > 0 {
				f.Classic = math.Exp2(-f.EffectiveUsage / f.NormShares)
			}
		}
	})
}

// setLevelFS sets LevelFS of every row: S/U among its siblings.
func (t *Tree) setLevelFS(rows []Factor, total []float64) {
	t.eachGroup(func(_ int, group []int) {
		usage := 0.0
		for _, c := range group {
			usage += total[c]
		}
		for _, c := range group {
			rows[c].LevelFS = levelFS(t.nodes[c].frac, total[c], usage)
		}
	})
}

// rankFairTree sets Rank and FairTree of every row: siblings in order of
// LevelFS (compared exactly, by compareLevel), then name, visited depth
// first; the k-th leaf visited has rank k, and an inner account the rank
// of its first leaf. O(n log n).
func (t *Tree) rankFairTree(rows []Factor, total []float64) {
	leaves := 0
	for i := range t.nodes {
		if len(t.nodes[i].children) == 0 {
			leaves++
		}
	}
	next := 0
	var rank func(group []int)
	rank = func(group []int) {
		sorted := slices.Clone(group)
		slices.SortFunc(sorted, func(a, b int) int {
			if c := compareLevel(t.nodes[a].Share, total[a], t.nodes[b].Share, total[b]); c != 0 {
				return -c
			}
			return strings.Compare(t.nodes[a].Name, t.nodes[b].Name)
		})
		for _, c := range sorted {
			rows[c].Rank = next
			if kids := t.nodes[c].children; len(kids) > 0 {
				rank(kids)
			} else {
				next++
			}
			rows[c].FairTree = float64(leaves-rows[c].Rank) / float64(leaves)
		}
	}
	rank(t.roots)
}

// compareLevel compares the LevelFS of two siblings with shares sa, sb
// and usages ua, ub. An account without shares comes last and one
// without usage first. Between the others, the LevelFS compare as sa·ub
// against sb·ua (the group's sums of shares and usages cancel), not as
// the rounded LevelFS themselves: rounding can make two equal ratios
// differ in the last bits (3/40 over 12/29 and 4/40 over 16/29), a tiny
// usage can overflow S/U to +Inf, and a fraction that underflows to a
// subnormal keeps only a few bits. Each product of two floats is rounded
// once, so where both are normal and further apart than rounding could
// take them, their order is the exact one; otherwise they are compared
// exactly.
func compareLevel(sa, ua, sb, ub float64) int {
	kind := func(s, u float64) int {
		switch {
		case !(s > 0):
			return 0
		case !(u > 0):
			return 2
		}
		return 1
	}
	if c := cmp.Compare(kind(sa, ua), kind(sb, ub)); c != 0 || kind(sa, ua) != 1 {
		return c
	}
	normal := func(x float64) bool { return x >= 0x1p-1022 && !math.IsInf(x, 0) }
	if pa, pb := sa*ub, sb*ua; normal(pa) && normal(pb) && math.Abs(pa-pb) > 1e-9*max(pa, pb) {
		return cmp.Compare(pa, pb)
	}
	x := new(big.Float).SetPrec(128).Mul(big.NewFloat(sa), big.NewFloat(ub))
	y := new(big.Float).SetPrec(128).Mul(big.NewFloat(sb), big.NewFloat(ua))
	return x.Cmp(y)
}

// levelFS is S/U of one account among its siblings, for its fraction
// of their shares.
func levelFS(frac, usage, usages float64) float64 {
	if frac <= 0 {
		return 0
	}
	if usage <= 0 || usages <= 0 {
		return math.Inf(1)
	}
	return frac / (usage / usages)
}

// eachGroup calls fn for every sibling group, parents before children: first
// the top-level accounts (parent -1), then the children of each account in
// tree order.
func (t *Tree) eachGroup(fn func(parent int, group []int)) {
	fn(-1, t.roots)
	for i := range t.nodes {
		if len(t.nodes[i].children) > 0 {
			fn(i, t.nodes[i].children)
		}
	}
}
