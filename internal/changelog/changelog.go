// Package changelog records which nodes of a [topology.Index] had their
// held GPUs set, for the backfill profile: it keeps views of the index
// (cursors, whole-node windows) and must learn which nodes changed
// between its queries. The record is no part of the index's public API:
// the index embeds a [Log] under an unexported name, so none of its
// methods or fields show, and [Of] reaches it through an interface that
// only types embedding a Log satisfy.
//
//	ix, _ := topology.NewIndex(&c)
//	log := changelog.Of[topology.NodeID](ix)
//	changelog.Track(log, true)
//	ix.Take(n, 2)
//	nodes, all := changelog.Drain(log, nil) // [n], false
//
// A Log keeps at most four changes per node of the index; past that it
// overflows and reports that any node may have changed.
package changelog

// Log is the record of one index. Its zero value records nothing. All
// its operations are the functions of this package, so that a type that
// embeds it gains no exported method.
type Log[N ~int32] struct {
	on, overflow bool
	nodes        []N
}

// owner is a type that embeds a Log: the unexported method is promoted
// into its method set, and no other package can declare it.
type owner[N ~int32] interface{ changeLog() *Log[N] }

func (l *Log[N]) changeLog() *Log[N] { return l }

// Of returns the Log that o embeds. O(1).
func Of[N ~int32](o owner[N]) *Log[N] { return o.changeLog() }

// Track starts (on) or stops recording. Either way what was recorded is
// dropped.
func Track[N ~int32](l *Log[N], on bool) {
	l.on = on
	l.nodes, l.overflow = l.nodes[:0], false
}

// Note records that node n's held GPUs were set, when recording, unless
// the log holds limit changes already: then it overflows and drops them.
// O(1) amortized.
func Note[N ~int32](l *Log[N], n N, limit int) {
	if !l.on || l.overflow {
		return
	}
	if len(l.nodes) >= limit {
		l.overflow, l.nodes = true, l.nodes[:0]
		return
	}
	l.nodes = append(l.nodes, n)
}

// Drain appends to dst the nodes recorded since the last drain, in the
// order of their changes (a node may appear more than once, and setting
// a node to what it held counts), clears the record and returns dst. all
// reports that the log overflowed: then any node may have changed and
// dst gets none.
func Drain[N ~int32](l *Log[N], dst []N) (nodes []N, all bool) {
	all = l.overflow
	if !all {
		dst = append(dst, l.nodes...)
	}
	l.nodes, l.overflow = l.nodes[:0], false
	return dst, all
}
