package backfill_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"
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
