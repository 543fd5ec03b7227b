package topology

import (
	"slices"

	"github.com/google/btree"
)

// Clone returns an independent copy of ix: changes to either leave the
// other as it was. What never changes after [NewIndex] (names, domains,
// node order, each node's GPUs, type, state and healthy GPUs) is shared;
// the held GPUs and the buckets are copied. The copy records no changes
// (see [Index.TrackChanges]). O(N + B) for N nodes and B bucket words.
func (ix *Index) Clone() *Index {
	c := *ix
	c.held = slices.Clone(ix.held)
	c.lv = make([]level, len(ix.lv))
	for i := range ix.lv {
		src, dst := &ix.lv[i], &c.lv[i]
		*dst = *src
		dst.free, dst.used = slices.Clone(src.free), slices.Clone(src.used)
		dst.bk = slices.Clone(src.bk)
		dst.words, dst.sum = slices.Clone(src.words), slices.Clone(src.sum)
		if src.trees != nil {
			dst.trees = make([]*btree.BTreeG[dkey], len(src.trees))
			for k, t := range src.trees {
				dst.trees[k] = t.Clone()
			}
			dst.inTree = slices.Clone(src.inTree)
			dst.dirty = slices.Clone(src.dirty)
			dst.pending = slices.Clone(src.pending)
		}
	}
	c.track, c.changed, c.overflow = false, nil, false
	return &c
}

// TrackChanges starts (on) or stops recording which nodes' held GPUs are
// set, for a caller that keeps views derived from the index and must
// bring them up to date. Stopping drops what was recorded.
func (ix *Index) TrackChanges(on bool) {
	ix.track = on
	ix.changed, ix.overflow = ix.changed[:0], false
}

// DrainChanges appends to dst the nodes whose held GPUs were set since
// the last drain (a node may appear more than once, and setting a node to
// what it held counts), clears the record and returns dst. all reports
// that more changes happened than the index keeps (four per node): then
// any node may have changed and dst holds none.
func (ix *Index) DrainChanges(dst []NodeID) (nodes []NodeID, all bool) {
	all = ix.overflow
	if !all {
		dst = append(dst, ix.changed...)
	}
	ix.changed, ix.overflow = ix.changed[:0], false
	return dst, all
}

// note records a change of node n when tracking.
func (ix *Index) note(n NodeID) {
	if !ix.track || ix.overflow {
		return
	}
	if len(ix.changed) >= 4*len(ix.nodes) {
		ix.overflow = true
		ix.changed = ix.changed[:0]
		return
	}
	ix.changed = append(ix.changed, n)
}
