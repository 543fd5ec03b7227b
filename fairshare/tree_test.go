package fairshare

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewTreeErrors(t *testing.T) {
	tests := []struct {
		name     string
		accounts []Account
		want     string
	}{
		{"empty name", []Account{{Name: "a", Share: 1}, {Name: "", Share: 1}}, `fairshare: accounts[1]: empty name`},
		{"duplicate", []Account{{Name: "a", Share: 1}, {Name: "b", Share: 1}, {Name: "a", Share: 2}}, `fairshare: account "a": duplicate name`},
		{"unknown parent", []Account{{Name: "a", Share: 1}, {Name: "b", Share: 1, Parent: "x"}}, `fairshare: account "b": unknown parent "x"`},
		{"negative share", []Account{{Name: "a", Share: -1}}, `fairshare: account "a": share must be >= 0, got -1`},
		{"NaN share", []Account{{Name: "a", Share: math.NaN()}}, `fairshare: account "a": share must be a finite number, got NaN`},
		{"infinite share", []Account{{Name: "a", Share: math.Inf(1)}}, `fairshare: account "a": share must be a finite number, got +Inf`},
		{"self cycle", []Account{{Name: "a", Share: 1, Parent: "a"}}, `fairshare: account "a": parent cycle a -> a`},
		{"two cycle", []Account{{Name: "b", Share: 1, Parent: "a"}, {Name: "a", Share: 1, Parent: "b"}}, `fairshare: account "a": parent cycle a -> b -> a`},
		{"cycle off a chain", []Account{
			{Name: "z", Share: 1, Parent: "c"}, {Name: "c", Share: 1, Parent: "d"},
			{Name: "d", Share: 1, Parent: "e"}, {Name: "e", Share: 1, Parent: "c"},
		}, `fairshare: account "c": parent cycle c -> d -> e -> c`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := NewTree(tc.accounts)
			require.Nil(t, tree)
			require.EqualError(t, err, tc.want)
			var ae *AccountError
			require.ErrorAs(t, err, &ae)
		})
	}
}

func TestNewTreeOrderAndShares(t *testing.T) {
	tree, err := NewTree([]Account{
		{Name: "ops", Share: 40},
		{Name: "web", Share: 1, Parent: "eng"},
		{Name: "eng", Share: 60},
		{Name: "ml", Share: 3, Parent: "eng"},
	})
	require.NoError(t, err)
	require.Equal(t, 4, tree.Len())
	require.Equal(t, []Account{
		{Name: "eng", Share: 60},
		{Name: "ml", Share: 3, Parent: "eng"},
		{Name: "web", Share: 1, Parent: "eng"},
		{Name: "ops", Share: 40},
	}, tree.Accounts())
	require.Equal(t, []string{"eng", "ops"}, tree.Children(""))
	require.Equal(t, []string{"ml", "web"}, tree.Children("eng"))
	require.Empty(t, tree.Children("ops"))
	require.Empty(t, tree.Children("nope"))
	p, ok := tree.Parent("ml")
	require.True(t, ok)
	require.Equal(t, "eng", p)
	_, ok = tree.Parent("nope")
	require.False(t, ok)

	// Normalized shares: eng 60/100, ops 40/100, ml 0.6·3/4, web 0.6·1/4.
	for name, want := range map[string]float64{"eng": 0.6, "ops": 0.4, "ml": 0.45, "web": 0.15, "nope": 0} {
		require.InDelta(t, want, tree.NormalizedShare(name), 1e-15, name)
	}
}

func TestZeroShares(t *testing.T) {
	tree, err := NewTree([]Account{{Name: "a"}, {Name: "b"}, {Name: "c", Parent: "a", Share: 5}})
	require.NoError(t, err)
	require.Zero(t, tree.NormalizedShare("a"))
	require.Zero(t, tree.NormalizedShare("c"))
}

func TestEmptyAndNilTree(t *testing.T) {
	tree, err := NewTree(nil)
	require.NoError(t, err)
	require.Zero(t, tree.Len())
	var nilTree *Tree
	require.Zero(t, nilTree.Len())
	require.False(t, nilTree.Has("a"))
	require.Nil(t, nilTree.Accounts())
	require.Zero(t, nilTree.NormalizedShare("a"))
	require.Empty(t, nilTree.Factors(map[string]float64{"a": 1}).Rows())
	require.Equal(t, []string{"a"}, nilTree.WithMissing("a").Children(""))
}

func TestWithMissing(t *testing.T) {
	tree, err := NewTree([]Account{{Name: "a", Share: 3}, {Name: "a1", Share: 1, Parent: "a"}})
	require.NoError(t, err)
	require.Same(t, tree, tree.WithMissing("a", "a1", ""))

	more := tree.WithMissing("z", "b", "z")
	require.Equal(t, []Account{
		{Name: "a", Share: 3}, {Name: "a1", Share: 1, Parent: "a"},
		{Name: "b", Share: DefaultShare}, {Name: "z", Share: DefaultShare},
	}, more.Accounts())
	require.InDelta(t, 0.6, more.NormalizedShare("a"), 1e-15)
	require.InDelta(t, 0.2, more.NormalizedShare("b"), 1e-15)
	require.Equal(t, 2, tree.Len(), "the original tree is not modified")
}
