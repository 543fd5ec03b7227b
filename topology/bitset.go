package topology

import "math/bits"

// The buckets of an Index are two-level bitsets over the local indices
// 0..n-1 of the nodes of one domain, stored in two shared slices: words,
// one bit per index, and sum, one summary bit per non-zero word. A bitset
// is named by the offsets of its first word and first summary word, so the
// lowest member is found with two TrailingZeros64 after skipping zero
// summary words, at most one per 4096 indices.

// bitsetWords returns the number of words and summary words of a bitset
// over n indices (at least one of each).
func bitsetWords(n int) (words, summary int) {
	words = max(1, (n+63)/64)
	return words, (words + 63) / 64
}

// bitAdd puts index i into the bitset at words[w0:] and sum[s0:].
func bitAdd(words, sum []uint64, w0, s0, i int32) {
	w := i >> 6
	words[w0+w] |= 1 << uint(i&63)
	sum[s0+w>>6] |= 1 << uint(w&63)
}

// bitRemove takes index i out of the bitset at words[w0:] and sum[s0:].
func bitRemove(words, sum []uint64, w0, s0, i int32) {
	w := i >> 6
	x := words[w0+w] &^ (1 << uint(i&63))
	words[w0+w] = x
	if x == 0 {
		sum[s0+w>>6] &^= 1 << uint(w&63)
	}
}

// bitFirst returns the lowest index in the bitset at words[w0:] and
// sum[s0:s0+ns], or -1 when it is empty.
func bitFirst(words, sum []uint64, w0, s0, ns int32) int32 {
	for si := range ns {
		if s := sum[s0+si]; s != 0 {
			w := si<<6 | int32(bits.TrailingZeros64(s))
			return w<<6 | int32(bits.TrailingZeros64(words[w0+w]))
		}
	}
	return -1
}

// bitAll yields the indices of the bitset at words[w0:] and
// sum[s0:s0+ns] in ascending order until yield returns false. It reads
// each word when it reaches it.
func bitAll(words, sum []uint64, w0, s0, ns int32, yield func(int32) bool) {
	for si := range ns {
		for s := sum[s0+si]; s != 0; s &= s - 1 {
			w := si<<6 | int32(bits.TrailingZeros64(s))
			for x := words[w0+w]; x != 0; x &= x - 1 {
				if !yield(w<<6 | int32(bits.TrailingZeros64(x))) {
					return
				}
			}
		}
	}
}
