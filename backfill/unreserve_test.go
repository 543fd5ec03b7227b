package backfill_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// TestUnreserveAsIfNeverMade: a profile with reservations taken back
// answers every query as a profile that never had them, queries made
// in between included (they build the cursors, skylines, whole-node
// windows and remembered answers that Unreserve must bring up to date).
func TestUnreserveAsIfNeverMade(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := rapid.IntRange(1, 5).Draw(t, "nodes")
		g := rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")
		var c topology.Cluster
		for i := range nodes {
			c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: g})
		}
		type release struct {
			n   topology.NodeID
			set topology.GPUSet
			at  time.Duration
		}
		var rels []release
		for i := range nodes {
			if k := rapid.IntRange(0, g).Draw(t, "held"); k > 0 {
				rels = append(rels, release{topology.NodeID(i), topology.FirstN(k), time.Duration(rapid.IntRange(1, 6).Draw(t, "rel")) * time.Hour})
			}
		}
		build := func() (*backfill.Profile, *topology.Index) {
			ix, err := topology.NewIndex(&c)
			require.NoError(t, err)
			for _, r := range rels {
				require.NoError(t, ix.TakeSet(r.n, r.set))
			}
			p := backfill.NewProfile(ix)
			for _, r := range rels {
				p.AddRelease(r.n, r.set, r.at)
			}
			return p, ix
		}
		type res struct {
			pl       gang.Placement
			start, d time.Duration
			gone     bool
		}
		var made []*res
		p, _ := build()
		req := func(t *rapid.T) (gang.Request, time.Duration) {
			gpm := rapid.IntRange(1, g).Draw(t, "gpm")
			r := gang.NewRequest(rapid.IntRange(1, nodes).Draw(t, "members"), gpm)
			return r, time.Duration(rapid.IntRange(1, 8).Draw(t, "d")) * 30 * time.Minute
		}
		steps := rapid.IntRange(1, 12).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 3: // a query, for the profile to remember answers
				r, d := req(t)
				p.Earliest(r, d, nil, 0)
			case 0, 1: // reserve the earliest start of a request
				r, d := req(t)
				st, ok := p.Earliest(r, d, nil, 0)
				if ok && st.At < backfill.Forever {
					p.Reserve(st.Placement, st.At, d)
					made = append(made, &res{pl: st.Placement, start: st.At, d: d})
				}
			case 2: // take one back (and maybe put it back)
				live := []*res{}
				for _, m := range made {
					if !m.gone {
						live = append(live, m)
					}
				}
				if len(live) > 0 {
					m := rapid.SampledFrom(live).Draw(t, "unreserve")
					mark := p.Unreserve(m.pl, m.start, m.d)
					m.gone = true
					// Sometimes search, then put it back as it was.
					if rapid.Bool().Draw(t, "restore") {
						r, d := req(t)
						p.Earliest(r, d, nil, 0)
						p.Restore(m.pl, m.start, m.d, mark)
						m.gone = false
					}
				}
			}
			require.NoError(t, backfill.CheckInvariants(p))
		}
		q, _ := build()
		for _, m := range made {
			if !m.gone {
				require.True(t, q.Usable(m.pl, m.start, m.d))
				q.Reserve(m.pl, m.start, m.d)
			}
		}
		for range 6 {
			r, d := req(t)
			a, okA := p.Earliest(r, d, nil, 0)
			b, okB := q.Earliest(r, d, nil, 0)
			require.Equal(t, okB, okA)
			require.Equal(t, b.At, a.At, "earliest start of %d×%d for %v", r.Members, r.GPUsPerMember, d)
			at := time.Duration(rapid.IntRange(0, 10).Draw(t, "at")) * 30 * time.Minute
			n := topology.NodeID(rapid.IntRange(0, nodes-1).Draw(t, "n"))
			sl := gang.Placement{Slots: []gang.Slot{{Node: n, GPUs: topology.FirstN(rapid.IntRange(1, g).Draw(t, "k")), Members: 1}}}
			require.Equal(t, q.Usable(sl, at, d), p.Usable(sl, at, d))
			require.Equal(t, q.Reserved(n, at, at+d), p.Reserved(n, at, at+d))
			require.Equal(t, q.FitsNow(r, d, nil), p.FitsNow(r, d, nil))
		}
	})
}

// TestUnreserveRaisesReservedAgain: two nodes of two GPUs, GPU 0 of each
// free now, GPU 1 of n0 held until 1h (of n1 for good); n0 reserved from
// 1h on (two reservations joined into one). A gang member of two GPUs
// fits neither node now, and the release at 1h frees nothing (its GPU is
// reserved again at once): the sweep remembers so for its run of
// timeline entries. Taking back the reservation of [1h, 2h) leaves n0
// free over it: a run of 30m fits at 1h, and the sweep must not skip the
// release on the stale bound of its run.
func TestUnreserveRaisesReservedAgain(t *testing.T) {
	c := topology.Uniform(2, 2, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	require.NoError(t, ix.TakeSet(0, topology.SetOf(1)))
	require.NoError(t, ix.TakeSet(1, topology.SetOf(1)))
	p := backfill.NewProfile(ix)
	p.AddRelease(0, topology.SetOf(1), time.Hour)
	pl := gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.FirstN(2), Members: 1}}}
	p.Reserve(pl, time.Hour, time.Hour)
	p.Reserve(pl, 2*time.Hour, backfill.Forever)
	r := gang.NewRequest(1, 2)
	_, ok := p.Earliest(r, 30*time.Minute, nil, 0)
	require.False(t, ok, "n0 is reserved for good from 1h, n1 has one GPU")
	p.Unreserve(pl, time.Hour, time.Hour)
	st, ok := p.Earliest(r, 30*time.Minute, nil, 0)
	require.True(t, ok)
	require.Equal(t, time.Hour, st.At)
}
