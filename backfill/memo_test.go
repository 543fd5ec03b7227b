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

// TestRememberedAnswersAgreeWithOracle: long call sequences over a few
// request shapes, so that Earliest answers from what it remembers, with
// releases moved earlier, jobs ending early and GPUs released twice now
// and then (the profile loosens), still agree with the oracle. Shapes
// are often variants of one another (another member size, GPU type or
// required level), so that answers remembered for one shape are offered
// as bounds to the others.
func TestRememberedAnswersAgreeWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix, p, o := drawWorld(t)
		shapes := make([]gang.Request, rapid.IntRange(1, 4).Draw(t, "shapes"))
		for i := range shapes {
			shapes[i] = drawRequest(t, ix)
			if i > 0 && rapid.Bool().Draw(t, "related") {
				shapes[i] = drawVariant(t, ix, shapes[0])
			}
		}
		for range rapid.IntRange(1, 40).Draw(t, "calls") {
			r := rapid.SampledFrom(shapes).Draw(t, "shape")
			r.Members = max(1, r.Members+rapid.IntRange(-2, 2).Draw(t, "dm"))
			d := time.Duration(rapid.IntRange(1, 4).Draw(t, "limit")) * time.Hour
			if rapid.IntRange(0, 5).Draw(t, "forever") == 0 {
				d = backfill.Forever
			}
			switch rapid.IntRange(0, 7).Draw(t, "op") {
			case 0:
				o.placeNow(t, p, r, d)
				continue
			case 1:
				// Move a release earlier: the profile loosens.
				if len(o.releases) == 0 {
					continue
				}
				e := rapid.SampledFrom(o.releases).Draw(t, "moved")
				if e.set == 0 {
					continue
				}
				// Earlier than any release of those GPUs: a release may not
				// move past a reservation of them.
				first := e.start
				for _, f := range o.releases {
					if f.n == e.n && f.set&e.set != 0 {
						first = min(first, f.start)
					}
				}
				at := time.Duration(rapid.Int64Range(-1, int64(first)).Draw(t, "movedTo"))
				p.MoveRelease(e.n, e.set, at)
				o.moveRelease(e.n, e.set, at)
				continue
			case 2:
				// A job ends early: the host frees GPUs it held, whatever
				// their releases and the reservations after them said.
				n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "endedOn"))
				s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "ended"))
				ix.Release(n, s)
				o.freeNow[n] |= s
				continue
			case 3:
				// GPUs already released are released again at another
				// time: the first of the two frees them.
				n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "againOn"))
				s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "again"))
				at := time.Duration(rapid.IntRange(1, 24).Draw(t, "againAt")) * 15 * time.Minute
				p.AddRelease(n, s, at)
				if s != 0 && ix.State(n) == topology.Ready {
					o.releases = append(o.releases, event{n: n, set: s, start: at, end: at})
				}
				continue
			}
			o.query(t, p, r, d)
		}
	})
}

// drawVariant returns r with one of its GPUs per member, GPU type or
// required level drawn anew.
func drawVariant(t *rapid.T, ix *topology.Index, r gang.Request) gang.Request {
	switch rapid.IntRange(0, 2).Draw(t, "vary") {
	case 0:
		r.GPUsPerMember = min(rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "variantGPUs"), ix.MaxGPUs())
	case 1:
		r.Class = topology.AnyType
		if rapid.Bool().Draw(t, "variantTyped") {
			r.Class, _ = ix.Class(rapid.SampledFrom(ix.Types()).Draw(t, "variantType"))
		}
	default:
		r.Required, r.Preferred = gang.NoLevel, gang.NoLevel
		if nl := ix.NumLevels(); nl > 0 && rapid.Bool().Draw(t, "variantTopo") {
			r.Required = rapid.IntRange(0, nl-1).Draw(t, "variantRequired")
		}
	}
	return r
}

// TestBoundsOnlyFromWeakerShapes: a gang required in one leaf waits for
// GPUs that the same gang, free to span leaves, does not need. Asked
// first, its answer must not bound the unrequired gang's, nor may a
// typed gang's bound an untyped one; asked again after the weaker
// shapes, the stronger ones still get their own answers.
func TestBoundsOnlyFromWeakerShapes(t *testing.T) {
	// Two leaves of two 8-GPU nodes: n0 and n2 are free now; n1 and n3
	// (the B200 nodes) are held until 1h.
	c := topology.Cluster{Levels: []string{"leaf"}}
	for i, typ := range []string{"H100", "B200", "H100", "B200"} {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8, GPUType: typ,
			Domains: map[string]string{"leaf": fmt.Sprintf("l%d", i/2)}})
	}
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	for _, n := range []topology.NodeID{1, 3} {
		require.NoError(t, ix.TakeSet(n, topology.FirstN(8)))
		p.AddRelease(n, topology.FirstN(8), time.Hour)
	}
	b200, _ := ix.Class("B200")
	inLeaf := gang.NewRequest(2, 8)
	inLeaf.Required = 0
	typed := gang.NewRequest(2, 8)
	typed.Class = b200
	spanning := gang.NewRequest(2, 8)
	small := gang.NewRequest(1, 4)
	for _, q := range []struct {
		name string
		r    gang.Request
		at   time.Duration
	}{
		{"required in one leaf", inLeaf, time.Hour},
		{"of one GPU type", typed, time.Hour},
		{"spanning leaves, any type", spanning, 0},
		{"one member of 4 GPUs", small, 0},
		{"required in one leaf, again", inLeaf, time.Hour},
		{"of one GPU type, again", typed, time.Hour},
	} {
		st, ok := p.Earliest(q.r, 2*time.Hour, nil, 0)
		require.True(t, ok, q.name)
		require.Equal(t, q.at, st.At, q.name)
	}
}

// TestMovedReleaseFillsAGapExactly: a remembered answer survives a
// release moved earlier, and the query after it finds the start that
// the move opened, even when the run ends exactly where a later
// reservation of the freed GPU begins.
func TestMovedReleaseFillsAGapExactly(t *testing.T) {
	_, p := oneNode(t, 1, topology.SetOf(0), 5*time.Hour)
	r := gang.NewRequest(1, 1)
	st, ok := p.Earliest(r, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, 5*time.Hour, st.At, "remembered: not before the release")
	p.MoveRelease(0, topology.SetOf(0), time.Hour)
	p.Reserve(gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(0), Members: 1}}}, 2*time.Hour, time.Hour)
	st, ok = p.Earliest(r, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, time.Hour, st.At, "[1h, 2h) runs before the reservation of [2h, 3h)")
	st, ok = p.Earliest(r, time.Hour+time.Nanosecond, nil, 0)
	require.True(t, ok)
	require.Equal(t, 3*time.Hour, st.At, "a nanosecond longer, it waits for the reservation's end")
}

// TestLoosenedWindowsAreBounded: a profile keeps at most MaxLoose
// loosened windows; past them it forgets what it remembered, and answers
// stay right.
func TestLoosenedWindowsAreBounded(t *testing.T) {
	_, p := oneNode(t, 1, topology.SetOf(0), 10*time.Hour)
	r := gang.NewRequest(1, 1)
	at := 10 * time.Hour
	for i := range backfill.MaxLoose + 10 {
		st, ok := p.Earliest(r, time.Minute, nil, 0)
		require.True(t, ok)
		require.Equal(t, at, st.At, "move %d", i)
		require.LessOrEqual(t, backfill.LooseWindows(p), backfill.MaxLoose)
		at -= time.Second
		p.MoveRelease(0, topology.SetOf(0), at)
	}
}

// twoReleases is a profile over one node of two GPUs, both held, GPU 0
// released at 5h and GPU 1 at 2h.
func twoReleases(t *testing.T) *backfill.Profile {
	c := topology.Uniform(1, 2, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	require.NoError(t, ix.TakeSet(0, topology.FirstN(2)))
	p.AddRelease(0, topology.SetOf(0), 5*time.Hour)
	p.AddRelease(0, topology.SetOf(1), 2*time.Hour)
	return p
}

// TestMoveNeverReleased: a GPU held by a job without a time limit is
// never free, and that is remembered; evicting the job frees it at the
// checkpoint grace, which the next query must see.
func TestMoveNeverReleased(t *testing.T) {
	c := topology.Uniform(1, 1, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	p := backfill.NewProfile(ix)
	require.NoError(t, ix.TakeSet(0, topology.SetOf(0)))
	r := gang.NewRequest(1, 1)
	_, ok := p.Earliest(r, time.Hour, nil, 0)
	require.False(t, ok, "held for ever")
	p.MoveRelease(0, topology.SetOf(0), time.Hour)
	st, ok := p.Earliest(r, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, time.Hour, st.At)
}

// TestMoveMixedReleases: one move of GPUs released at different times
// loosens the starts up to the later release, and the answer may lie
// between the two.
func TestMoveMixedReleases(t *testing.T) {
	p := twoReleases(t)
	r := gang.NewRequest(2, 1)
	st, _ := p.Earliest(r, time.Hour, nil, 0)
	require.Equal(t, 5*time.Hour, st.At)
	p.MoveRelease(0, topology.FirstN(2), time.Hour)
	p.Reserve(gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.FirstN(2), Members: 2}}}, time.Hour, 90*time.Minute)
	st, ok := p.Earliest(r, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, 150*time.Minute, st.At, "after the reservation, before the old 5h release")
}

// TestBoundedMissAfterMove: a miss of a bounded query after a move is
// remembered as a bound just past its horizon, not as the older bound.
func TestBoundedMissAfterMove(t *testing.T) {
	p := twoReleases(t)
	r := gang.NewRequest(2, 1)
	st, _ := p.Earliest(r, time.Hour, nil, 0)
	require.Equal(t, 5*time.Hour, st.At)
	p.MoveRelease(0, topology.SetOf(0), 15*time.Minute)
	_, ok := p.EarliestBy(r, time.Hour, nil, 0, 30*time.Minute)
	require.False(t, ok)
	st, ok = p.Earliest(r, time.Hour, nil, 0)
	require.True(t, ok)
	require.Equal(t, 2*time.Hour, st.At)
}

// TestLaterQueryAfterMove: an answer searched from after a loosened
// window's start is not the answer from 0, so it must not become a
// bound (here it would hide the start the move opened).
func TestLaterQueryAfterMove(t *testing.T) {
	_, p := oneNode(t, 2, topology.FirstN(2), 5*time.Hour)
	st, _ := p.Earliest(gang.NewRequest(1, 1), time.Hour, nil, 0)
	require.Equal(t, 5*time.Hour, st.At)
	p.MoveRelease(0, topology.FirstN(2), time.Hour)
	st, _ = p.Earliest(gang.NewRequest(2, 1), time.Hour, nil, 2*time.Hour)
	require.Equal(t, 2*time.Hour, st.At)
	st, _ = p.Earliest(gang.NewRequest(2, 1), time.Hour, nil, 0)
	require.Equal(t, time.Hour, st.At)
}

// TestFilledWindowIsNotSearched: once reservations fill the span that a
// moved release opened, queries no longer sweep it, though it was
// searched before they were made.
func TestFilledWindowIsNotSearched(t *testing.T) {
	_, p := oneNode(t, 1, topology.SetOf(0), 5*time.Hour)
	r := gang.NewRequest(1, 1)
	st, _ := p.Earliest(r, time.Hour, nil, 0)
	require.Equal(t, 5*time.Hour, st.At)
	p.MoveRelease(0, topology.SetOf(0), time.Hour)
	st, ok := p.Earliest(r, 30*time.Minute, nil, 0)
	require.True(t, ok)
	require.Equal(t, time.Hour, st.At, "the move opened [1h, 5h)")
	require.NotEmpty(t, backfill.WindowsBelow(p, r, 30*time.Minute, 0, backfill.Forever))
	p.Reserve(gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(0), Members: 1}}}, time.Hour, 4*time.Hour)
	require.Empty(t, backfill.WindowsBelow(p, r, 30*time.Minute, 0, backfill.Forever), "[1h, 5h) is reserved now")
	st, ok = p.Earliest(r, 30*time.Minute, nil, 0)
	require.True(t, ok)
	require.Equal(t, 5*time.Hour, st.At)
}

// TestMoveReleaseToNow: moving a release to now or before releases the
// GPUs now: a run may start on them at once, though they stay held in
// the index. (It once dropped the release, and they never came free;
// then it freed them a nanosecond after now.)
func TestMoveReleaseToNow(t *testing.T) {
	for _, at := range []time.Duration{0, -time.Hour} {
		_, p := oneNode(t, 8, topology.FirstN(8), time.Hour)
		r := gang.NewRequest(1, 8)
		st, ok := p.Earliest(r, time.Hour, nil, 0)
		require.True(t, ok)
		require.Equal(t, time.Hour, st.At)
		p.MoveRelease(0, topology.FirstN(8), at)
		st, ok = p.Earliest(r, time.Hour, nil, 0)
		require.True(t, ok, "moved to %s", at)
		require.Zero(t, st.At)
		_, out := p.PlaceNow(r, time.Hour, nil)
		require.Equal(t, gang.NoCapacity, out, "held in the index: not placed now")
	}
}
