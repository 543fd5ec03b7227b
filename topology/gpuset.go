package topology

import (
	"iter"
	"math/bits"
)

// GPUSet is a set of GPU indices of one node, as a bit mask: bit i is GPU i.
type GPUSet uint64

// SetOf returns the set of the given indices. Indices outside 0..63 are
// ignored.
func SetOf(gpus ...int) GPUSet {
	var s GPUSet
	for _, g := range gpus {
		if g >= 0 && g < MaxGPUsPerNode {
			s |= 1 << uint(g)
		}
	}
	return s
}

// FirstN returns the set {0, ..., n-1}.
func FirstN(n int) GPUSet {
	if n >= MaxGPUsPerNode {
		return ^GPUSet(0)
	}
	if n <= 0 {
		return 0
	}
	return GPUSet(1)<<uint(n) - 1
}

// Len returns the number of GPUs in s.
func (s GPUSet) Len() int { return bits.OnesCount64(uint64(s)) }

// Has reports whether GPU i is in s.
func (s GPUSet) Has(i int) bool { return i >= 0 && i < MaxGPUsPerNode && s&(1<<uint(i)) != 0 }

// Lowest returns the k lowest-numbered GPUs of s (all of s if it has fewer).
func (s GPUSet) Lowest(k int) GPUSet {
	var out GPUSet
	for ; k > 0 && s != 0; k-- {
		b := s & -s
		out |= b
		s &^= b
	}
	return out
}

// All yields the GPU indices in s, ascending, without allocating.
func (s GPUSet) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for s != 0 {
			if !yield(bits.TrailingZeros64(uint64(s))) {
				return
			}
			s &= s - 1
		}
	}
}

// Indices returns the GPU indices in s, ascending.
func (s GPUSet) Indices() []int {
	out := make([]int, 0, s.Len())
	for s != 0 {
		out = append(out, bits.TrailingZeros64(uint64(s)))
		s &= s - 1
	}
	return out
}
