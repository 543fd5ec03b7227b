package backfill_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// TestNoStartBeforeAgreesWithTakingOut: on random profiles with
// releases and reservations, NoStartBefore for a job's own reservation
// answers what taking the reservation out and asking FreeBound answers:
// whether the count allows no start before the reservation's start. The
// profile is left as it was (the answer is checked before and after).
func TestNoStartBeforeAgreesWithTakingOut(t *testing.T) {
	var answers [2]int // false, true
	rapid.Check(t, func(t *rapid.T) {
		ix, p, _ := drawWorld(t)
		// Reservations of others, then the job's own.
		for range rapid.IntRange(0, 4).Draw(t, "others") {
			r := drawRequest(t, ix)
			r.Avoid = nil
			d := drawDuration(t, "otherRun")
			if st, ok := p.Earliest(r, d, nil, 0); ok {
				p.Reserve(st.Placement, st.At, d)
			}
		}
		r := drawRequest(t, ix)
		r.Avoid = nil
		d := drawDuration(t, "run")
		notBefore := time.Duration(rapid.IntRange(0, 10).Draw(t, "notBefore")) * 30 * time.Minute
		st, ok := p.Earliest(r, d, nil, notBefore)
		if !ok || st.At <= 0 {
			return
		}
		p.Reserve(st.Placement, st.At, d) // the job's own: its slots are of r's class
		got := p.NoStartBefore(r, d, st.At)
		p.Unreserve(st.Placement, st.At, d) // as if taken out
		want := p.FreeBound(r, d, 0) >= st.At
		p.Reserve(st.Placement, st.At, d)
		if got != want {
			t.Fatalf("NoStartBefore %v, taking the reservation out and counting says %v (start %v, run %v, %d GPUs)", got, want, st.At, d, r.GPUs())
		}
		if again := p.NoStartBefore(r, d, st.At); again != got {
			t.Fatalf("NoStartBefore changed its answer after the reservation was put back: %v then %v", got, again)
		}
		if got {
			answers[1]++
		} else {
			answers[0]++
		}
	})
	if answers[0] == 0 || answers[1] == 0 {
		t.Fatalf("the worlds drawn never answered both ways: %d false, %d true", answers[0], answers[1])
	}
}

// TestNoStartBeforeFindsTheLastWholeRun: the one run that fits the count
// before the reservation ends a nanosecond before it, where another
// reservation makes the count short. One node of 4 GPUs, a run of 1h
// needing all 4, the job's own reservation from 2h:
//
//	free by count  [0, 1h-1ns): 0   [1h-1ns, 2h-1ns): 4   [2h-1ns, 2h): 0
//	the run from 1h-1ns ends at 2h-1ns: it fits, so an earlier start exists
//
// Without the reservation that makes the count short, the count holds 4
// just before 2h and the answer is the same.
func TestNoStartBeforeFindsTheLastWholeRun(t *testing.T) {
	for _, short := range []bool{true, false} {
		ix, err := topology.NewIndex(&topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4}}})
		require.NoError(t, err)
		all := topology.FirstN(4)
		require.NoError(t, ix.TakeSet(0, all))
		p := backfill.NewProfile(ix)
		p.AddRelease(0, all, time.Hour-1)
		pl := gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: all, Members: 1}}}
		if short {
			p.Reserve(pl, 2*time.Hour-1, 1)
		}
		p.Reserve(pl, 2*time.Hour, time.Hour)
		require.False(t, p.NoStartBefore(gang.NewRequest(1, 4), time.Hour, 2*time.Hour), "short just before the start: %v", short)
	}
}

// TestNextGrowth: on one node of 4 GPUs, GPUs 0-1 released at 30m and a
// reservation of GPUs 2-3 until 1h, the class's GPUs grow at 30m and at
// 1h, and at no moment strictly after 1h or within a limit before 30m.
func TestNextGrowth(t *testing.T) {
	ix, err := topology.NewIndex(&topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4}}})
	require.NoError(t, err)
	require.NoError(t, ix.TakeSet(0, topology.FirstN(2)))
	p := backfill.NewProfile(ix)
	p.AddRelease(0, topology.FirstN(2), 30*time.Minute)
	p.Reserve(gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(2, 3), Members: 1}}}, 0, time.Hour)
	for _, c := range []struct {
		t, limit, want time.Duration
		ok             bool
	}{
		{0, backfill.Forever, 30 * time.Minute, true},
		{30 * time.Minute, backfill.Forever, time.Hour, true},
		{time.Hour, backfill.Forever, 0, false},
		{0, 29 * time.Minute, 0, false},
	} {
		at, ok := p.NextGrowth(topology.AnyType, c.t, c.limit)
		require.Equal(t, c.ok, ok, "after %v by %v", c.t, c.limit)
		require.Equal(t, c.want, at, "after %v by %v", c.t, c.limit)
	}
}
