package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// The JSON form of snapshots and decisions as written: pointer fields
// are written even when they point to a zero value.

type wireNode struct {
	Name          string            `json:"name"`
	GPUs          int               `json:"gpus"`
	GPUType       string            `json:"gpuType,omitempty"`
	Domains       map[string]string `json:"domains,omitempty"`
	State         *string           `json:"state,omitempty"`
	UnhealthyGPUs []int             `json:"unhealthyGPUs,omitempty"`
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
	Now     string     `json:"now,omitempty"`
	Cluster outCluster `json:"cluster"`
	Teams   []wireTeam `json:"teams,omitempty"`
	Jobs    []wireJob  `json:"jobs,omitempty"`
}

type outCluster struct {
	Levels []string   `json:"levels,omitempty"`
	Nodes  []wireNode `json:"nodes,omitempty"`
}

// EncodeSnapshot writes s in the JSON form that [DecodeSnapshot] reads,
// indented by two spaces. Every key is written explicitly except those
// whose value is zero and whose default is zero too. Times are written in
// RFC 3339 with sub-second digits when they have them, so that decoding
// the output yields s again, for every s whose strings are valid UTF-8
// (JSON has no other text) and whose times lie in years 0 to 9999 (RFC
// 3339 has no others), as every snapshot DecodeSnapshot returns does.
func EncodeSnapshot(w io.Writer, s *Snapshot) error {
	if s == nil {
		return errors.New("snapshot: nil snapshot")
	}
	out := outSnapshot{Now: formatTime(s.Now, time.RFC3339Nano)}
	out.Cluster.Levels = s.Cluster.Levels
	for _, n := range s.Cluster.Nodes {
		st := enumName(nodeStateNames, int(n.State))
		out.Cluster.Nodes = append(out.Cluster.Nodes, wireNode{Name: n.Name, GPUs: n.GPUs, GPUType: n.GPUType,
			Domains: n.Domains, State: &st, UnhealthyGPUs: n.Unhealthy})
	}
	for _, t := range s.Teams {
		wt := wireTeam{Name: t.Name, Share: t.Share, Usage: t.Usage, Parent: t.Parent}
		if t.Quota != nil {
			wt.Quota = &wireQuota{GPUs: t.Quota.GPUs, BorrowLimit: t.Quota.BorrowLimit}
		}
		out.Teams = append(out.Teams, wt)
	}
	for i := range s.Jobs {
		out.Jobs = append(out.Jobs, outJob(&s.Jobs[i]))
	}
	return writeJSON(w, out)
}

func outJob(j *Job) wireJob {
	ptr := func(s string) *string { return &s }
	tier, members := j.Tier, j.Members
	w := wireJob{ID: j.ID, Team: j.Team, Tier: &tier, Members: &members, GPUsPerMember: j.GPUsPerMember,
		GPUType: j.GPUType, Group: j.Group, SpreadLevel: j.SpreadLevel,
		Kind:      ptr(enumName(kindNames, int(j.Kind))),
		State:     ptr(enumName(stateNames, int(j.State))),
		Placement: ptr(enumName(placementNames, int(j.Placement))),
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
}

type outWait struct {
	Job     string `json:"job"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Start   string `json:"start,omitempty"`
}

// formatDuration writes d as a Go duration string without the zero
// minutes and seconds that time.Duration.String ends with: "5m" for
// 5m0s, "24h" for 24h0m0s, "1h30m" for 1h30m0s, and as String does
// otherwise ("0s", "1m30s", "1.5s", "1h0m30s"). time.ParseDuration reads
// it back to d.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
		if strings.HasSuffix(s, "h0m") {
			s = s[:len(s)-2]
		}
	}
	return s
}

// EncodeDecision writes d in the JSON form of the step command, indented
// by two spaces and followed by a newline: the keys placements,
// evictions, reservations and pending, each a list (`[]` when empty) in
// the order of d. Times are RFC 3339 (a pending job's start is omitted
// when zero), graces are Go duration strings without zero units ("5m"
// for 5m0s, "1h30m", "0s"), which time.ParseDuration reads back, and an
// eviction's "by" is omitted when empty.
func EncodeDecision(w io.Writer, d *Decision) error {
	if d == nil {
		return errors.New("decision: nil decision")
	}
	out := outDecision{
		Placements:   make([]outPlacement, 0, len(d.Placements)),
		Evictions:    make([]outEviction, 0, len(d.Evictions)),
		Reservations: make([]outReservation, 0, len(d.Reservations)),
		Pending:      make([]outWait, 0, len(d.Pending)),
	}
	for _, p := range d.Placements {
		out.Placements = append(out.Placements, outPlacement{Job: p.Job, Allocation: outAlloc(p.Allocation)})
	}
	for _, e := range d.Evictions {
		out.Evictions = append(out.Evictions, outEviction{Job: e.Job, Reason: string(e.Reason), By: e.By,
			Grace: formatDuration(e.Grace), Requeue: e.Requeue})
	}
	for _, r := range d.Reservations {
		out.Reservations = append(out.Reservations, outReservation{Job: r.Job,
			Start: formatTime(r.Start, time.RFC3339Nano), Allocation: outAlloc(r.Allocation)})
	}
	for _, p := range d.Pending {
		out.Pending = append(out.Pending, outWait{Job: p.Job, Reason: string(p.Reason), Message: p.Message,
			Start: formatTime(p.Start, time.RFC3339Nano)})
	}
	return writeJSON(w, out)
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

// formatTime writes t in layout, in a zone RFC 3339 can write (see
// wireTime); "" for the zero time.
func formatTime(t time.Time, layout string) string {
	if t.IsZero() {
		return ""
	}
	return wireTime(t).Format(layout)
}

// wireTime is t in a zone RFC 3339 can write: an offset of whole
// minutes. Its offsets have no seconds, so a zone offset by a number of
// seconds that is not whole minutes (local mean time, which Go's zone
// database gives old dates) would be written cut to the minute and read
// back seconds off; such a time is written in UTC, the same instant.
func wireTime(t time.Time) time.Time {
	if _, off := t.Zone(); off%60 != 0 {
		return t.UTC()
	}
	return t
}

// writeJSON encodes v indented by two spaces, without HTML escaping, and
// writes it with a single Write.
func writeJSON(w io.Writer, v any) error {
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

// PolicyFile is a decoded policy file: every key of the JSON form, with
// defaults applied. [PolicyFile.Config] turns it into a [Config]. Get one
// from [DecodePolicy]: a PolicyFile built in Go has no defaults applied,
// so the zero PolicyFile does not enforce time limits (the JSON form

// enumName is the name of enum value i, "?i" for one beyond names.
func enumName(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("?%d", i)
}
