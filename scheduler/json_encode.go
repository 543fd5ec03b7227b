package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpusched/gpusched/topology"
)

// This file writes snapshots and decisions with a jsontext.Encoder, in
// the layout of encoding/json's Encoder with two-space indentation and no
// HTML escaping (the layout that hosts of the step command read):
// one key per line, "[]" and "{}" when empty, U+2028 and U+2029 escaped,
// and each byte of a string that is not UTF-8 written as \ufffd.

// jsonWriter writes one document; the first error sticks.
type jsonWriter struct {
	enc *jsontext.Encoder
	err error
}

// newJSONWriter returns a writer into buf.
func newJSONWriter(buf *bytes.Buffer) *jsonWriter {
	return &jsonWriter{enc: jsontext.NewEncoder(buf, jsontext.Multiline(true), jsontext.WithIndent("  "),
		jsontext.EscapeForJS(true), jsontext.EscapeForHTML(false), jsontext.PreserveRawStrings(true),
		jsontext.AllowDuplicateNames(true))}
}

// token writes t.
func (w *jsonWriter) token(t jsontext.Token) {
	if w.err == nil {
		w.err = w.enc.WriteToken(t)
	}
}

// str writes s, with each byte that is not UTF-8 as \ufffd.
func (w *jsonWriter) str(s string) {
	if utf8.ValidString(s) {
		w.token(jsontext.String(s))
		return
	}
	if w.err == nil {
		w.err = w.enc.WriteValue(quoteInvalidUTF8(s))
	}
}

// quoteInvalidUTF8 quotes s, which is not UTF-8, as encoding/json does.
func quoteInvalidUTF8(s string) jsontext.Value {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// member writes the key of an object member.
func (w *jsonWriter) member(key string) { w.str(key) }

// writeList writes member key as an array with each element of list
// written by each, in order; with omitEmpty, an empty list writes nothing.
func writeList[T any](w *jsonWriter, key string, list []T, omitEmpty bool, each func(*T)) {
	if omitEmpty && len(list) == 0 {
		return
	}
	w.member(key)
	w.token(jsontext.BeginArray)
	for i := range list {
		each(&list[i])
	}
	w.token(jsontext.EndArray)
}

// strMember writes a member whose value is a string; omitEmpty leaves it
// out when s is "".
func (w *jsonWriter) strMember(key, s string, omitEmpty bool) {
	if s == "" && omitEmpty {
		return
	}
	w.member(key)
	w.str(s)
}

// intMember writes a member whose value is an integer.
func (w *jsonWriter) intMember(key string, n int) {
	w.member(key)
	w.token(jsontext.Int(int64(n)))
}

// numberMember writes a member whose value is a number.
func (w *jsonWriter) numberMember(key string, f float64) {
	w.member(key)
	w.token(jsontext.Float(f))
}

// flush writes the document to out with a single Write.
func (w *jsonWriter) flush(buf *bytes.Buffer, out io.Writer) error {
	if w.err != nil {
		return w.err
	}
	_, err := out.Write(buf.Bytes())
	return err
}

// EncodeSnapshot writes s in the JSON form that [DecodeSnapshot] reads,
// indented by two spaces. Every key is written explicitly except those
// whose value is zero and whose default is zero too. Times are written in
// RFC 3339 with sub-second digits when they have them, so that decoding
// the output yields s again, for every s whose strings are valid UTF-8
// (JSON has no other text) and whose times lie in years 0 to 9999 (RFC
// 3339 has no others), as every snapshot DecodeSnapshot returns does.
// A share or usage that is not finite is an error (JSON has no such
// numbers).
func EncodeSnapshot(out io.Writer, s *Snapshot) error {
	if s == nil {
		return errors.New("snapshot: nil snapshot")
	}
	var buf bytes.Buffer
	buf.Grow(snapshotSize(s))
	w := newJSONWriter(&buf)
	w.token(jsontext.BeginObject)
	w.strMember("now", formatTime(s.Now, time.RFC3339Nano), true)
	w.member("cluster")
	w.token(jsontext.BeginObject)
	writeList(w, "levels", s.Cluster.Levels, true, func(l *string) { w.str(*l) })
	writeList(w, "nodes", s.Cluster.Nodes, true, w.node)
	w.token(jsontext.EndObject)
	writeList(w, "teams", s.Teams, true, w.team)
	writeList(w, "jobs", s.Jobs, true, w.job)
	writeList(w, "plan", s.Plan, true, func(r *Reservation) { w.reservation(*r) })
	w.token(jsontext.EndObject)
	return w.flush(&buf, out)
}

// node writes a node; its domains in the order of their levels' names.
func (w *jsonWriter) node(n *topology.Node) {
	w.token(jsontext.BeginObject)
	w.strMember("name", n.Name, false)
	w.intMember("gpus", n.GPUs)
	w.strMember("gpuType", n.GPUType, true)
	if len(n.Domains) > 0 {
		w.member("domains")
		w.token(jsontext.BeginObject)
		keys := make([]string, 0, len(n.Domains))
		for k := range n.Domains {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.strMember(k, n.Domains[k], false)
		}
		w.token(jsontext.EndObject)
	}
	w.strMember("state", enumName(nodeStateNames, int(n.State)), false)
	if len(n.Unhealthy) > 0 {
		w.member("unhealthyGPUs")
		w.ints(n.Unhealthy)
	}
	if n.CPUMillis != 0 {
		w.intMember("cpuMillis", n.CPUMillis)
	}
	if n.MemoryMiB != 0 {
		w.intMember("memoryMiB", n.MemoryMiB)
	}
	w.token(jsontext.EndObject)
}

// ints writes a list of integers, [] when empty.
func (w *jsonWriter) ints(list []int) {
	w.token(jsontext.BeginArray)
	for _, n := range list {
		w.token(jsontext.Int(int64(n)))
	}
	w.token(jsontext.EndArray)
}

// team writes a team.
func (w *jsonWriter) team(t *Team) {
	w.token(jsontext.BeginObject)
	w.strMember("name", t.Name, false)
	w.numberMember("share", t.Share)
	w.numberMember("usage", t.Usage)
	w.strMember("parent", t.Parent, true)
	if t.Quota != nil {
		w.member("quota")
		w.token(jsontext.BeginObject)
		w.intMember("gpus", t.Quota.GPUs)
		w.intMember("borrowLimit", t.Quota.BorrowLimit)
		if t.Quota.CPUMillis != 0 {
			w.intMember("cpuMillis", t.Quota.CPUMillis)
		}
		if t.Quota.MemoryMiB != 0 {
			w.intMember("memoryMiB", t.Quota.MemoryMiB)
		}
		w.token(jsontext.EndObject)
	}
	w.token(jsontext.EndObject)
}

// job writes a job: its enums and members always, its tier when set (an
// unset tier is left out, which decodes back to unset), its times and
// durations when not zero.
func (w *jsonWriter) job(j *Job) {
	w.token(jsontext.BeginObject)
	w.strMember("id", j.ID, false)
	w.strMember("team", j.Team, true)
	if j.Tier.IsSet() {
		w.intMember("tier", j.Tier.Level(0))
	}
	w.strMember("kind", enumName(kindNames, int(j.Kind)), false)
	w.strMember("submitted", formatTime(j.Submitted, time.RFC3339Nano), true)
	w.intMember("members", j.Members)
	w.intMember("gpusPerMember", j.GPUsPerMember)
	w.strMember("gpuType", j.GPUType, true)
	if j.MixGPUTypes {
		w.member("mixGPUTypes")
		w.token(jsontext.True)
	}
	if j.CPUMillis != 0 {
		w.intMember("cpuMillis", j.CPUMillis)
	}
	if j.MemoryMiB != 0 {
		w.intMember("memoryMiB", j.MemoryMiB)
	}
	if j.EligibleNodes != nil {
		writeList(w, "eligibleNodes", j.EligibleNodes, false, func(n *string) { w.str(*n) })
	}
	if j.TimeLimit != 0 {
		w.strMember("timeLimit", formatDuration(j.TimeLimit), false)
	}
	if j.CheckpointGrace != 0 {
		w.strMember("checkpointGrace", formatDuration(j.CheckpointGrace), false)
	}
	if j.Topology != (TopologySpec{}) {
		w.member("topology")
		w.token(jsontext.BeginObject)
		w.strMember("required", j.Topology.Required, true)
		w.strMember("preferred", j.Topology.Preferred, true)
		w.token(jsontext.EndObject)
	}
	w.strMember("placement", enumName(placementNames, int(j.Placement)), false)
	w.strMember("group", j.Group, true)
	w.strMember("spreadLevel", j.SpreadLevel, true)
	w.strMember("state", enumName(stateNames, int(j.State)), false)
	w.strMember("started", formatTime(j.Started, time.RFC3339Nano), true)
	w.strMember("evictedAt", formatTime(j.EvictedAt, time.RFC3339Nano), true)
	if len(j.Allocation) > 0 {
		w.member("allocation")
		w.allocation(j.Allocation)
	}
	w.token(jsontext.EndObject)
}

// allocation writes an allocation, [] when empty; an entry without GPUs
// has "gpus": [].
func (w *jsonWriter) allocation(a topology.Allocation) {
	w.token(jsontext.BeginArray)
	for _, ng := range a {
		w.token(jsontext.BeginObject)
		w.strMember("node", ng.Node, false)
		w.member("gpus")
		w.ints(ng.GPUs)
		w.token(jsontext.EndObject)
	}
	w.token(jsontext.EndArray)
}

// EncodeDecision writes d in the JSON form of the step command, indented
// by two spaces and followed by a newline: the keys placements,
// evictions, reservations and pending, each a list (`[]` when empty) in
// the order of d. Times are RFC 3339 (a pending job's start is omitted
// when zero), graces are Go duration strings without zero units ("5m"
// for 5m0s, "1h30m", "0s"), which time.ParseDuration reads back, and an
// eviction's "by" and a reservation's "message" (Reservation.Message) are
// omitted when empty. Last comes "nextWake", the
// RFC 3339 time of Decision.NextWake, omitted when zero. It writes to out
// once, when the whole decision is encoded, so after an error other than
// out's own, out has received nothing.
func EncodeDecision(out io.Writer, d *Decision) error {
	if d == nil {
		return errors.New("decision: nil decision")
	}
	var buf bytes.Buffer
	buf.Grow(decisionSize(d))
	w := newJSONWriter(&buf)
	w.token(jsontext.BeginObject)
	writeList(w, "placements", d.Placements, false, func(p *Placement) {
		w.token(jsontext.BeginObject)
		w.strMember("job", p.Job, false)
		w.member("allocation")
		w.allocation(p.Allocation)
		w.token(jsontext.EndObject)
	})
	writeList(w, "evictions", d.Evictions, false, func(e *Eviction) {
		w.token(jsontext.BeginObject)
		w.strMember("job", e.Job, false)
		w.strMember("reason", string(e.Reason), false)
		w.strMember("by", e.By, true)
		w.strMember("grace", formatDuration(e.Grace), false)
		w.member("requeue")
		w.token(jsontext.Bool(e.Requeue))
		w.token(jsontext.EndObject)
	})
	writeList(w, "reservations", d.Reservations, false, func(r *Reservation) { w.reservation(*r) })
	writeList(w, "pending", d.Pending, false, func(p *Wait) {
		w.token(jsontext.BeginObject)
		w.strMember("job", p.Job, false)
		w.strMember("reason", string(p.Reason), false)
		w.strMember("message", p.Message, false)
		w.strMember("start", formatTime(p.Start, time.RFC3339Nano), true)
		w.token(jsontext.EndObject)
	})
	w.strMember("nextWake", formatTime(d.NextWake, time.RFC3339Nano), true)
	w.token(jsontext.EndObject)
	return w.flush(&buf, out)
}

// reservation writes a reservation, as a decision and a plan have it.
func (w *jsonWriter) reservation(r Reservation) {
	w.token(jsontext.BeginObject)
	w.strMember("job", r.Job, false)
	w.strMember("start", formatTime(r.Start, time.RFC3339Nano), false)
	w.member("allocation")
	w.allocation(r.Allocation)
	w.strMember("message", r.Message, true)
	w.token(jsontext.EndObject)
}

// snapshotSize estimates the length of s in JSON, so that the buffer it
// is written to seldom grows.
func snapshotSize(s *Snapshot) int {
	n := 256 + 160*len(s.Cluster.Nodes) + 128*len(s.Teams) + 448*len(s.Jobs)
	for _, r := range s.Plan {
		n += 96 + allocationSize(r.Allocation)
	}
	for i := range s.Jobs {
		n += allocationSize(s.Jobs[i].Allocation)
	}
	return n
}

// decisionSize estimates the length of d in JSON, as snapshotSize does.
func decisionSize(d *Decision) int {
	n := 128 + 96*len(d.Placements) + 160*len(d.Evictions) + 128*len(d.Reservations) + 128*len(d.Pending)
	for _, p := range d.Placements {
		n += allocationSize(p.Allocation)
	}
	for _, r := range d.Reservations {
		n += allocationSize(r.Allocation) + len(r.Message)
	}
	for _, p := range d.Pending {
		n += len(p.Message)
	}
	return n
}

// allocationSize estimates the length of a in JSON.
func allocationSize(a topology.Allocation) int {
	n := 16
	for _, ng := range a {
		n += 96 + len(ng.Node) + 16*len(ng.GPUs)
	}
	return n
}

// enumName is the name of enum value i, "?i" for one beyond names.
func enumName(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("?%d", i)
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
