package scheduler_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
)

// endOf9999 is the last instant RFC 3339 can write in UTC.
var endOf9999 = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)

// nearEndOf9999 moves s, a snapshot of the generators (at gen.Now), all
// its times alike, to a now drawn at most three days before the end of
// year 9999, in UTC or in a time zone east or west of it.
func nearEndOf9999(t *rapid.T, s *scheduler.Snapshot) *scheduler.Snapshot {
	before := rapid.OneOf(
		rapid.Int64Range(0, int64(30*time.Minute)),
		rapid.Int64Range(0, int64(72*time.Hour)),
	).Draw(t, "before")
	zone := rapid.SampledFrom([]*time.Location{time.UTC, time.FixedZone("", 3600), time.FixedZone("", 14*3600), time.FixedZone("", -(5*3600 + 1800))}).Draw(t, "zone")
	now := endOf9999.Add(-time.Duration(before)).In(zone)
	shift := func(at time.Time) time.Time {
		if at.IsZero() {
			return at
		}
		return now.Add(at.Sub(gen.Now))
	}
	s.Now = shift(s.Now)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Submitted, j.Started, j.EvictedAt = shift(j.Submitted), shift(j.Started), shift(j.EvictedAt)
	}
	return s
}

// lastWritable is the last instant a decision for now can write: the
// end of year 9999 in UTC, or in now's zone when that comes first.
func lastWritable(now time.Time) time.Time {
	local := time.Date(9999, 12, 31, 23, 59, 59, 999999999, now.Location())
	if local.Before(endOf9999) {
		return local
	}
	return endOf9999
}

// TestPropertyStartsWritableNearEndOf9999: near the end of year 9999,
// under every backfill mode and with preemption in play, no start of a
// decision (reservations, estimated starts of waits, explanations) lies
// past what RFC 3339 can write in now's zone or in UTC, the decision
// encodes and its times read back as they were, and the invariants that
// do not replay time still hold.
func TestPropertyStartsWritableNearEndOf9999(t *testing.T) {
	forModes(t, func(t *rapid.T, cfg scheduler.Config) {
		s := nearEndOf9999(t, gen.Snapshot(t))
		last := lastWritable(s.Now)
		d := step(t, cfg, s)
		for _, r := range d.Reservations {
			if r.Start.After(last) {
				t.Fatalf("reservation of %s starts at %s, after %s\n%s", r.Job, r.Start, last, dump(s, d))
			}
		}
		for _, w := range d.Pending {
			if w.Start.After(last) {
				t.Fatalf("pending %s starts at %s, after %s\n%s", w.Job, w.Start, last, dump(s, d))
			}
		}
		var buf bytes.Buffer
		if err := scheduler.EncodeDecision(&buf, d); err != nil {
			t.Fatalf("EncodeDecision: %v", err)
		}
		var back struct {
			Reservations []struct {
				Start time.Time `json:"start"`
			} `json:"reservations"`
			Pending []struct {
				Start *time.Time `json:"start"`
			} `json:"pending"`
		}
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("decision does not read back: %v\n%s", err, buf.String())
		}
		for i, r := range back.Reservations {
			if !r.Start.Equal(d.Reservations[i].Start) {
				t.Fatalf("reservation %d: %s read back as %s", i, d.Reservations[i].Start, r.Start)
			}
		}
		for i, w := range back.Pending {
			if (w.Start == nil) != d.Pending[i].Start.IsZero() || w.Start != nil && !w.Start.Equal(d.Pending[i].Start) {
				t.Fatalf("pending %d: %s read back as %v", i, d.Pending[i].Start, w.Start)
			}
		}
		var pending []string
		for _, j := range s.Jobs {
			if j.State == scheduler.Pending {
				pending = append(pending, j.ID)
			}
		}
		if len(pending) > 0 {
			id := rapid.SampledFrom(pending).Draw(t, "explain")
			e, err := scheduler.New(cfg).Explain(s, id)
			if err != nil {
				t.Fatalf("Explain: %v", err)
			}
			if _, err := json.Marshal(e); err != nil {
				t.Fatalf("explanation of %s does not encode: %v", id, err)
			}
		}
		if err := checkAll(newWorld(s, d, cfg), checkNoDoubleAllocation, checkGangs, checkNoJobLost); err != nil {
			t.Fatalf("%v\n%s", err, dump(s, d))
		}
	})
}

// The shortcuts of preemption change no decision near the end of year
// 9999 either, where victims whose grace ends after it are left out.
func TestPreemptionMemoChangesNothingNearEndOf9999(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { sameWithoutMemo(t, m.cfg, nearEndOf9999(t, crowded(t))) })
		})
	}
}
