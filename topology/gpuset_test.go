package topology_test

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/topology"
)

// TestGPUSetMatchesAList checks every GPUSet operation against a sorted
// list of GPU indices, over all 64 places and GPU 63 most of all (the
// index and the placer build on these, and their own properties compare
// against models that use them too): SetOf, Has, Len, Indices, All, Lowest
// and FirstN, for n from below 0 to past 64; SetOf ignores indices out
// of range.
func TestGPUSetMatchesAList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var list []int
		for g := range topology.MaxGPUsPerNode {
			odds := 4
			if g == topology.MaxGPUsPerNode-1 {
				odds = 2
			}
			if rapid.IntRange(0, odds-1).Draw(t, "in") == 0 {
				list = append(list, g)
			}
		}
		s := topology.SetOf(list...)
		if topology.SetOf(append([]int{-1, topology.MaxGPUsPerNode}, list...)...) != s {
			t.Fatalf("SetOf does not ignore indices outside 0..%d", topology.MaxGPUsPerNode-1)
		}
		for g := -1; g <= topology.MaxGPUsPerNode; g++ {
			if s.Has(g) != slices.Contains(list, g) {
				t.Fatalf("SetOf(%v).Has(%d) = %v", list, g, s.Has(g))
			}
		}
		if s.Len() != len(list) || !slices.Equal(s.Indices(), append([]int{}, list...)) {
			t.Fatalf("SetOf(%v): Len %d, Indices %v", list, s.Len(), s.Indices())
		}
		if all := slices.Collect(s.All()); !slices.Equal(all, s.Indices()) {
			t.Fatalf("SetOf(%v).All() yields %v", list, all)
		}
		if len(list) > 1 {
			var head []int
			for g := range s.All() { // stopping early stops it
				if head = append(head, g); len(head) == 1 {
					break
				}
			}
			if !slices.Equal(head, list[:1]) {
				t.Fatalf("SetOf(%v).All() cut after one yields %v", list, head)
			}
		}
		k := rapid.IntRange(0, topology.MaxGPUsPerNode+1).Draw(t, "k")
		if got, want := s.Lowest(k), topology.SetOf(list[:min(k, len(list))]...); got != want {
			t.Fatalf("SetOf(%v).Lowest(%d) = %v, want %v", list, k, got.Indices(), want.Indices())
		}
		n := rapid.IntRange(-1, topology.MaxGPUsPerNode+1).Draw(t, "n")
		var first []int
		for g := range min(max(n, 0), topology.MaxGPUsPerNode) {
			first = append(first, g)
		}
		if got := topology.FirstN(n).Indices(); !slices.Equal(got, first) {
			t.Fatalf("FirstN(%d) = %v, want %v", n, got, first)
		}
	})
}
