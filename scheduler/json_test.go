package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// designFile is the example snapshot of the design's JSON contract. As
// written there it is invalid: job A, a gang of 8×8 GPUs, holds only the
// 8 GPUs of n0, the single node. The copy adds nodes n1..n12 (n1..n7 in
// leaf l0 with n0, n8..n12 in leaf l1) and gives A the GPUs of n0..n7;
// everything else is as in the design.
const designFile = "../examples/step/testdata/design.json"

func decodeFile(t *testing.T, path string) *Snapshot {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	s, err := DecodeSnapshot(bytes.NewReader(data))
	require.NoError(t, err)
	return s
}

func TestDecodeDesignExample(t *testing.T) {
	s := decodeFile(t, designFile)
	require.Equal(t, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), s.Now)
	require.Equal(t, []string{"spine", "leaf"}, s.Cluster.Levels)
	require.Len(t, s.Cluster.Nodes, 13)
	require.Equal(t, topology.Node{Name: "n0", GPUs: 8, GPUType: "H100",
		Domains: map[string]string{"spine": "s0", "leaf": "l0"}, State: topology.Ready, Unhealthy: []int{7}}, s.Cluster.Nodes[0])
	require.Equal(t, []Team{{Name: "team-a", Share: 40, Usage: 86400, Quota: &Quota{GPUs: 100, BorrowLimit: 20}}}, s.Teams)
	require.Len(t, s.Jobs, 2)
	require.Equal(t, Job{ID: "C", Team: "team-a", Tier: P1, Kind: Training,
		Submitted: time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC), Members: 12, GPUsPerMember: 8, GPUType: "H100",
		TimeLimit: 24 * time.Hour, CheckpointGrace: 5 * time.Minute,
		Topology: TopologySpec{Required: "spine", Preferred: "leaf"}, Placement: Pack, State: Pending}, s.Jobs[0])
	a := s.Jobs[1]
	require.Equal(t, "A", a.ID)
	require.Equal(t, "team-b", a.Team)
	require.Equal(t, P1, a.Tier)
	require.Equal(t, Running, a.State)
	require.Equal(t, 12*time.Hour, a.TimeLimit)
	require.Zero(t, a.CheckpointGrace)
	require.Equal(t, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), a.Started)
	require.Equal(t, "n0[0-7] n1[0-7] n2[0-7] n3[0-7] n4[0-7] n5[0-7] n6[0-7] n7[0-7]", a.Allocation.String())
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, path := range []string{designFile, "../examples/step/testdata/mixed.json"} {
		t.Run(path, func(t *testing.T) {
			s := decodeFile(t, path)
			var buf bytes.Buffer
			require.NoError(t, EncodeSnapshot(&buf, s))
			again, err := DecodeSnapshot(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err, buf.String())
			require.Equal(t, s, again)
			// Encoding is stable: a second trip gives the same bytes.
			var buf2 bytes.Buffer
			require.NoError(t, EncodeSnapshot(&buf2, again))
			require.Equal(t, buf.String(), buf2.String())
		})
	}
}

func TestSnapshotRoundTripGo(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 500, time.FixedZone("x", 3600))
	s := &Snapshot{
		Now: now,
		Cluster: topology.Cluster{Levels: []string{"spine"}, Nodes: []topology.Node{
			{Name: "n0", GPUs: 8, Domains: map[string]string{"spine": "s0"}, State: topology.Down, Unhealthy: []int{1}},
			{Name: "n1", GPUs: 4, GPUType: "L4", Domains: map[string]string{"spine": "s1"}, State: topology.Draining,
				CPUMillis: 32000, MemoryMiB: 256 << 10},
		}},
		Teams: []Team{{Name: "a", Share: 0.5}, {Name: "b", Parent: "a", Usage: 1e9, Quota: &Quota{}}},
		Jobs: []Job{
			{ID: "p", Tier: P0, Kind: Inference, Members: 2, GPUsPerMember: 1, Placement: Spread, Group: "g", SpreadLevel: "spine",
				CPUMillis: 1500, MemoryMiB: 4096, EligibleNodes: []string{"n1", "n0"}},
			{ID: "r", Team: "b", Tier: P2, Members: 1, GPUsPerMember: 4, State: Evicting, CheckpointGrace: 90 * time.Second,
				EvictedAt: now.Add(-time.Minute), Started: now.Add(-time.Hour), TimeLimit: time.Hour + time.Nanosecond,
				Allocation: topology.Allocation{{Node: "n0", GPUs: []int{4, 5, 6, 7}}}},
			{ID: "q", Members: 1, GPUsPerMember: 1, EligibleNodes: []string{}},
		},
	}
	require.NoError(t, Validate(s))
	var buf bytes.Buffer
	require.NoError(t, EncodeSnapshot(&buf, s))
	again, err := DecodeSnapshot(&buf)
	require.NoError(t, err)
	require.True(t, s.Now.Equal(again.Now))
	require.True(t, s.Jobs[1].EvictedAt.Equal(again.Jobs[1].EvictedAt))
	again.Now, again.Jobs[1].EvictedAt, again.Jobs[1].Started = s.Now, s.Jobs[1].EvictedAt, s.Jobs[1].Started
	require.Equal(t, s, again)
	require.Error(t, EncodeSnapshot(&buf, nil))
}

func TestDecodeDefaults(t *testing.T) {
	s, err := DecodeSnapshot(strings.NewReader(`{"now":"2026-12-02T00:00:00+01:00",
		"cluster":{"nodes":[{"name":"n0","gpus":8}]},
		"jobs":[{"id":"A","gpusPerMember":2}]}`))
	require.NoError(t, err)
	require.Equal(t, topology.Ready, s.Cluster.Nodes[0].State)
	require.Nil(t, s.Teams)
	require.Equal(t, Job{ID: "A", Members: 1, GPUsPerMember: 2, Kind: Training, State: Pending, Placement: Pack}, s.Jobs[0])
	require.Equal(t, time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC), s.Now.UTC())
}

// TestDecodeRFC3339: RFC 3339 allows a lower-case "t" and "z" and a leap
// second, which time.Parse refuses; a leap second reads as the next
// second.
func TestDecodeRFC3339(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-12-02t00:00:00z":         time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
		"2016-12-31T23:59:60Z":         time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC),
		"2026-12-02T05:30:00.5+05:30":  time.Date(2026, 12, 2, 0, 0, 0, 5e8, time.UTC),
		"2016-12-31T18:29:60.25-05:30": time.Date(2017, 1, 1, 0, 0, 0, 25e7, time.UTC),
	} {
		s, err := DecodeSnapshot(strings.NewReader(`{"now":"` + in + `","cluster":{"nodes":[{"name":"n0","gpus":8}]}}`))
		require.NoError(t, err, in)
		require.True(t, want.Equal(s.Now), "%s: got %s", in, s.Now)
	}
}

func TestDecodeExplicitValues(t *testing.T) {
	s, err := DecodeSnapshot(strings.NewReader(snapJSON(
		`{"id":"A","gpusPerMember":1,"tier":0,"kind":"inference","placement":"spread","members":3,"timeLimit":"0s"}`,
		`{"id":"B","gpusPerMember":1,"tier":2,"state":"pending","timeLimit":"1h30m","checkpointGrace":"90s","submitted":"2026-12-01T00:00:00.25Z"}`,
	)))
	require.NoError(t, err)
	a, b := s.Jobs[0], s.Jobs[1]
	require.Equal(t, P0, a.Tier, "an explicit tier 0 stays 0")
	require.Equal(t, Inference, a.Kind)
	require.Equal(t, Spread, a.Placement)
	require.Equal(t, 3, a.Members)
	require.Zero(t, a.TimeLimit)
	require.Equal(t, P2, b.Tier)
	require.Equal(t, 90*time.Minute, b.TimeLimit)
	require.Equal(t, 90*time.Second, b.CheckpointGrace)
	require.Equal(t, 250*time.Millisecond, time.Duration(b.Submitted.Nanosecond()))
}

func TestEncodeEmptyDecision(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, EncodeDecision(&buf, &Decision{}))
	require.Equal(t, "{\n  \"placements\": [],\n  \"evictions\": [],\n  \"reservations\": [],\n  \"pending\": []\n}\n", buf.String())
	require.Error(t, EncodeDecision(&buf, nil))
}

// TestEncodeSnapshotRefusesNonFinite: a share or usage that JSON cannot
// write is an error, worded as encoding/json words it, and nothing is
// written.
func TestEncodeSnapshotRefusesNonFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s := &Snapshot{Teams: []Team{{Name: "t", Share: 1, Usage: v}}}
		var out bytes.Buffer
		err := EncodeSnapshot(&out, s)
		require.EqualError(t, err, fmt.Sprintf("json: unsupported value: %v", v))
		require.Zero(t, out.Len())
	}
}

func TestEncodeDecisionShape(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	d := &Decision{
		Placements: []Placement{{Job: "D", Allocation: topology.Allocation{{Node: "n9", GPUs: []int{0, 1}}}}},
		Evictions: []Eviction{
			{Job: "X", Reason: EvictPreempted, By: "P", Grace: 5 * time.Minute, Requeue: true},
			{Job: "Y", Reason: EvictTimeLimit},
		},
		Reservations: []Reservation{{Job: "C", Start: now.Add(12 * time.Hour), Allocation: topology.Allocation{{Node: "n0", GPUs: []int{3}}}}},
		Pending: []Wait{
			{Job: "F", Reason: ReasonInsufficientGPUs, Message: "needs <8> & more"},
			{Job: "G", Reason: ReasonAwaitingPreemption, Message: "m", Start: now.Add(90 * time.Second)},
		},
	}
	var buf bytes.Buffer
	require.NoError(t, EncodeDecision(&buf, d))
	require.True(t, strings.HasPrefix(buf.String(), "{\n  \"placements\": [\n    {\n      \"job\": \"D\""), buf.String())
	require.Contains(t, buf.String(), `"needs <8> & more"`, "no HTML escaping")
	var got map[string][]map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	require.Equal(t, map[string][]map[string]any{
		"placements": {{"job": "D", "allocation": []any{map[string]any{"node": "n9", "gpus": []any{0.0, 1.0}}}}},
		"evictions": {
			{"job": "X", "reason": "preempted", "by": "P", "grace": "5m", "requeue": true},
			{"job": "Y", "reason": "time-limit", "grace": "0s", "requeue": false},
		},
		"reservations": {{"job": "C", "start": "2026-12-02T12:00:00Z", "allocation": []any{map[string]any{"node": "n0", "gpus": []any{3.0}}}}},
		"pending": {
			{"job": "F", "reason": "insufficient-gpus", "message": "needs <8> & more"},
			{"job": "G", "reason": "awaiting-preemption", "message": "m", "start": "2026-12-02T00:01:30Z"},
		},
	}, got)
}

func TestEncodeDesignDecision(t *testing.T) {
	s := decodeFile(t, designFile)
	d, err := New(Config{}).Step(s)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, EncodeDecision(&buf, d))
	var got struct {
		Placements, Evictions, Reservations, Pending []json.RawMessage
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	require.Equal(t, len(d.Placements), len(got.Placements))
	require.Equal(t, len(d.Evictions), len(got.Evictions))
	require.Equal(t, len(d.Reservations), len(got.Reservations))
	require.Equal(t, len(d.Pending), len(got.Pending))
	require.NoError(t, checkDecision(s, d))
}

func TestDecodePolicy(t *testing.T) {
	cfg, err := DecodeConfig(strings.NewReader(`{}`))
	require.NoError(t, err)
	require.Equal(t, Config{}, cfg, "an empty policy file is the zero Config")

	cfg, err = DecodeConfig(strings.NewReader(`{"backfill":"conservative","reservations":3,"enforceTimeLimits":false,
		"backfillOrder":"shortest","fairshare":{"halfLife":"24h","weights":{"age":0,"size":5.5},"ageMax":"72h"},
		"preemption":{"matrix":[[false,1],[0,false]]},"horizon":"36h","order":"tier"}`))
	require.NoError(t, err)
	require.Equal(t, Config{Backfill: Conservative, Reservations: 3, IgnoreTimeLimits: true, BackfillOrder: ShortestFirst,
		FairShare: FairShare{HalfLife: 24 * time.Hour, Weights: fairshare.Weights{
			FairShare: fairshare.DefaultFairShareWeight, Age: 0, Size: 5.5, AgeMax: 72 * time.Hour, Explicit: true}},
		Preemption: preempt.Matrix{{false, true}, {false, false}}, Horizon: 36 * time.Hour, Order: TierOrder{}}, cfg)

	cfg, err = DecodeConfig(strings.NewReader(`{"backfill":"none"}`))
	require.NoError(t, err)
	require.Equal(t, Config{Backfill: NoBackfill}, cfg)

	cfg, err = DecodeConfig(strings.NewReader(`{"order":"multifactor"}`))
	require.NoError(t, err)
	require.Equal(t, Config{}, cfg, "multifactor is the default order")

	cfg, err = DecodeConfig(strings.NewReader(`{"preemption":{"disabled":true}}`))
	require.NoError(t, err)
	require.Equal(t, Config{DisablePreemption: true}, cfg)

	cfg, err = DecodeConfig(strings.NewReader(`{"preemption":{"maxEvictedGPUs":64,"minRuntime":"10m"}}`))
	require.NoError(t, err)
	require.Equal(t, Config{MaxEvictedGPUs: 64, MinRuntime: 10 * time.Minute}, cfg)

	cfg, err = DecodeConfig(strings.NewReader(`{"preemption":{"maxEvictedGPUs":0}}`))
	require.NoError(t, err)
	require.Equal(t, Config{}, cfg, "0 is the default budget")
}

func TestDecodePolicyErrors(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"unknown key", `{"x":1}`, `config: json: unknown field "x"`},
		{"key in the wrong case", `{"Backfill":"easy"}`, `config: json: unknown field "Backfill"`},
		{"unknown nested key", `{"fairshare":{"halfLife":"1h","decay":2}}`, `config: fairshare: unknown field "decay"`},
		{"unknown weight", `{"fairshare":{"weights":{"tier":1}}}`, `config: fairshare.weights: unknown field "tier"`},
		{"unknown key in a matrix row", `{"preemption":{"mattrix":[]}}`, `config: preemption: unknown field "mattrix"`},
		{"unknown nested key before trailing data", `{"fairshare":{"weights":{"x":2}}} trailing`, `config: fairshare.weights: unknown field "x"`},
		{"unknown key in the first of a repeated key", `{"fairshare":{"decay":1},"fairshare":{}}`, `config: fairshare: unknown field "decay"`},
		{"unknown keys in document order", `{"zz":1,"aa":2}`, `config: json: unknown field "zz"`},
		{"tiers preempting each other", `{"preemption":{"matrix":[[false,true,true],[false,false,true],[false,true,false]]}}`,
			`config: preemption.matrix[1][2] and matrix[2][1]: tiers 1 and 2 may not preempt each other (each would evict the other in turn)`},
		{"bad backfill", `{"backfill":"eager"}`, `config: backfill: unknown value "eager" (want "easy", "conservative" or "none")`},
		{"bad order", `{"backfillOrder":"longest"}`, `config: backfillOrder: unknown value "longest" (want "priority" or "shortest")`},
		{"negative reservations", `{"reservations":-1}`, `config: reservations must be >= 0, got -1`},
		{"wrong type", `{"reservations":"1"}`, `config: reservations: want an integer, got string`},
		{"wrong nested type", `{"fairshare":{"weights":{"age":"high"}}}`, `config: fairshare.weights.age: want a number, got string`},
		{"bad half-life", `{"fairshare":{"halfLife":"1 week"}}`, `config: fairshare.halfLife: bad duration "1 week"`},
		{"negative age max", `{"fairshare":{"ageMax":"-1h"}}`, `config: fairshare.ageMax must be >= 0, got -1h`},
		{"negative weight", `{"fairshare":{"weights":{"size":-1}}}`, `config: fairshare.weights.size must be a finite number >= 0, got -1`},
		{"weights beyond the float range", `{"fairshare":{"weights":{"fairshare":1.7e308,"age":1.7e308}}}`, `config: fairshare.weights must sum to a finite number, got fairshare 1.7e+308 + age 1.7e+308 + size 0`},
		{"matrix not square", `{"preemption":{"matrix":[[false,true],[false]]}}`, `config: preemption.matrix[1]: row has 1 entries, want 2 (the matrix must be square)`},
		{"empty matrix", `{"preemption":{"matrix":[]}}`, `config: preemption.matrix: no tiers (want at least one row)`},
		{"bad matrix cell", `{"preemption":{"matrix":[[false,2],[false,false]]}}`, `config: preemption.matrix[0][1]: want true, false, 1 or 0, got 2`},
		{"string matrix cell", `{"preemption":{"matrix":[["yes"]]}}`, `config: preemption.matrix[0][0]: want true, false, 1 or 0, got "yes"`},
		{"tier preempts itself", `{"preemption":{"matrix":[[false,false],[false,true]]}}`, `config: preemption.matrix[1][1]: tier 1 may not preempt its own tier`},
		{"negative horizon", `{"horizon":"-1h"}`, `config: horizon must be >= 0, got -1h`},
		{"bad horizon", `{"horizon":"a day"}`, `config: horizon: bad duration "a day"`},
		{"bad queue order", `{"order":"fifo"}`, `config: order: unknown value "fifo" (want "multifactor" or "tier")`},
		{"negative budget", `{"preemption":{"maxEvictedGPUs":-8}}`, `config: preemption.maxEvictedGPUs must be >= 0, got -8`},
		{"budget not an integer", `{"preemption":{"maxEvictedGPUs":"8"}}`, `config: preemption.maxEvictedGPUs: want an integer, got string`},
		{"fractional budget", `{"preemption":{"maxEvictedGPUs":1.5}}`, `config: preemption.maxEvictedGPUs: want an integer, got number 1.5`},
		{"negative minimum runtime", `{"preemption":{"minRuntime":"-10m"}}`, `config: preemption.minRuntime must be >= 0, got -10m`},
		{"bad minimum runtime", `{"preemption":{"minRuntime":"ten minutes"}}`, `config: preemption.minRuntime: bad duration "ten minutes"`},
		{"minimum runtime null", `{"preemption":{"minRuntime":null}}`, `config: preemption.minRuntime: want a string, got null`},
		{"preemption disabled not a bool", `{"preemption":{"disabled":"yes"}}`, `config: preemption.disabled: want true or false, got string`},
		{"bad JSON", `{"backfill":}`, `config: json: invalid character '}' looking for beginning of value (line 1, column 13, offset 12)`},
		{"trailing data", "{}\n{}", `config: json: trailing data after the object (line 2, column 1, offset 3)`},
		{"empty", ``, `config: json: empty input (want one JSON object)`},
		{"weight beyond the float range", `{"fairshare":{"weights":{"age":1e309}}}`, `config: fairshare.weights.age: want a number within ±1.7976931348623157e+308, got 1e309`},
		{"byte-order mark", "\uFEFF{}", `config: json: input starts with a byte-order mark (U+FEFF), which JSON does not allow (line 1, column 1, offset 0)`},
		{"lone surrogate", `{"backfill":"e\udfffasy"}`, `config: json: lone surrogate \udfff names no character (line 1, column 15, offset 14)`},
		{"not UTF-8", "{\"backfill\":\"e\xffasy\"}", `config: json: invalid UTF-8 (line 1, column 15, offset 14)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeConfig(strings.NewReader(tt.json))
			require.EqualError(t, err, tt.want)
		})
	}
	// The policy file's checks agree with those of a Config built in Go.
	snap := &Snapshot{Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
	err := New(Config{Backfill: 9}).Validate(snap)
	require.EqualError(t, err, "config: backfill: unknown mode 9")
	err = New(Config{BackfillOrder: 7}).Validate(snap)
	require.EqualError(t, err, "config: backfillOrder: unknown order 7")
	err = New(Config{FairShare: FairShare{Algorithm: 5}}).Validate(snap)
	require.EqualError(t, err, "config: fairshare.algorithm: unknown algorithm 5", "a Config that Step refuses")
	_, err = DecodeConfig(strings.NewReader(`{"reservations":-2}`))
	require.EqualError(t, err, "config: reservations must be >= 0, got -2")
	_, err = DecodeConfig(strings.NewReader(`{"order":"fifo"}`))
	require.EqualError(t, err, `config: order: unknown value "fifo" (want "multifactor" or "tier")`)
}

// TestDecisionKeepsFractionalSeconds: times carry their fraction of a
// second into the decision and its messages, so a reservation never
// names a start before its GPUs are free.
func TestDecisionKeepsFractionalSeconds(t *testing.T) {
	snap, err := DecodeSnapshot(strings.NewReader(`{"now":"2026-12-02T00:00:00.75Z",
		"cluster":{"nodes":[{"name":"n0","gpus":8}]},"jobs":[
		{"id":"R","gpusPerMember":4,"state":"running","started":"2026-12-01T23:00:00.25Z","timeLimit":"1h30m",
		 "allocation":[{"node":"n0","gpus":[0,1,2,3]}]},
		{"id":"W","gpusPerMember":8,"timeLimit":"1h"},
		{"id":"X","gpusPerMember":2,"timeLimit":"2h"}]}`))
	require.NoError(t, err)
	d, err := New(Config{}).Step(snap)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, EncodeDecision(&buf, d))
	require.Contains(t, buf.String(), `"start": "2026-12-02T00:30:00.25Z"`)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "W", d.Reservations[0].Job)
	require.Len(t, d.Pending, 1)
	require.Equal(t, ReasonBehindReservation, d.Pending[0].Reason)
	require.Contains(t, d.Pending[0].Message, `"W" at 2026-12-02T00:30:00.25Z`)
}

// formatDuration drops only zero units: what it writes parses back to
// the same duration, and it is no longer than time.Duration.String.
func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 5 * time.Minute: "5m", 24 * time.Hour: "24h", 90 * time.Minute: "1h30m",
		90 * time.Second: "1m30s", time.Hour + 30*time.Second: "1h0m30s", 1500 * time.Millisecond: "1.5s",
		-5 * time.Minute: "-5m", 10 * time.Minute: "10m", time.Minute + time.Nanosecond: "1m0.000000001s",
	} {
		require.Equal(t, want, formatDuration(d), "%v", d)
	}
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64().Draw(t, "d"))
		if rapid.Bool().Draw(t, "round") {
			d = d.Round(time.Duration(rapid.SampledFrom([]int64{int64(time.Second), int64(time.Minute), int64(time.Hour)}).Draw(t, "unit")))
		}
		s := formatDuration(d)
		back, err := time.ParseDuration(s)
		if err != nil || back != d {
			t.Fatalf("formatDuration(%v) = %q, parses to %v, %v", d, s, back, err)
		}
		if len(s) > len(d.String()) || strings.HasSuffix(s, "m0s") || strings.HasSuffix(s, "h0m") {
			t.Fatalf("formatDuration(%v) = %q keeps a zero unit", d, s)
		}
	})
}

// loneSurrogate finds an escaped half of a surrogate pair only inside a
// string, only without its other half, and not after an escaped
// backslash.
func TestLoneSurrogate(t *testing.T) {
	for in, want := range map[string]int{
		`{"id":"\ud83d\ude00"}`:  -1, // a pair: 😀
		`{"id":"\uD83D\uDE00"}`:  -1,
		`{"id":"\ud800"}`:        7,
		`{"id":"\udc00"}`:        7,
		`{"id":"a\ud800\u0041"}`: 8,
		`{"id":"\ude00\ud83d"}`:  7,  // the wrong order
		`{"id":"\\ud800"}`:       -1, // a backslash, then text
		`{"id":"\\\ud800"}`:      9,
		`{"id":"\u0041\ud800"}`:  13,
		`{"\ud800":1}`:           2,
		`{"id":"x"} \ud800`:      -1, // outside a string: for the decoder
		`{"id":"\ud800\"}`:       7,
		`{"id":"\ud80"}`:         -1, // not an escape: for the decoder
	} {
		require.Equal(t, want, loneSurrogate([]byte(in)), in)
	}
}

// An integer beyond the range of int names the range; wholeNumber tells
// an integer written as one from a fraction or an exponent.
func TestIntRangeAndWholeNumber(t *testing.T) {
	for n, want := range map[string]string{
		"9223372036854775808":  `snapshot: jobs[0] "A": tier: want an integer from -9223372036854775808 to 9223372036854775807, got 9223372036854775808`,
		"-9223372036854775809": `snapshot: jobs[0] "A": tier: want an integer from -9223372036854775808 to 9223372036854775807, got -9223372036854775809`,
		"1.5":                  `snapshot: jobs[0] "A": tier: want an integer, got number 1.5`,
		"1e3":                  `snapshot: jobs[0] "A": tier: want an integer, got number 1e3`,
	} {
		_, err := DecodeSnapshot(strings.NewReader(snapJSON(`{"id":"A","gpusPerMember":1,"tier":` + n + `}`)))
		require.EqualError(t, err, want, n)
	}
	for n, whole := range map[string]bool{"12": true, "-12": true, "0": true, "1.5": false, "1e3": false, "-": false, "": false, "1E3": false} {
		require.Equal(t, whole, wholeNumber(n), n)
	}
}

// TestEncodeKeepsInstantOfSecondsOffset: RFC 3339 offsets have no
// seconds, so a time whose zone is offset by a number of seconds that is
// not whole minutes (local mean time, as Go's zone database gives for
// old dates) used to be written with its offset cut to the minute, and
// decoded 21 seconds off. Such times are written in UTC.
func TestEncodeKeepsInstantOfSecondsOffset(t *testing.T) {
	for _, loc := range []*time.Location{time.FixedZone("lmt", 9*60+21), time.FixedZone("west", -(9*60 + 21))} {
		now := time.Date(2026, 12, 2, 0, 0, 0, 7, loc)
		s := &Snapshot{Now: now, Jobs: []Job{{ID: "a", Tier: P3, Members: 1, GPUsPerMember: 1, Submitted: now.Add(-time.Hour)}}}
		var buf bytes.Buffer
		require.NoError(t, EncodeSnapshot(&buf, s))
		again, err := DecodeSnapshot(&buf)
		require.NoError(t, err)
		require.True(t, now.Equal(again.Now), "now %v, decoded %v", now, again.Now)
		require.True(t, s.Jobs[0].Submitted.Equal(again.Jobs[0].Submitted), "submitted %v, decoded %v", s.Jobs[0].Submitted, again.Jobs[0].Submitted)

		d := &Decision{
			Reservations: []Reservation{{Job: "a", Start: now.Add(time.Minute)}},
			Pending:      []Wait{{Job: "b", Reason: ReasonInsufficientGPUs, Start: now.Add(time.Hour)}},
		}
		buf.Reset()
		require.NoError(t, EncodeDecision(&buf, d))
		var out struct {
			Reservations []struct{ Start string }
			Pending      []struct{ Start string }
		}
		require.NoError(t, json.Unmarshal(buf.Bytes(), &out))
		for _, c := range []struct {
			s    string
			want time.Time
		}{{out.Reservations[0].Start, d.Reservations[0].Start}, {out.Pending[0].Start, d.Pending[0].Start}} {
			got, err := time.Parse(time.RFC3339Nano, c.s)
			require.NoError(t, err)
			require.True(t, got.Equal(c.want), "wrote %s for %v", c.s, c.want)
		}
	}
}

// TestDecodeDesignPolicy reads the design's example policy file with its
// matrix written out as the tier rules of section 1 (P0 preempts P1..P3,
// P1 preempts P2 and P3, P2 preempts P3, P3 nothing): every value but the
// size weight is a default (the example weighs size, 10; the default is 0),
// and the matrix is the default one.
func TestDecodeDesignPolicy(t *testing.T) {
	cfg, err := DecodeConfig(strings.NewReader(`{"backfill": "easy", "reservations": 1,
"enforceTimeLimits": true, "backfillOrder": "priority", "fairshare": {"halfLife": "168h", "weights": {"fairshare": 1000,
"age": 100, "size": 10}, "ageMax": "168h"}, "preemption": {"matrix": [[false, true, true, true],
[false, false, true, true], [false, false, false, true], [false, false, false, false]]}}`))
	require.NoError(t, err)
	require.Equal(t, EASY, cfg.Backfill)
	require.Equal(t, 1, cfg.Reservations)
	require.False(t, cfg.IgnoreTimeLimits)
	require.Equal(t, ByPriority, cfg.BackfillOrder)
	require.Equal(t, fairshare.DefaultHalfLife, cfg.FairShare.HalfLife)
	w := cfg.FairShare.Weights
	require.Equal(t, []float64{fairshare.DefaultFairShareWeight, fairshare.DefaultAgeWeight, 10},
		[]float64{w.FairShare, w.Age, w.Size})
	require.Zero(t, fairshare.DefaultSizeWeight)
	require.Equal(t, 168*time.Hour, w.AgeMax)
	require.Equal(t, preempt.DefaultMatrix(), cfg.Preemption)
}

// TestDecisionDoesNotDependOnHostZone: a time written with an offset that
// the host's zone uses decodes with that fixed offset, so a reservation
// months later (past a daylight-saving change of the host's zone) is
// written alike on every host. It used to take the host's zone, and
// print the same instant with the host's summer offset.
func TestDecisionDoesNotDependOnHostZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no zone database for the test's second host zone: %v", err)
	}
	in := `{"now":"2026-12-02T00:00:00+01:00","cluster":{"nodes":[{"name":"n0","gpus":8}]},"jobs":[
	{"id":"R","gpusPerMember":8,"state":"running","timeLimit":"4400h","started":"2026-12-01T00:00:00Z","allocation":[{"node":"n0","gpus":[0,1,2,3,4,5,6,7]}]},
	{"id":"P","gpusPerMember":8}]}`
	decide := func() string {
		s, err := DecodeSnapshot(strings.NewReader(in))
		require.NoError(t, err)
		d, err := New(Config{}).Step(s)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, EncodeDecision(&b, d))
		return b.String()
	}
	saved := time.Local
	defer func() { time.Local = saved }()
	time.Local = time.UTC
	utc := decide()
	time.Local = paris
	require.Equal(t, utc, decide())
	require.Contains(t, utc, `"start": "2027-06-02T09:00:00+01:00"`)
}
