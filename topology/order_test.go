package topology_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// classesOf lists AnyType and, when types differ, the class of each type.
func classesOf(ix *topology.Index) []topology.Class {
	out := []topology.Class{topology.AnyType}
	if ix.NumTypes() > 1 {
		for i := range ix.NumTypes() {
			c, _ := ix.TypeClass(i)
			out = append(out, c)
		}
	}
	return out
}

// checkOrder compares First, Bucket, Fullest and Emptiest of ix with a
// scan of the model: ties go to the lowest NodeID.
func (m *model) checkOrder(t *rapid.T, ix *topology.Index) {
	G := ix.MaxGPUs()
	for level := topology.ClusterLevel; level < ix.NumLevels(); level++ {
		for _, c := range classesOf(ix) {
			for d := range topology.DomainID(ix.NumDomains(level)) {
				where := fmt.Sprintf("level %d domain %q class %d", level, ix.DomainName(level, d), c)
				byFree := make([][]topology.NodeID, G+1)
				for _, n := range m.in(ix, level, d, c) {
					f := m.free(n).Len()
					byFree[f] = append(byFree[f], mustLookup(t, ix, n.Name))
				}
				for f := range byFree {
					slices.Sort(byFree[f])
				}
				for f := -1; f <= G+1; f++ {
					var want []topology.NodeID
					if f >= 0 && f <= G {
						want = byFree[f]
					}
					got := slices.Collect(ix.Bucket(level, d, c, f))
					if !slices.Equal(got, want) {
						t.Fatalf("%s: Bucket(%d) = %v, want %v", where, f, got, want)
					}
					for n := range ix.Bucket(level, d, c, f) {
						if n != want[0] {
							t.Fatalf("%s: Bucket(%d) stopped early yields %d, want %d", where, f, n, want[0])
						}
						break
					}
					n, ok := ix.First(level, d, c, f)
					if ok != (len(want) > 0) || ok && n != want[0] {
						t.Fatalf("%s: First(%d) = %d (ok %v), want %v", where, f, n, ok, want)
					}
				}
				for g := 0; g <= G+1; g++ {
					lo, hi := topology.NodeID(-1), topology.NodeID(-1)
					for f := max(g, 1); f <= G; f++ {
						if len(byFree[f]) > 0 {
							lo = byFree[f][0]
							break
						}
					}
					for f := G; f >= max(g, 1); f-- {
						if len(byFree[f]) > 0 {
							hi = byFree[f][0]
							break
						}
					}
					n, ok := ix.Fullest(level, d, c, g)
					if ok != (lo >= 0) || ok && n != lo {
						t.Fatalf("%s: Fullest(%d) = %d (ok %v), want %d", where, g, n, ok, lo)
					}
					n, ok = ix.Emptiest(level, d, c, g)
					if ok != (hi >= 0) || ok && n != hi {
						t.Fatalf("%s: Emptiest(%d) = %d (ok %v), want %d", where, g, n, ok, hi)
					}
				}
			}
		}
	}
}

// TestOrderLowestID checks after random changes that every bucket answers
// its lowest-ID node first and yields its nodes in ascending ID order.
func TestOrderLowestID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := gen.Cluster(t)
		ix, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(&c)
		m.checkOrder(t, ix)
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			m.apply(t, ix, drawOp(t, &c))
			if rapid.IntRange(0, 4).Draw(t, "checkNow") == 0 {
				m.checkOrder(t, ix)
			}
		}
		m.checkOrder(t, ix)
	})
}

// answers records every First, Fullest and Emptiest answer and every
// bucket of ix.
func answers(ix *topology.Index) []string {
	var out []string
	G := ix.MaxGPUs()
	for level := topology.ClusterLevel; level < ix.NumLevels(); level++ {
		for _, c := range classesOf(ix) {
			for d := range topology.DomainID(ix.NumDomains(level)) {
				for f := 0; f <= G; f++ {
					n, ok := ix.First(level, d, c, f)
					a, aok := ix.Fullest(level, d, c, f)
					e, eok := ix.Emptiest(level, d, c, f)
					out = append(out, fmt.Sprint(level, d, c, f, n, ok, a, aok, e, eok, slices.Collect(ix.Bucket(level, d, c, f))))
				}
			}
		}
	}
	return out
}

// TestOrderTwoHistories takes the same GPUs of two nodes in either order:
// the fullest node with 4 free is the lower-named one both times.
func TestOrderTwoHistories(t *testing.T) {
	for _, order := range [][]string{{"a", "b"}, {"b", "a"}} {
		ix, err := topology.NewIndex(&topology.Cluster{Nodes: []topology.Node{{Name: "b", GPUs: 8}, {Name: "a", GPUs: 8}}})
		require.NoError(t, err)
		for _, name := range order {
			require.NoError(t, ix.TakeSet(mustLookup(t, ix, name), topology.FirstN(4)))
		}
		n, ok := ix.First(topology.ClusterLevel, 0, topology.AnyType, 4)
		require.True(t, ok)
		require.Equal(t, "a", ix.Name(n), "order %v", order)
		n, _ = ix.Fullest(topology.ClusterLevel, 0, topology.AnyType, 1)
		require.Equal(t, "a", ix.Name(n), "order %v", order)
		n, _ = ix.Emptiest(topology.ClusterLevel, 0, topology.AnyType, 1)
		require.Equal(t, "a", ix.Name(n), "order %v", order)
	}
}

// TestOrderHistoryIndependent reaches one state by random changes and
// again by holding the final GPUs node by node in a random order, after
// some changes that are undone: both indexes answer alike.
func TestOrderHistoryIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := gen.Cluster(t)
		ix, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		ix2, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(&c)
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			m.apply(t, ix, drawOp(t, &c))
		}
		// Noise on the second index, undone below.
		noise := map[topology.NodeID]topology.GPUSet{}
		for range rapid.IntRange(0, 20).Draw(t, "noise") {
			n := topology.NodeID(rapid.IntRange(0, ix2.NumNodes()-1).Draw(t, "noiseNode"))
			if s, ok := ix2.Take(n, rapid.IntRange(1, 8).Draw(t, "noiseK")); ok {
				noise[n] |= s
			}
		}
		for _, name := range rapid.Permutation(slices.Collect(func(yield func(string) bool) {
			for _, n := range c.Nodes {
				if !yield(n.Name) {
					return
				}
			}
		})).Draw(t, "order") {
			n := mustLookup(t, ix2, name)
			ix2.Release(n, noise[n])
			if err := ix2.TakeSet(n, ix.Held(n)); err != nil {
				t.Fatal(err)
			}
		}
		if a, b := answers(ix), answers(ix2); !slices.Equal(a, b) {
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("answers differ: %s, %s after another history", a[i], b[i])
				}
			}
		}
	})
}
