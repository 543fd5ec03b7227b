package scheduler_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
)

// quotaSnapshot draws a snapshot whose teams often have quotas small
// enough to bind.
func quotaSnapshot(t *rapid.T) *scheduler.Snapshot {
	s := gen.Snapshot(t)
	for i := range s.Teams {
		if rapid.Bool().Draw(t, "tightQuota") {
			s.Teams[i].Quota = &scheduler.Quota{GPUs: rapid.IntRange(0, 24).Draw(t, "qGPUs"), BorrowLimit: rapid.IntRange(0, 8).Draw(t, "qBorrow")}
		}
	}
	return s
}

// TestPropertyQuotaHeldAfterStep recounts, from the snapshot and the
// decision, the GPUs each team with a quota holds or is promised after a
// Step: running jobs not evicted, placements and reservations. A team
// that got any placement or reservation holds at most its quota plus its
// borrowing limit (each was admitted so, and evictions only lower the
// count); a team that got none holds no more than it did.
func TestPropertyQuotaHeldAfterStep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := quotaSnapshot(t)
		m := modes[rapid.IntRange(0, len(modes)-1).Draw(t, "mode")]
		d, err := scheduler.New(m.cfg).Step(gen.Clone(s))
		if err != nil {
			t.Fatalf("step: %v", err)
		}
		byID := map[string]*scheduler.Job{}
		for i := range s.Jobs {
			byID[s.Jobs[i].ID] = &s.Jobs[i]
		}
		evicted := map[string]bool{}
		for _, e := range d.Evictions {
			evicted[e.Job] = true
		}
		before, after, got := map[string]int{}, map[string]int{}, map[string]bool{}
		for _, j := range s.Jobs {
			if j.State == scheduler.Running {
				before[j.Team] += j.GPUs()
				if !evicted[j.ID] {
					after[j.Team] += j.GPUs()
				}
			}
		}
		for _, p := range d.Placements {
			j := byID[p.Job]
			after[j.Team] += j.GPUs()
			got[j.Team] = true
			if n := p.Allocation.Count(); n != j.GPUs() {
				t.Fatalf("placement of %s holds %d GPUs, job asks %d", j.ID, n, j.GPUs())
			}
		}
		for _, r := range d.Reservations {
			j := byID[r.Job]
			after[j.Team] += j.GPUs()
			got[j.Team] = true
		}
		for _, tm := range s.Teams {
			if tm.Quota == nil || (*tm.Quota == scheduler.Quota{}) {
				continue
			}
			limit := fairshare.Quota{GPUs: tm.Quota.GPUs, BorrowLimit: tm.Quota.BorrowLimit}.Limit()
			if got[tm.Name] && after[tm.Name] > limit {
				t.Fatalf("team %s quota %+v: holds or is promised %d GPUs after the Step (limit %d)", tm.Name, *tm.Quota, after[tm.Name], limit)
			}
			if !got[tm.Name] && after[tm.Name] > before[tm.Name] {
				t.Fatalf("team %s: %d GPUs after, %d before, with nothing placed", tm.Name, after[tm.Name], before[tm.Name])
			}
		}
		// A job waiting for its quota is refused by the admitter with
		// nothing more than its own team's count: had its team held
		// fewer, or had it been alone, it could be admitted.
		for _, w := range d.Pending {
			if w.Reason != scheduler.ReasonQuota {
				continue
			}
			j := byID[w.Job]
			var q *scheduler.Quota
			for _, tm := range s.Teams {
				if tm.Name == j.Team {
					q = tm.Quota
				}
			}
			if q == nil || (*q == scheduler.Quota{}) {
				t.Fatalf("job %s of team %s without a quota waits for quota: %s", j.ID, j.Team, w.Message)
			}
		}
	})
}

// normalize maps what the JSON form does not tell apart to one value:
// empty and nil slices and maps, and time zones (times are compared with
// Equal and then set to the original).
func normalizeSnapshot(t *rapid.T, want, got *scheduler.Snapshot) {
	if !want.Now.Equal(got.Now) {
		t.Fatalf("now: %v != %v", want.Now, got.Now)
	}
	got.Now = want.Now
	if len(want.Cluster.Levels) == 0 && len(got.Cluster.Levels) == 0 {
		got.Cluster.Levels = want.Cluster.Levels
	}
	for i := range got.Cluster.Nodes {
		if i >= len(want.Cluster.Nodes) {
			break
		}
		w, g := &want.Cluster.Nodes[i], &got.Cluster.Nodes[i]
		if len(w.Domains) == 0 && len(g.Domains) == 0 {
			g.Domains = w.Domains
		}
		if len(w.Unhealthy) == 0 && len(g.Unhealthy) == 0 {
			g.Unhealthy = w.Unhealthy
		}
	}
	for i := range got.Jobs {
		if i >= len(want.Jobs) {
			break
		}
		w, g := &want.Jobs[i], &got.Jobs[i]
		for _, p := range []struct{ w, g *time.Time }{{&w.Submitted, &g.Submitted}, {&w.Started, &g.Started}, {&w.EvictedAt, &g.EvictedAt}} {
			if !p.w.Equal(*p.g) {
				t.Fatalf("job %s: time %v != %v", w.ID, *p.w, *p.g)
			}
			*p.g = *p.w
		}
		if len(w.Allocation) == 0 && len(g.Allocation) == 0 {
			g.Allocation = w.Allocation
		}
		for k := range g.Allocation {
			if k < len(w.Allocation) && len(w.Allocation[k].GPUs) == 0 && len(g.Allocation[k].GPUs) == 0 {
				g.Allocation[k].GPUs = w.Allocation[k].GPUs
			}
		}
	}
}

// TestPropertySnapshotJSONRoundTrip encodes every generated snapshot
// (with times in other zones and at odd instants, and durations down to
// the nanosecond) and decodes it back to the same snapshot; a second
// encoding gives the same bytes.
func TestPropertySnapshotJSONRoundTrip(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("east", 5*3600+30*60), time.FixedZone("west", -8*3600), time.FixedZone("lmt", 9*60+21)}
	rapid.Check(t, func(t *rapid.T) {
		s := quotaSnapshot(t)
		shift := func(tm time.Time) time.Time {
			if tm.IsZero() {
				return tm
			}
			return tm.Add(time.Duration(rapid.Int64Range(-1e12, 1e12).Draw(t, "ns"))).In(rapid.SampledFrom(zones).Draw(t, "zone"))
		}
		s.Now = shift(s.Now)
		for i := range s.Jobs {
			j := &s.Jobs[i]
			j.Submitted, j.Started, j.EvictedAt = shift(j.Submitted), shift(j.Started), shift(j.EvictedAt)
			if j.TimeLimit > 0 {
				j.TimeLimit += time.Duration(rapid.Int64Range(0, 1e10).Draw(t, "limitNs"))
			}
			if j.CheckpointGrace > 0 {
				j.CheckpointGrace += time.Duration(rapid.Int64Range(0, 1e10).Draw(t, "graceNs"))
			}
		}
		for i := range s.Teams {
			s.Teams[i].Share = rapid.Float64Range(0, 1e6).Draw(t, "share")
			s.Teams[i].Usage = rapid.Float64Range(0, 1e300).Draw(t, "usage")
		}
		var buf bytes.Buffer
		if err := scheduler.EncodeSnapshot(&buf, s); err != nil {
			t.Fatalf("encode: %v", err)
		}
		enc := buf.String()
		got, err := scheduler.DecodeSnapshot(&buf)
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, enc)
		}
		var again bytes.Buffer
		if err := scheduler.EncodeSnapshot(&again, got); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if again.String() != enc {
			t.Fatalf("second encoding differs:\n%s\n%s", enc, again.String())
		}
		normalizeSnapshot(t, s, got)
		require.Equal(t, s, got)
	})
}

// TestPropertyDecisionJSONShape decodes EncodeDecision's output into the
// documented shape and compares it with the decision.
func TestPropertyDecisionJSONShape(t *testing.T) {
	type alloc struct {
		Node string `json:"node"`
		GPUs []int  `json:"gpus"`
	}
	type doc struct {
		Placements []struct {
			Job        string  `json:"job"`
			Allocation []alloc `json:"allocation"`
		} `json:"placements"`
		Evictions []struct {
			Job     string  `json:"job"`
			Reason  string  `json:"reason"`
			By      *string `json:"by"`
			Grace   string  `json:"grace"`
			Requeue bool    `json:"requeue"`
		} `json:"evictions"`
		Reservations []struct {
			Job        string  `json:"job"`
			Start      string  `json:"start"`
			Allocation []alloc `json:"allocation"`
		} `json:"reservations"`
		Pending []struct {
			Job     string  `json:"job"`
			Reason  string  `json:"reason"`
			Message string  `json:"message"`
			Start   *string `json:"start"`
		} `json:"pending"`
		NextWake *string `json:"nextWake"`
	}
	rapid.Check(t, func(t *rapid.T) {
		s := quotaSnapshot(t)
		m := modes[rapid.IntRange(0, len(modes)-1).Draw(t, "mode")]
		d, err := scheduler.New(m.cfg).Step(s)
		if err != nil {
			t.Fatalf("step: %v", err)
		}
		var buf bytes.Buffer
		if err := scheduler.EncodeDecision(&buf, d); err != nil {
			t.Fatalf("encode: %v", err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		for _, k := range []string{"placements", "evictions", "reservations", "pending"} {
			if v, ok := raw[k]; !ok || v[0] != '[' {
				t.Fatalf("key %q: %s", k, v)
			}
		}
		if v, ok := raw["nextWake"]; ok {
			var at time.Time
			if err := json.Unmarshal(v, &at); err != nil || d.NextWake.IsZero() || !at.Equal(d.NextWake) {
				t.Fatalf("nextWake %s for %v: %v", v, d.NextWake, err)
			}
		} else if !d.NextWake.IsZero() {
			t.Fatalf("nextWake %v left out", d.NextWake)
		}
		if len(raw) != 4 && (len(raw) != 5 || d.NextWake.IsZero()) {
			t.Fatalf("keys: %v", raw)
		}
		dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
		dec.DisallowUnknownFields()
		var o doc
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("shape: %v", err)
		}
		if len(o.Placements) != len(d.Placements) || len(o.Evictions) != len(d.Evictions) ||
			len(o.Reservations) != len(d.Reservations) || len(o.Pending) != len(d.Pending) {
			t.Fatalf("lengths differ")
		}
		for i, p := range d.Placements {
			require.Equal(t, p.Job, o.Placements[i].Job)
			require.Equal(t, len(p.Allocation), len(o.Placements[i].Allocation))
			for k, a := range p.Allocation {
				require.Equal(t, a.Node, o.Placements[i].Allocation[k].Node)
				require.Equal(t, len(a.GPUs), len(o.Placements[i].Allocation[k].GPUs))
			}
		}
		for i, e := range d.Evictions {
			oe := o.Evictions[i]
			require.Equal(t, e.Job, oe.Job)
			require.Equal(t, string(e.Reason), oe.Reason)
			require.Equal(t, e.Requeue, oe.Requeue)
			require.Equal(t, e.By == "", oe.By == nil)
			g, err := time.ParseDuration(oe.Grace)
			require.NoError(t, err)
			require.Equal(t, e.Grace, g)
		}
		for i, r := range d.Reservations {
			st, err := time.Parse(time.RFC3339Nano, o.Reservations[i].Start)
			require.NoError(t, err)
			require.True(t, st.Equal(r.Start), "%v != %v", st, r.Start)
		}
		for i, w := range d.Pending {
			ow := o.Pending[i]
			require.Equal(t, w.Job, ow.Job)
			require.Equal(t, string(w.Reason), ow.Reason)
			require.Equal(t, w.Message, ow.Message)
			require.Equal(t, w.Start.IsZero(), ow.Start == nil)
			if ow.Start != nil {
				st, err := time.Parse(time.RFC3339Nano, *ow.Start)
				require.NoError(t, err)
				require.True(t, st.Equal(w.Start))
			}
		}
	})
}

// TestPropertyExplainQuotaAtTurn checks the team count Explain reports
// for a pending job of a team with a quota against the Step's outcome:
// a job placed or reserved fit its quota with that count, and a job
// refused for its quota did not fit its nominal quota with it.
func TestPropertyExplainQuotaAtTurn(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := quotaSnapshot(t)
		m := modes[rapid.IntRange(0, len(modes)-1).Draw(t, "mode")]
		sch := scheduler.New(m.cfg)
		d, err := sch.Step(gen.Clone(s))
		if err != nil {
			t.Fatalf("step: %v", err)
		}
		outcome := map[string]string{}
		for _, p := range d.Placements {
			outcome[p.Job] = "started"
		}
		for _, r := range d.Reservations {
			outcome[r.Job] = "reserved"
		}
		for _, w := range d.Pending {
			outcome[w.Job] = string(w.Reason)
		}
		var pending []scheduler.Job
		for _, j := range s.Jobs {
			if j.State == scheduler.Pending {
				pending = append(pending, j)
			}
		}
		if len(pending) == 0 {
			return
		}
		j := rapid.SampledFrom(pending).Draw(t, "job")
		e, err := sch.Explain(gen.Clone(s), j.ID)
		if err != nil {
			t.Fatalf("explain: %v", err)
		}
		if e.Quota == nil || (e.Quota.Nominal == 0 && e.Quota.BorrowLimit == 0) {
			return
		}
		q := fairshare.Quota{GPUs: e.Quota.Nominal, BorrowLimit: e.Quota.BorrowLimit}
		switch outcome[j.ID] {
		case "started", "reserved":
			if e.Quota.InUse+j.GPUs() > q.Limit() {
				t.Fatalf("job %s (%d GPUs) %s with team %s at %d of %+v", j.ID, j.GPUs(), outcome[j.ID], j.Team, e.Quota.InUse, q)
			}
		case string(scheduler.ReasonQuota):
			if e.Quota.InUse+j.GPUs() <= q.GPUs {
				t.Fatalf("job %s (%d GPUs) refused with team %s at %d of %+v", j.ID, j.GPUs(), j.Team, e.Quota.InUse, q)
			}
		}
	})
}
