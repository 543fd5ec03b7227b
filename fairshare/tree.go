package fairshare

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Account is one node of the account tree: a team (or a sub-team) that
// owns a number of shares of its parent. Shares are relative: siblings with
// 40, 35 and 25 shares are entitled to 40%, 35% and 25% of what their parent
// is entitled to.
type Account struct {
	// Name identifies the account; it must be non-empty and unique.
	Name string
	// Share is the raw number of shares; it must be finite and >= 0.
	// An account with share 0 is entitled to nothing: under Classic it
	// gets factor 0; under Fair Tree it ranks after its siblings that
	// have shares, by level fair-share 0, and its factor is set by that
	// rank like any other.
	Share float64
	// Parent names the parent account; empty means a top-level account.
	Parent string
}

// AccountError reports an invalid account given to NewTree.
type AccountError struct {
	// Index is the position of the account in the input slice.
	Index int
	// Account is the name of the offending account (may be empty).
	Account string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *AccountError) Error() string {
	if e.Account == "" {
		return fmt.Sprintf("fairshare: accounts[%d]: %s", e.Index, e.Reason)
	}
	return fmt.Sprintf("fairshare: account %q: %s", e.Account, e.Reason)
}

// node is an account placed in the tree.
type node struct {
	// Account is the account as given to NewTree.
	Account
	parent    int   // index of the parent node, -1 for a top-level account
	children  []int // indexes of the children, ordered by name
	depth     int   // 0 for top-level accounts
	normShare float64
	// frac is the account's share over the shares of its siblings and
	// itself (0 when they are all 0), summed without overflow.
	frac float64
}

// Tree is a validated, immutable account tree. Its nodes are kept in tree
// order: depth first, children ordered by name. A *Tree is safe for
// concurrent use by several goroutines because it never changes after
// construction.
type Tree struct {
	nodes []node // tree order
	roots []int  // top-level accounts, ordered by name
	index map[string]int
}

// NewTree validates accounts and builds the tree. The order of accounts does
// not matter: the result is the same for every permutation of the input,
// and so is the error, if any (but for the Index it gives), unless two
// accounts share a name: which fault of theirs is reported may then
// depend on their order. It reports empty and duplicate names, unknown
// parents, parent cycles, accounts more than MaxDepth levels deep, and
// negative, infinite or NaN shares, as an *AccountError naming the
// account.
//
// NewTree runs in O(n log n) for n accounts.
func NewTree(accounts []Account) (*Tree, error) {
	order := make([]int, len(accounts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return strings.Compare(accounts[a].Name, accounts[b].Name)
	})
	byName := make(map[string]int, len(accounts))
	for _, i := range order {
		a := accounts[i]
		switch {
		case a.Name == "":
			return nil, &AccountError{Index: i, Reason: "empty name"}
		case math.IsNaN(a.Share) || math.IsInf(a.Share, 0):
			return nil, &AccountError{Index: i, Account: a.Name, Reason: fmt.Sprintf("share must be a finite number, got %v", a.Share)}
		case a.Share < 0:
			return nil, &AccountError{Index: i, Account: a.Name, Reason: fmt.Sprintf("share must be >= 0, got %v", a.Share)}
		}
		if j, dup := byName[a.Name]; dup {
			return nil, &AccountError{Index: max(i, j), Account: a.Name, Reason: "duplicate name"}
		}
		byName[a.Name] = i
	}
	for _, i := range order {
		a := accounts[i]
		if a.Parent == "" {
			continue
		}
		if _, ok := byName[a.Parent]; !ok {
			return nil, &AccountError{Index: i, Account: a.Name, Reason: fmt.Sprintf("unknown parent %q", a.Parent)}
		}
	}
	if err := checkAncestry(accounts, order, byName); err != nil {
		return nil, err
	}
	return build(accounts, order, byName), nil
}

// MaxDepth is how far below a top-level account NewTree accepts an
// account: deeper trees are refused rather than walked.
const MaxDepth = 1000

// checkAncestry reports the first parent cycle, named by its smallest
// account, or else, on the first walk up (in name order of the accounts
// it starts from) that finds accounts more than MaxDepth levels below a
// top-level one, the shallowest of them: the account MaxDepth+1 levels
// down on that way.
func checkAncestry(accounts []Account, order []int, byName map[string]int) error {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make([]int, len(accounts))
	depth := make([]int, len(accounts))
	for _, start := range order {
		var path []int
		i := start
		atTop := false
		for state[i] != done {
			if state[i] == onPath {
				// The walk came back to a node of this path: a cycle from i.
				cycle := path[slices.Index(path, i):]
				m := slices.MinFunc(cycle, func(a, b int) int { return strings.Compare(accounts[a].Name, accounts[b].Name) })
				r := slices.Index(cycle, m)
				names := make([]string, 0, len(cycle)+1)
				for _, j := range append(slices.Clone(cycle[r:]), cycle[:r]...) {
					names = append(names, accounts[j].Name)
				}
				names = append(names, accounts[m].Name)
				return &AccountError{Index: m, Account: accounts[m].Name, Reason: "parent cycle " + strings.Join(names, " -> ")}
			}
			state[i] = onPath
			path = append(path, i)
			p := accounts[i].Parent
			if p == "" {
				atTop = true
				break
			}
			i = byName[p]
		}
		d := 0 // the depth of the path's last account
		if !atTop {
			d = depth[i] + 1 // below i, settled before
		}
		for k := len(path) - 1; k >= 0; k-- {
			j := path[k]
			if d > MaxDepth {
				return &AccountError{Index: j, Account: accounts[j].Name, Reason: fmt.Sprintf("more than %d levels below a top-level account", MaxDepth)}
			}
			state[j], depth[j] = done, d
			d++
		}
	}
	return nil
}

// build lays out a validated, acyclic account list in tree order.
func build(accounts []Account, order []int, byName map[string]int) *Tree {
	children := make(map[int][]int, len(accounts))
	var roots []int
	for _, i := range order { // order is by name, so children lists are too
		if p := accounts[i].Parent; p != "" {
			children[byName[p]] = append(children[byName[p]], i)
		} else {
			roots = append(roots, i)
		}
	}
	t := &Tree{nodes: make([]node, 0, len(accounts)), index: make(map[string]int, len(accounts))}
	var visit func(in, parent, depth int, normParent float64, siblings shareSum)
	visit = func(in, parent, depth int, normParent float64, siblings shareSum) {
		at := len(t.nodes)
		frac := siblings.of(accounts[in].Share)
		t.nodes = append(t.nodes, node{Account: accounts[in], parent: parent, depth: depth, normShare: normParent * frac, frac: frac})
		t.index[accounts[in].Name] = at
		kids := children[in]
		sum := sumShares(accounts, kids)
		for _, c := range kids {
			t.nodes[at].children = append(t.nodes[at].children, len(t.nodes))
			visit(c, at, depth+1, normParent*frac, sum)
		}
	}
	sum := sumShares(accounts, roots)
	for _, r := range roots {
		t.roots = append(t.roots, len(t.nodes))
		visit(r, -1, 0, 1, sum)
	}
	return t
}

// shareSum is the sum of a sibling group's shares, kept as a sum of
// shares divided by the largest so that it stays finite for any finite
// shares.
type shareSum struct{ scale, sum float64 }

func sumShares(accounts []Account, idx []int) shareSum {
	s := shareSum{}
	for _, i := range idx {
		s.scale = max(s.scale, accounts[i].Share)
	}
	if s.scale > 0 {
		for _, i := range idx {
			s.sum += accounts[i].Share / s.scale
		}
	}
	return s
}

// of is share over the group's sum; 0 when the group shares nothing.
func (s shareSum) of(share float64) float64 {
	if s.sum <= 0 {
		return 0
	}
	return share / s.scale / s.sum
}

// Len returns the number of accounts.
func (t *Tree) Len() int {
	if t == nil {
		return 0
	}
	return len(t.nodes)
}

// Has reports whether the tree holds an account of that name.
func (t *Tree) Has(name string) bool {
	if t == nil {
		return false
	}
	_, ok := t.index[name]
	return ok
}

// Accounts returns the accounts in tree order: depth first, children ordered
// by name.
func (t *Tree) Accounts() []Account {
	if t == nil {
		return nil
	}
	out := make([]Account, len(t.nodes))
	for i, n := range t.nodes {
		out[i] = n.Account
	}
	return out
}

// Parent returns the parent of an account ("" for a top-level account) and
// whether the account exists.
func (t *Tree) Parent(name string) (string, bool) {
	if t == nil {
		return "", false
	}
	i, ok := t.index[name]
	if !ok {
		return "", false
	}
	return t.nodes[i].Parent, true
}

// Children returns the names of the children of an account, ordered by name.
// Children("") returns the top-level accounts.
func (t *Tree) Children(name string) []string {
	if t == nil {
		return nil
	}
	var idx []int
	if name == "" {
		idx = t.roots
	} else if i, ok := t.index[name]; ok {
		idx = t.nodes[i].children
	}
	out := make([]string, 0, len(idx))
	for _, c := range idx {
		out = append(out, t.nodes[c].Name)
	}
	return out
}

// NormalizedShare returns the account's share of the whole cluster:
// the product, down the path from the top, of share / sum(sibling shares)
// (siblings include the account itself). It is 0 for an unknown account.
func (t *Tree) NormalizedShare(name string) float64 {
	if t == nil {
		return 0
	}
	i, ok := t.index[name]
	if !ok {
		return 0
	}
	return t.nodes[i].normShare
}

// DefaultShare is the share given to accounts added by WithMissing.
const DefaultShare = 1

// WithMissing returns a tree that also holds every named account that t
// lacks, as a top-level account with share DefaultShare. This implements the
// scheduler rule "a team missing from the team list gets share 1 and usage
// 0". Empty names and names already present are skipped; t itself is not
// modified. When nothing is missing, WithMissing returns t (for a nil t,
// an empty tree).
func (t *Tree) WithMissing(names ...string) *Tree {
	var accounts []Account
	if t != nil {
		accounts = t.Accounts()
	}
	have := make(map[string]bool, len(accounts)+len(names))
	for _, a := range accounts {
		have[a.Name] = true
	}
	added := false
	for _, n := range names {
		if n == "" || have[n] {
			continue
		}
		have[n] = true
		added = true
		accounts = append(accounts, Account{Name: n, Share: DefaultShare})
	}
	if !added && t != nil {
		return t
	}
	nt, err := NewTree(accounts)
	if err != nil {
		// Unreachable: t was valid and the additions are valid top-level
		// accounts. Keep the old tree rather than panic.
		return t
	}
	return nt
}
