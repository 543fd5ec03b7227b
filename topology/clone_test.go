package topology_test

import (
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/changelog"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// TestCloneIsIndependent changes an index, clones it, and then changes
// the two differently: each must answer every query as a brute-force scan
// of its own history does, so neither sees the other's changes.
func TestCloneIsIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := gen.Cluster(t)
		ix, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(&c)
		for range rapid.IntRange(0, 20).Draw(t, "before") {
			m.apply(t, ix, drawOp(t, &c))
		}
		// Query first, so that lazily kept orders are shared state at the
		// moment of cloning.
		m.check(t, ix)
		cl := ix.Clone()
		mc := &model{c: m.c, healthy: m.healthy, held: maps.Clone(m.held)}
		for range rapid.IntRange(1, 30).Draw(t, "after") {
			if rapid.Bool().Draw(t, "onClone") {
				mc.apply(t, cl, drawOp(t, &c))
			} else {
				m.apply(t, ix, drawOp(t, &c))
			}
		}
		m.check(t, ix)
		mc.check(t, cl)
	})
}

// trackChanges starts or stops ix's change log, as the backfill profile
// does.
func trackChanges(ix *topology.Index, on bool) {
	changelog.Track(changelog.Of[topology.NodeID](ix), on)
}

// drainChanges drains ix's change log, as the backfill profile does.
func drainChanges(ix *topology.Index) ([]topology.NodeID, bool) {
	return changelog.Drain(changelog.Of[topology.NodeID](ix), nil)
}

// TestChangeLog checks that a tracking index lists every node whose
// held GPUs were set, and nothing once drained or when not tracking.
func TestChangeLog(t *testing.T) {
	c := topology.Uniform(4, 8, "H100")
	ix, err := topology.NewIndex(&c)
	if err != nil {
		t.Fatal(err)
	}
	trackChanges(ix, true)
	n1, _ := ix.Lookup("n01")
	n3, _ := ix.Lookup("n03")
	ix.Take(n1, 2)
	ix.Release(n3, topology.SetOf(0))
	got, all := drainChanges(ix)
	if all || !slices.Equal(got, []topology.NodeID{n1, n3}) {
		t.Fatalf("drainChanges = %v, %v; want [%d %d], false", got, all, n1, n3)
	}
	if got, all := drainChanges(ix); all || len(got) != 0 {
		t.Fatalf("second drainChanges = %v, %v; want none", got, all)
	}
	for range 17 { // more than four changes per node
		ix.Take(n1, 1)
		ix.Release(n1, topology.FirstN(8))
	}
	if _, all := drainChanges(ix); !all {
		t.Fatal("drainChanges after 34 changes on 4 nodes: want all")
	}
	trackChanges(ix, false)
	ix.Take(n3, 1)
	if got, all := drainChanges(ix); all || len(got) != 0 {
		t.Fatalf("drainChanges when not tracking = %v, %v; want none", got, all)
	}
	if cl := ix.Clone(); cl.Free(n1) != ix.Free(n1) || cl.Free(n3) != ix.Free(n3) {
		t.Fatal("clone differs from its original")
	}
}
