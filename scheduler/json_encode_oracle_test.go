package scheduler

import (
	"math"
	"testing"

	"bytes"
	"encoding/json"
	"errors"
	"github.com/stretchr/testify/require"
	"io"
	"pgregory.net/rapid"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// This file keeps the encoders as they were written with encoding/json's
// reflection, as the oracle that the encoders of json_encode.go must
// match byte for byte.

type wireNode struct {
	Name          string            `json:"name"`
	GPUs          int               `json:"gpus"`
	GPUType       string            `json:"gpuType,omitempty"`
	Domains       map[string]string `json:"domains,omitempty"`
	State         *string           `json:"state,omitempty"`
	UnhealthyGPUs []int             `json:"unhealthyGPUs,omitempty"`
	CPUMillis     int               `json:"cpuMillis,omitempty"`
	MemoryMiB     int               `json:"memoryMiB,omitempty"`
}

type wireTeam struct {
	Name   string     `json:"name"`
	Share  float64    `json:"share"`
	Usage  float64    `json:"usage"`
	Parent string     `json:"parent,omitempty"`
	Quota  *wireQuota `json:"quota,omitempty"`
}

type wireQuota struct {
	GPUs        int `json:"gpus"`
	BorrowLimit int `json:"borrowLimit"`
	CPUMillis   int `json:"cpuMillis,omitempty"`
	MemoryMiB   int `json:"memoryMiB,omitempty"`
}

type wireTopology struct {
	Required  string `json:"required,omitempty"`
	Preferred string `json:"preferred,omitempty"`
}

type wireNodeGPUs struct {
	Node string `json:"node"`
	GPUs []int  `json:"gpus"`
}

type wireJob struct {
	ID              string         `json:"id"`
	Team            string         `json:"team,omitempty"`
	Tier            *int           `json:"tier,omitempty"`
	Kind            *string        `json:"kind,omitempty"`
	Submitted       *string        `json:"submitted,omitempty"`
	Members         *int           `json:"members,omitempty"`
	GPUsPerMember   int            `json:"gpusPerMember"`
	GPUType         string         `json:"gpuType,omitempty"`
	MixGPUTypes     bool           `json:"mixGPUTypes,omitempty"`
	CPUMillis       int            `json:"cpuMillis,omitempty"`
	MemoryMiB       int            `json:"memoryMiB,omitempty"`
	EligibleNodes   *[]string      `json:"eligibleNodes,omitempty"`
	TimeLimit       *string        `json:"timeLimit,omitempty"`
	CheckpointGrace *string        `json:"checkpointGrace,omitempty"`
	Topology        *wireTopology  `json:"topology,omitempty"`
	Placement       *string        `json:"placement,omitempty"`
	Group           string         `json:"group,omitempty"`
	SpreadLevel     string         `json:"spreadLevel,omitempty"`
	State           *string        `json:"state,omitempty"`
	Started         *string        `json:"started,omitempty"`
	EvictedAt       *string        `json:"evictedAt,omitempty"`
	Allocation      []wireNodeGPUs `json:"allocation,omitempty"`
}

type outSnapshot struct {
	Now     string           `json:"now,omitempty"`
	Cluster outCluster       `json:"cluster"`
	Teams   []wireTeam       `json:"teams,omitempty"`
	Jobs    []wireJob        `json:"jobs,omitempty"`
	Plan    []outReservation `json:"plan,omitempty"`
}

type outCluster struct {
	Levels []string   `json:"levels,omitempty"`
	Nodes  []wireNode `json:"nodes,omitempty"`
}

// encodeSnapshotOracle is EncodeSnapshot as it was: it writes s in the JSON form that [DecodeSnapshot] reads,
// indented by two spaces. Every key is written explicitly except those
// whose value is zero and whose default is zero too. Times are written in
// RFC 3339 with sub-second digits when they have them, so that decoding
// the output yields s again, for every s whose strings are valid UTF-8
// (JSON has no other text) and whose times lie in years 0 to 9999 (RFC
// 3339 has no others), as every snapshot DecodeSnapshot returns does.
func encodeSnapshotOracle(w io.Writer, s *Snapshot) error {
	if s == nil {
		return errors.New("snapshot: nil snapshot")
	}
	out := outSnapshot{Now: formatTime(s.Now, time.RFC3339Nano)}
	out.Cluster.Levels = s.Cluster.Levels
	for _, n := range s.Cluster.Nodes {
		st := enumName(nodeStateNames, int(n.State))
		out.Cluster.Nodes = append(out.Cluster.Nodes, wireNode{Name: n.Name, GPUs: n.GPUs, GPUType: n.GPUType,
			Domains: n.Domains, State: &st, UnhealthyGPUs: n.Unhealthy, CPUMillis: n.CPUMillis, MemoryMiB: n.MemoryMiB})
	}
	for _, t := range s.Teams {
		wt := wireTeam{Name: t.Name, Share: t.Share, Usage: t.Usage, Parent: t.Parent}
		if t.Quota != nil {
			wt.Quota = &wireQuota{GPUs: t.Quota.GPUs, BorrowLimit: t.Quota.BorrowLimit, CPUMillis: t.Quota.CPUMillis, MemoryMiB: t.Quota.MemoryMiB}
		}
		out.Teams = append(out.Teams, wt)
	}
	for i := range s.Jobs {
		out.Jobs = append(out.Jobs, outJob(&s.Jobs[i]))
	}
	for _, r := range s.Plan {
		out.Plan = append(out.Plan, outReserve(r))
	}
	return writeJSONOracle(w, out)
}

func outJob(j *Job) wireJob {
	ptr := func(s string) *string { return &s }
	tier, members := j.Tier.Level(0), j.Members
	w := wireJob{ID: j.ID, Team: j.Team, Members: &members, GPUsPerMember: j.GPUsPerMember,
		GPUType: j.GPUType, MixGPUTypes: j.MixGPUTypes, Group: j.Group, SpreadLevel: j.SpreadLevel,
		CPUMillis: j.CPUMillis, MemoryMiB: j.MemoryMiB,
		Kind:      ptr(enumName(kindNames, int(j.Kind))),
		State:     ptr(enumName(stateNames, int(j.State))),
		Placement: ptr(enumName(placementNames, int(j.Placement))),
	}
	if j.Tier.IsSet() {
		w.Tier = &tier
	}
	if j.EligibleNodes != nil {
		w.EligibleNodes = &j.EligibleNodes
	}
	if j.Topology != (TopologySpec{}) {
		w.Topology = &wireTopology{Required: j.Topology.Required, Preferred: j.Topology.Preferred}
	}
	for _, t := range []struct {
		dst **string
		t   time.Time
	}{{&w.Submitted, j.Submitted}, {&w.Started, j.Started}, {&w.EvictedAt, j.EvictedAt}} {
		if !t.t.IsZero() {
			*t.dst = ptr(formatTime(t.t, time.RFC3339Nano))
		}
	}
	if j.TimeLimit != 0 {
		w.TimeLimit = ptr(formatDuration(j.TimeLimit))
	}
	if j.CheckpointGrace != 0 {
		w.CheckpointGrace = ptr(formatDuration(j.CheckpointGrace))
	}
	w.Allocation = outAlloc(j.Allocation)
	if len(w.Allocation) == 0 {
		w.Allocation = nil
	}
	return w
}

type outDecision struct {
	Placements   []outPlacement   `json:"placements"`
	Evictions    []outEviction    `json:"evictions"`
	Reservations []outReservation `json:"reservations"`
	Pending      []outWait        `json:"pending"`
	NextWake     string           `json:"nextWake,omitempty"`
}

type outPlacement struct {
	Job        string         `json:"job"`
	Allocation []wireNodeGPUs `json:"allocation"`
}

type outEviction struct {
	Job     string `json:"job"`
	Reason  string `json:"reason"`
	By      string `json:"by,omitempty"`
	Grace   string `json:"grace"`
	Requeue bool   `json:"requeue"`
}

type outReservation struct {
	Job        string         `json:"job"`
	Start      string         `json:"start"`
	Allocation []wireNodeGPUs `json:"allocation"`
	Message    string         `json:"message,omitempty"`
}

type outWait struct {
	Job     string `json:"job"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Start   string `json:"start,omitempty"`
}

// encodeDecisionOracle is EncodeDecision as it was: it writes d in the JSON form of the step command, indented
// by two spaces and followed by a newline: the keys placements,
// evictions, reservations and pending, each a list (`[]` when empty) in
// the order of d. Times are RFC 3339 (a pending job's start is omitted
// when zero), graces are Go duration strings without zero units ("5m"
// for 5m0s, "1h30m", "0s"), which time.ParseDuration reads back, and an
// eviction's "by" is omitted when empty.
func encodeDecisionOracle(w io.Writer, d *Decision) error {
	if d == nil {
		return errors.New("decision: nil decision")
	}
	out := outDecision{
		Placements:   make([]outPlacement, 0, len(d.Placements)),
		Evictions:    make([]outEviction, 0, len(d.Evictions)),
		Reservations: make([]outReservation, 0, len(d.Reservations)),
		Pending:      make([]outWait, 0, len(d.Pending)),
		NextWake:     formatTime(d.NextWake, time.RFC3339Nano),
	}
	for _, p := range d.Placements {
		out.Placements = append(out.Placements, outPlacement{Job: p.Job, Allocation: outAlloc(p.Allocation)})
	}
	for _, e := range d.Evictions {
		out.Evictions = append(out.Evictions, outEviction{Job: e.Job, Reason: string(e.Reason), By: e.By,
			Grace: formatDuration(e.Grace), Requeue: e.Requeue})
	}
	for _, r := range d.Reservations {
		out.Reservations = append(out.Reservations, outReserve(r))
	}
	for _, p := range d.Pending {
		out.Pending = append(out.Pending, outWait{Job: p.Job, Reason: string(p.Reason), Message: p.Message,
			Start: formatTime(p.Start, time.RFC3339Nano)})
	}
	return writeJSONOracle(w, out)
}

func outReserve(r Reservation) outReservation {
	return outReservation{Job: r.Job, Start: formatTime(r.Start, time.RFC3339Nano), Allocation: outAlloc(r.Allocation), Message: r.Message}
}

type outForecast struct {
	Forecast []outEstimate `json:"forecast"`
}

type outEstimate struct {
	Job    string  `json:"job"`
	Start  *string `json:"start"`
	Reason *string `json:"reason,omitempty"`
}

// encodeForecastOracle is EncodeForecast written with encoding/json's
// reflection: a null start with its reason (even empty), or a start
// without one.
func encodeForecastOracle(w io.Writer, f Forecast) error {
	out := outForecast{Forecast: make([]outEstimate, 0, len(f.Jobs))}
	for _, e := range f.Jobs {
		oe := outEstimate{Job: e.Job}
		if e.Start.IsZero() {
			oe.Reason = &e.Reason
		} else {
			start := formatTime(e.Start, time.RFC3339Nano)
			oe.Start = &start
		}
		out.Forecast = append(out.Forecast, oe)
	}
	return writeJSONOracle(w, out)
}

func outAlloc(a topology.Allocation) []wireNodeGPUs {
	out := make([]wireNodeGPUs, 0, len(a))
	for _, s := range a {
		g := s.GPUs
		if g == nil {
			g = []int{}
		}
		out = append(out, wireNodeGPUs{Node: s.Node, GPUs: g})
	}
	return out
}

// writeJSON encodes v indented by two spaces, without HTML escaping, and
// writes it with a single Write.
func writeJSONOracle(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// weirdStrings are strings that JSON writers escape differently: control
// characters, quotes, HTML, the line and paragraph separators, bytes
// that are not UTF-8 and a cut multi-byte character.
var weirdStrings = []string{"", "a", "\x00\x01\b\f\n\r\t\x1f\x7f", `"\/`, "<&>", "\u2028\u2029", "\xff\xfe", "é\xc3", "😀", "\ufffd"}

// requireSameEncoding encodes s and d with the encoders and their oracles
// and requires the same bytes, or both an error.
func requireSameEncoding(t require.TestingT, s *Snapshot, d *Decision) {
	var got, want bytes.Buffer
	err, wantErr := EncodeSnapshot(&got, s), encodeSnapshotOracle(&want, s)
	require.Equal(t, wantErr != nil, err != nil, "snapshot: %v, oracle: %v", err, wantErr)
	if err == nil {
		require.Equal(t, want.String(), got.String())
	}
	got.Reset()
	want.Reset()
	require.NoError(t, EncodeDecision(&got, d))
	require.NoError(t, encodeDecisionOracle(&want, d))
	require.Equal(t, want.String(), got.String())
}

// TestEncodeMatchesOracle: the encoders write what encoding/json wrote,
// byte for byte, for the step command's samples and their decisions, the
// benchmark snapshot, and random snapshots (plans, CPU, memory and
// eligible nodes included), decisions and forecasts with strings,
// numbers and times of every kind.
func TestEncodeMatchesOracle(t *testing.T) {
	for _, path := range []string{designFile, "../examples/step/testdata/mixed.json"} {
		s := decodeFile(t, path)
		d, err := New(Config{}).Step(s)
		require.NoError(t, err)
		requireSameEncoding(t, s, d)
	}
	s := benchSnapshot(256, 1000)
	d, err := New(Config{}).Step(s)
	require.NoError(t, err)
	requireSameEncoding(t, s, d)
	requireSameEncoding(t, &Snapshot{}, &Decision{})

	rapid.Check(t, func(rt *rapid.T) {
		str := rapid.OneOf(rapid.SampledFrom(weirdStrings), rapid.String(), rapid.StringN(0, 8, -1))
		num := rapid.OneOf(rapid.Float64(), rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1e21, 1e20, 1e-6, 1e-7, 0.1, 86400.5, 5e-324, math.MaxFloat64}))
		tm := rapid.Custom(func(rt *rapid.T) time.Time {
			return time.Unix(rapid.Int64Range(-1e11, 2e11).Draw(rt, "sec"), rapid.Int64Range(0, 999999999).Draw(rt, "ns")).
				In(time.FixedZone("", rapid.IntRange(-86399, 86399).Draw(rt, "off")))
		})
		alloc := rapid.Custom(func(rt *rapid.T) topology.Allocation {
			var a topology.Allocation
			for range rapid.IntRange(0, 2).Draw(rt, "entries") {
				a = append(a, topology.NodeGPUs{Node: str.Draw(rt, "node"), GPUs: rapid.SliceOfN(rapid.IntRange(-3, 70), 0, 3).Draw(rt, "gpus")})
			}
			return a
		})
		s := &Snapshot{Now: tm.Draw(rt, "now"), Cluster: topology.Cluster{Levels: rapid.SliceOfN(str, 0, 2).Draw(rt, "levels")}}
		for range rapid.IntRange(0, 2).Draw(rt, "nodes") {
			s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: str.Draw(rt, "name"), GPUs: rapid.Int().Draw(rt, "gpus"),
				GPUType: str.Draw(rt, "type"), Domains: rapid.MapOfN(str, str, 0, 3).Draw(rt, "domains"),
				State: topology.NodeState(rapid.IntRange(0, 3).Draw(rt, "state")), Unhealthy: rapid.SliceOfN(rapid.Int(), 0, 2).Draw(rt, "bad"),
				CPUMillis: rapid.OneOf(rapid.Just(0), rapid.Int()).Draw(rt, "cpu"), MemoryMiB: rapid.OneOf(rapid.Just(0), rapid.Int()).Draw(rt, "mem")})
		}
		for range rapid.IntRange(0, 2).Draw(rt, "teams") {
			tm := Team{Name: str.Draw(rt, "team"), Parent: str.Draw(rt, "parent"), Share: num.Draw(rt, "share"), Usage: num.Draw(rt, "usage")}
			if rapid.Bool().Draw(rt, "quota") {
				tm.Quota = &Quota{GPUs: rapid.Int().Draw(rt, "q"), BorrowLimit: rapid.Int().Draw(rt, "b"),
					CPUMillis: rapid.OneOf(rapid.Just(0), rapid.Int()).Draw(rt, "qcpu"), MemoryMiB: rapid.OneOf(rapid.Just(0), rapid.Int()).Draw(rt, "qmem")}
			}
			s.Teams = append(s.Teams, tm)
		}
		for range rapid.IntRange(0, 2).Draw(rt, "jobs") {
			s.Jobs = append(s.Jobs, Job{ID: str.Draw(rt, "id"), Team: str.Draw(rt, "jteam"), Tier: TierN(rapid.Int().Draw(rt, "tier")),
				Kind: Kind(rapid.IntRange(0, 2).Draw(rt, "kind")), Submitted: tm.Draw(rt, "submitted"), Members: rapid.Int().Draw(rt, "members"),
				GPUsPerMember: rapid.Int().Draw(rt, "per"), GPUType: str.Draw(rt, "jtype"), MixGPUTypes: rapid.Bool().Draw(rt, "mix"),
				TimeLimit: time.Duration(rapid.Int64().Draw(rt, "limit")), CheckpointGrace: time.Duration(rapid.Int64().Draw(rt, "grace")),
				Topology:  TopologySpec{Required: str.Draw(rt, "req"), Preferred: str.Draw(rt, "pref")},
				Placement: PlacementMode(rapid.IntRange(0, 2).Draw(rt, "placement")), Group: str.Draw(rt, "group"),
				SpreadLevel: str.Draw(rt, "spread"), State: JobState(rapid.IntRange(0, 3).Draw(rt, "jstate")),
				Started: tm.Draw(rt, "started"), EvictedAt: tm.Draw(rt, "evicted"), Allocation: alloc.Draw(rt, "alloc"),
				CPUMillis: rapid.OneOf(rapid.Just(0), rapid.Int()).Draw(rt, "jcpu"), MemoryMiB: rapid.OneOf(rapid.Just(0), rapid.Int()).Draw(rt, "jmem"),
				EligibleNodes: rapid.OneOf(rapid.Just([]string(nil)), rapid.Just([]string{}), rapid.SliceOfN(str, 1, 2)).Draw(rt, "eligible")})
		}
		for range rapid.IntRange(0, 2).Draw(rt, "plan") {
			s.Plan = append(s.Plan, Reservation{Job: str.Draw(rt, "planjob"), Start: tm.Draw(rt, "planstart"),
				Allocation: alloc.Draw(rt, "planalloc"), Message: str.Draw(rt, "planmsg")})
		}
		d := &Decision{
			Placements:   []Placement{{Job: str.Draw(rt, "pjob"), Allocation: alloc.Draw(rt, "palloc")}},
			Evictions:    []Eviction{{Job: str.Draw(rt, "ejob"), Reason: EvictReason(str.Draw(rt, "ereason")), By: str.Draw(rt, "by"), Grace: time.Duration(rapid.Int64().Draw(rt, "egrace")), Requeue: rapid.Bool().Draw(rt, "requeue")}},
			Reservations: []Reservation{{Job: str.Draw(rt, "rjob"), Start: tm.Draw(rt, "rstart"), Allocation: alloc.Draw(rt, "ralloc")}},
			Pending:      []Wait{{Job: str.Draw(rt, "wjob"), Reason: Reason(str.Draw(rt, "wreason")), Message: str.Draw(rt, "msg"), Start: tm.Draw(rt, "wstart")}},
		}
		requireSameEncoding(rt, s, d)
		var f Forecast
		for range rapid.IntRange(0, 3).Draw(rt, "estimates") {
			e := Estimate{Job: str.Draw(rt, "ejobf"), Reason: str.Draw(rt, "reasonf")}
			if rapid.Bool().Draw(rt, "bounded") {
				e.Start, e.Reason = tm.Draw(rt, "startf"), ""
			}
			f.Jobs = append(f.Jobs, e)
		}
		var got, want bytes.Buffer
		require.NoError(rt, EncodeForecast(&got, f))
		require.NoError(rt, encodeForecastOracle(&want, f))
		require.Equal(rt, want.String(), got.String())
	})
}
