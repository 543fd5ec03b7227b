package topology

import (
	"slices"

	"github.com/google/btree"

	"github.com/gpusched/gpusched/internal/changelog"
)

// Clone returns an independent copy of ix: changes to either leave the
// other as it was. What never changes after [NewIndex] (names, domains,
// node order, each node's GPUs, type, state and healthy GPUs) is shared;
// the held GPUs and the buckets are copied. The copy records no changes.
// O(N + B) for N nodes and B bucket counts and words.
func (ix *Index) Clone() *Index {
	c := *ix
	c.held = slices.Clone(ix.held)
	c.levels = make([]level, len(ix.levels))
	for i := range ix.levels {
		src, dst := &ix.levels[i], &c.levels[i]
		*dst = *src
		dst.free, dst.used = slices.Clone(src.free), slices.Clone(src.used)
		dst.counts = slices.Clone(src.counts)
		dst.words, dst.sum = slices.Clone(src.words), slices.Clone(src.sum)
		if src.trees != nil {
			dst.trees = make([]*btree.BTreeG[domainKey], len(src.trees))
			for k, t := range src.trees {
				dst.trees[k] = t.Clone()
			}
			dst.inTree = slices.Clone(src.inTree)
			dst.dirty = slices.Clone(src.dirty)
			dst.pending = slices.Clone(src.pending)
		}
	}
	c.heldLog = heldLog{}
	c.res = ix.res.clone()
	return &c
}

// note records a change of node n's held GPUs in the change log, which
// keeps up to four changes per node.
func (ix *Index) note(n NodeID) { changelog.Note(&ix.heldLog, n, 4*len(ix.nodes)) }
