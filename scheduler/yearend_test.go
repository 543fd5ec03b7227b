package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// yearEnd is an hour before the end of year 9999.
var yearEnd = time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)

// checkWritable checks that every time of d is no later than the end of
// year 9999 and that no message names a later one, that the decision
// encodes and that the times of its JSON form read back (strictly, as
// RFC 3339) as the times of d.
func checkWritable(t *testing.T, d *Decision) {
	t.Helper()
	for _, r := range d.Reservations {
		require.False(t, r.Start.After(lastRFC3339), "reservation of %s starts at %s", r.Job, r.Start)
	}
	for _, w := range d.Pending {
		require.False(t, w.Start.After(lastRFC3339), "pending %s starts at %s", w.Job, w.Start)
		require.NotContains(t, w.Message, "10000-", "pending %s", w.Job)
	}
	var buf bytes.Buffer
	require.NoError(t, EncodeDecision(&buf, d))
	var back struct {
		Reservations []struct {
			Job   string    `json:"job"`
			Start time.Time `json:"start"`
		} `json:"reservations"`
		Pending []struct {
			Job   string  `json:"job"`
			Start *string `json:"start"`
		} `json:"pending"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back), buf.String())
	require.Len(t, back.Reservations, len(d.Reservations))
	for i, r := range back.Reservations {
		require.Equal(t, d.Reservations[i].Job, r.Job)
		require.True(t, d.Reservations[i].Start.Equal(r.Start), "%s: %s read back as %s", r.Job, d.Reservations[i].Start, r.Start)
	}
	require.Len(t, back.Pending, len(d.Pending))
	for i, w := range back.Pending {
		if w.Start == nil {
			require.True(t, d.Pending[i].Start.IsZero(), w.Job)
			continue
		}
		at, err := parseTime(snapshotErr, "start", *w.Start)
		require.NoError(t, err)
		require.True(t, d.Pending[i].Start.Equal(at), "%s: %s read back as %s", w.Job, d.Pending[i].Start, at)
	}
}

// checkExplainWritable explains every pending job of snap and checks
// that the explanations encode as the step command writes them.
func checkExplainWritable(t *testing.T, s *Scheduler, snap *Snapshot) {
	t.Helper()
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if j.State != Pending {
			continue
		}
		e, err := s.Explain(snap, j.ID)
		require.NoError(t, err)
		require.False(t, e.Start.After(lastRFC3339), "explanation of %s starts at %s", j.ID, e.Start)
		_, err = json.Marshal(e)
		require.NoError(t, err, j.ID)
		require.NotContains(t, e.String(), "10000-", j.ID)
	}
}

// oneGPU is a cluster of n nodes of one GPU each.
func oneGPU(n int) topology.Cluster { return uniformCluster(n, 1, n) }

// A job whose only start comes after the end of year 9999 gets no
// reservation: it waits, and says that it has no start before then.
func TestStartPastYear9999(t *testing.T) {
	now := yearEnd
	snap := &Snapshot{Now: now, Cluster: oneGPU(1), Jobs: []Job{
		runningOn("R", 1, "n00", 1, now.Add(-time.Hour), 2*time.Hour, 0), // ends at 10000-01-01T00:00:00Z
		{ID: "P", Tier: P3, Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
	}}
	for _, mode := range []BackfillMode{EASY, Conservative} {
		for _, h := range []time.Duration{0, 3 * time.Hour} {
			t.Run(fmt.Sprintf("%s-horizon-%s", mode, h), func(t *testing.T) {
				s := New(Config{Backfill: mode, Horizon: h})
				d, err := s.Step(snap)
				require.NoError(t, err)
				checkWritable(t, d)
				require.Empty(t, d.Reservations)
				require.Len(t, d.Pending, 1)
				require.Equal(t, ReasonInsufficientGPUs, d.Pending[0].Reason)
				require.Equal(t, "needs 1×1 GPUs, 0 free; no start before the end of year 9999", d.Pending[0].Message)
				checkExplainWritable(t, s, snap)
			})
		}
	}
	// A horizon that ends first is the one the message names.
	d, err := New(Config{Horizon: 30 * time.Minute}).Step(snap)
	require.NoError(t, err)
	require.Equal(t, "needs 1×1 GPUs, 0 free; no start within the 30m planning horizon", d.Pending[0].Message)
}

// The last nanosecond of year 9999 is a start like any other; the next
// is not.
func TestStartAtEndOfYear9999(t *testing.T) {
	now := yearEnd
	for _, tt := range []struct {
		limit    time.Duration
		reserved bool
	}{
		{time.Hour + time.Minute - 1, true}, // R ends at 9999-12-31T23:59:59.999999999Z
		{time.Hour + time.Minute, false},    // R ends at 10000-01-01T00:00:00Z
	} {
		snap := &Snapshot{Now: now, Cluster: oneGPU(1), Jobs: []Job{
			runningOn("R", 1, "n00", 1, now.Add(-time.Minute), tt.limit, 0),
			{ID: "P", Tier: P3, Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
		}}
		for _, mode := range []BackfillMode{EASY, Conservative} {
			d, err := New(Config{Backfill: mode}).Step(snap)
			require.NoError(t, err)
			checkWritable(t, d)
			if tt.reserved {
				require.Len(t, d.Reservations, 1, mode)
				require.Equal(t, lastRFC3339, d.Reservations[0].Start.UTC())
			} else {
				require.Empty(t, d.Reservations, mode)
			}
		}
	}
}

// A time zone east of UTC writes the end of year 9999 earlier: a start
// at 9999-12-31T23:30:00Z would be written 10000-01-01T00:30:00+01:00.
func TestStartPastYear9999EastOfUTC(t *testing.T) {
	now := time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", 3600)) // 22:00Z
	snap := &Snapshot{Now: now, Cluster: oneGPU(1), Jobs: []Job{
		runningOn("R", 1, "n00", 1, now.Add(-time.Hour), 150*time.Minute, 0), // ends at 10000-01-01T00:30:00+01:00
		{ID: "P", Tier: P3, Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
	}}
	for _, mode := range []BackfillMode{EASY, Conservative} {
		s := New(Config{Backfill: mode})
		d, err := s.Step(snap)
		require.NoError(t, err)
		checkWritable(t, d)
		require.Empty(t, d.Reservations, mode)
		checkExplainWritable(t, s, snap)
	}
}

// Preemption near the end of year 9999: a victim whose grace would end
// after it is not preempted (its preemptor's reservation could not be
// written); one whose grace ends before it is.
func TestPreemptionPastYear9999(t *testing.T) {
	now := yearEnd
	long := runningOn("V", 3, "n00", 1, now.Add(-time.Hour), 0, 2*time.Hour)
	short := runningOn("W", 3, "n01", 1, now.Add(-2*time.Hour), 0, 10*time.Minute)
	p := Job{ID: "P", Tier: P0, Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)}
	for _, mode := range []BackfillMode{EASY, Conservative} {
		t.Run(mode.String(), func(t *testing.T) {
			// Only the victim whose grace crosses the year.
			snap := &Snapshot{Now: now, Cluster: oneGPU(1), Jobs: []Job{long, p}}
			s := New(Config{Backfill: mode})
			d, err := s.Step(snap)
			require.NoError(t, err)
			checkWritable(t, d)
			require.Empty(t, d.Evictions)
			require.Empty(t, d.Reservations)
			require.Len(t, d.Pending, 1)
			require.Equal(t, "needs 1×1 GPUs, 0 free; no start before the end of year 9999", d.Pending[0].Message)
			checkExplainWritable(t, s, snap)

			// With a second victim whose grace ends in time, that one goes.
			snap = &Snapshot{Now: now, Cluster: oneGPU(2), Jobs: []Job{long, short, p}}
			d, err = s.Step(snap)
			require.NoError(t, err)
			checkWritable(t, d)
			require.Equal(t, []Eviction{{Job: "W", Reason: EvictPreempted, By: "P", Grace: 10 * time.Minute, Requeue: true}}, d.Evictions)
			require.Len(t, d.Reservations, 1)
			require.Equal(t, now.Add(10*time.Minute), d.Reservations[0].Start)
			checkExplainWritable(t, s, snap)
		})
	}
}

// A job that may preempt and waits for GPUs being freed gets no claim on
// them when they come free after the end of year 9999, neither as a
// reservation nor, when a ReservationPolicy declines, as an estimated
// start.
func TestAwaitEvictionsPastYear9999(t *testing.T) {
	now := yearEnd
	e := runningOn("E", 3, "n00", 1, now.Add(-time.Hour), 0, 2*time.Hour)
	e.State, e.EvictedAt = Evicting, now // gone at 10000-01-01T01:00:00Z
	// L is past its limit: evicted now, gone at 10000-01-01T00:30:00Z.
	l := runningOn("L", 2, "n00", 1, now.Add(-2*time.Hour), 90*time.Minute, 90*time.Minute)
	p := Job{ID: "P", Tier: P0, Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)}
	decline := ReserveFunc(func(*Job, int) bool { return false })
	for _, tt := range []struct {
		name string
		cfg  Config
	}{
		{"easy", Config{}},
		{"conservative", Config{Backfill: Conservative}},
		{"declined", Config{Reserve: decline}},
		{"easy-horizon", Config{Horizon: 24 * time.Hour}},
	} {
		for _, held := range []Job{e, l} {
			t.Run(tt.name+"-"+held.ID, func(t *testing.T) {
				snap := &Snapshot{Now: now, Cluster: oneGPU(1), Jobs: []Job{held, p}}
				s := New(tt.cfg)
				d, err := s.Step(snap)
				require.NoError(t, err)
				checkWritable(t, d)
				require.Empty(t, d.Reservations, "%+v", d)
				require.Len(t, d.Pending, 1)
				require.Equal(t, ReasonInsufficientGPUs, d.Pending[0].Reason, "%+v", d)
				require.True(t, d.Pending[0].Start.IsZero(), "%+v", d)
				checkExplainWritable(t, s, snap)
			})
		}
	}
	// With the GPU free in time, P claims it.
	for _, held := range []Job{e, l} {
		if held.State == Evicting {
			held.EvictedAt = now.Add(-90 * time.Minute) // gone at 23:30
		} else {
			held.CheckpointGrace = 30 * time.Minute // gone at 23:30
		}
		snap := &Snapshot{Now: now, Cluster: oneGPU(1), Jobs: []Job{held, p}}
		d, err := New(Config{}).Step(snap)
		require.NoError(t, err)
		checkWritable(t, d)
		require.Len(t, d.Reservations, 1, "%+v", d)
		d, err = New(Config{Reserve: decline}).Step(snap)
		require.NoError(t, err)
		checkWritable(t, d)
		require.Equal(t, ReasonAwaitingPreemption, d.Pending[0].Reason, "%+v", d)
		require.False(t, d.Pending[0].Start.IsZero(), "%+v", d)
	}
}

// A snapshot whose now is itself after the end of year 9999 (possible
// from Go, not from JSON) gets no start that cannot be written: nothing
// is reserved or preempted for.
func TestNowPastYear9999(t *testing.T) {
	now := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	e := runningOn("E", 3, "n00", 1, now.Add(-time.Hour), 0, 0)
	e.State, e.EvictedAt = Evicting, now
	snap := &Snapshot{Now: now, Cluster: oneGPU(2), Jobs: []Job{e,
		runningOn("V", 3, "n01", 1, now.Add(-time.Hour), 0, 0),
		{ID: "P", Tier: P0, Members: 2, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
		{ID: "Q", Tier: P1, Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)},
	}}
	for _, mode := range []BackfillMode{EASY, Conservative} {
		d, err := New(Config{Backfill: mode}).Step(snap)
		require.NoError(t, err)
		require.Empty(t, d.Reservations, mode)
		require.Empty(t, d.Evictions, mode)
		for _, w := range d.Pending {
			require.True(t, w.Start.IsZero(), "%+v", w)
		}
	}
}
