package scheduler

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpusched/gpusched/topology"
)

// This file writes snapshots, decisions and forecasts in the layout of
// encoding/json's Encoder with two-space indentation and no HTML
// escaping (the layout that hosts of the step command read): one key per
// line, "[]" and "{}" when empty, U+2028 and U+2029 escaped, each byte
// of a string that is not UTF-8 written as \ufffd, and a newline after
// the document. The writer appends to one buffer; json_encode_oracle_test
// holds it to encoding/json byte for byte.

// jsonWriter writes one document into b; the first error sticks.
type jsonWriter struct {
	b     []byte
	depth int
	// empty: the container being written has no element yet; valued: a
	// member's key is written and its value comes next.
	empty, valued bool
	err           error
}

// newJSONWriter returns a writer with room for about size bytes.
func newJSONWriter(size int) *jsonWriter {
	return &jsonWriter{b: make([]byte, 0, size)}
}

// next writes what comes before a value or a key: nothing after a key,
// else the comma after the element before and the new line's indent.
func (w *jsonWriter) next() {
	if w.valued {
		w.valued = false
		return
	}
	if !w.empty && w.depth > 0 {
		w.b = append(w.b, ',')
	}
	if w.depth > 0 {
		w.b = append(w.b, '\n')
		w.b = appendIndent(w.b, w.depth)
	}
	w.empty = false
}

// appendIndent appends depth levels of two-space indentation.
func appendIndent(b []byte, depth int) []byte {
	const spaces = "                                "
	for n := 2 * depth; n > 0; n -= len(spaces) {
		b = append(b, spaces[:min(n, len(spaces))]...)
	}
	return b
}

// open writes the start of an object ('{') or an array ('[').
func (w *jsonWriter) open(c byte) {
	w.next()
	w.b = append(w.b, c)
	w.depth++
	w.empty = true
}

// close writes the end of the object ('}') or array (']') being written.
func (w *jsonWriter) close(c byte) {
	w.depth--
	if !w.empty {
		w.b = append(w.b, '\n')
		w.b = appendIndent(w.b, w.depth)
	}
	w.b = append(w.b, c)
	w.empty = false
	if w.depth == 0 {
		w.b = append(w.b, '\n')
	}
}

// str writes s as a string.
func (w *jsonWriter) str(s string) {
	w.next()
	w.b = appendQuoted(w.b, s)
}

// integer writes n.
func (w *jsonWriter) integer(n int) {
	w.next()
	w.b = strconv.AppendInt(w.b, int64(n), 10)
}

// number writes f as encoding/json does: the shortest decimal that reads
// back as f, in exponent form below 1e-6 and from 1e21 on. A number that
// is not finite is an error.
func (w *jsonWriter) number(f float64) {
	w.next()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if w.err == nil {
			w.err = fmt.Errorf("json: unsupported value: %v", f)
		}
		return
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if n := len(w.b); format == 'e' && n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
		w.b[n-2] = w.b[n-1] // e-07 is written e-7
		w.b = w.b[:n-1]
	}
}

// boolean writes v.
func (w *jsonWriter) boolean(v bool) {
	w.next()
	w.b = strconv.AppendBool(w.b, v)
}

// null writes null.
func (w *jsonWriter) null() {
	w.next()
	w.b = append(w.b, "null"...)
}

// member writes the key of an object member.
func (w *jsonWriter) member(key string) {
	w.str(key)
	w.b = append(w.b, ':', ' ')
	w.valued = true
}

// hexDigits are the digits of \u escapes, lower case as encoding/json
// writes them.
const hexDigits = "0123456789abcdef"

// appendQuoted appends s quoted as encoding/json quotes it without HTML
// escaping: \", \\, \b, \f, \n, \r and \t, other control characters as
// \u00xx, U+2028 and U+2029 escaped, and each byte that is not UTF-8 as
// \ufffd.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// writeList writes member key as an array with each element of list
// written by each, in order; with omitEmpty, an empty list writes nothing.
func writeList[T any](w *jsonWriter, key string, list []T, omitEmpty bool, each func(*T)) {
	if omitEmpty && len(list) == 0 {
		return
	}
	w.member(key)
	w.open('[')
	for i := range list {
		each(&list[i])
	}
	w.close(']')
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
	w.integer(n)
}

// timeMember writes a member whose value is t as formatTime writes it in
// RFC 3339, appended in place; omitZero leaves a zero t out.
func (w *jsonWriter) timeMember(key string, t time.Time, omitZero bool) {
	if t.IsZero() {
		w.strMember(key, "", omitZero)
		return
	}
	w.member(key)
	w.next()
	w.b = append(w.b, '"') // the layout's characters need no escapes
	w.b = wireTime(t).AppendFormat(w.b, time.RFC3339Nano)
	w.b = append(w.b, '"')
}

// numberMember writes a member whose value is a number.
func (w *jsonWriter) numberMember(key string, f float64) {
	w.member(key)
	w.number(f)
}

// flush writes the document to out with a single Write.
func (w *jsonWriter) flush(out io.Writer) error {
	if w.err != nil {
		return w.err
	}
	_, err := out.Write(w.b)
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
	w := newJSONWriter(snapshotSize(s))
	w.open('{')
	w.timeMember("now", s.Now, true)
	w.member("cluster")
	w.open('{')
	writeList(w, "levels", s.Cluster.Levels, true, func(l *string) { w.str(*l) })
	writeList(w, "nodes", s.Cluster.Nodes, true, w.node)
	w.close('}')
	writeList(w, "teams", s.Teams, true, w.team)
	writeList(w, "jobs", s.Jobs, true, w.job)
	writeList(w, "plan", s.Plan, true, func(r *Reservation) { w.reservation(*r) })
	w.close('}')
	return w.flush(out)
}

// node writes a node; its domains in the order of their levels' names.
func (w *jsonWriter) node(n *topology.Node) {
	w.open('{')
	w.strMember("name", n.Name, false)
	w.intMember("gpus", n.GPUs)
	w.strMember("gpuType", n.GPUType, true)
	if len(n.Domains) > 0 {
		w.member("domains")
		w.open('{')
		keys := make([]string, 0, len(n.Domains))
		for k := range n.Domains {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.strMember(k, n.Domains[k], false)
		}
		w.close('}')
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
	w.close('}')
}

// ints writes a list of integers, [] when empty.
func (w *jsonWriter) ints(list []int) {
	w.open('[')
	for _, n := range list {
		w.integer(n)
	}
	w.close(']')
}

// team writes a team.
func (w *jsonWriter) team(t *Team) {
	w.open('{')
	w.strMember("name", t.Name, false)
	w.numberMember("share", t.Share)
	w.numberMember("usage", t.Usage)
	w.strMember("parent", t.Parent, true)
	if t.Quota != nil {
		w.member("quota")
		w.open('{')
		w.intMember("gpus", t.Quota.GPUs)
		w.intMember("borrowLimit", t.Quota.BorrowLimit)
		if t.Quota.CPUMillis != 0 {
			w.intMember("cpuMillis", t.Quota.CPUMillis)
		}
		if t.Quota.MemoryMiB != 0 {
			w.intMember("memoryMiB", t.Quota.MemoryMiB)
		}
		w.close('}')
	}
	w.close('}')
}

// job writes a job: its enums and members always, its tier when set (an
// unset tier is left out, which decodes back to unset), its times and
// durations when not zero.
func (w *jsonWriter) job(j *Job) {
	w.open('{')
	w.strMember("id", j.ID, false)
	w.strMember("team", j.Team, true)
	if j.Tier.IsSet() {
		w.intMember("tier", j.Tier.Level(0))
	}
	w.strMember("kind", enumName(kindNames, int(j.Kind)), false)
	w.timeMember("submitted", j.Submitted, true)
	w.intMember("members", j.Members)
	w.intMember("gpusPerMember", j.GPUsPerMember)
	w.strMember("gpuType", j.GPUType, true)
	if j.MixGPUTypes {
		w.member("mixGPUTypes")
		w.boolean(true)
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
		w.open('{')
		w.strMember("required", j.Topology.Required, true)
		w.strMember("preferred", j.Topology.Preferred, true)
		w.close('}')
	}
	w.strMember("placement", enumName(placementNames, int(j.Placement)), false)
	w.strMember("group", j.Group, true)
	w.strMember("spreadLevel", j.SpreadLevel, true)
	w.strMember("state", enumName(stateNames, int(j.State)), false)
	w.timeMember("started", j.Started, true)
	w.timeMember("evictedAt", j.EvictedAt, true)
	if len(j.Allocation) > 0 {
		w.member("allocation")
		w.allocation(j.Allocation)
	}
	w.close('}')
}

// allocation writes an allocation, [] when empty; an entry without GPUs
// has "gpus": [].
func (w *jsonWriter) allocation(a topology.Allocation) {
	w.open('[')
	for _, ng := range a {
		w.open('{')
		w.strMember("node", ng.Node, false)
		w.member("gpus")
		w.ints(ng.GPUs)
		w.close('}')
	}
	w.close(']')
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
	w := newJSONWriter(decisionSize(d))
	w.open('{')
	writeList(w, "placements", d.Placements, false, func(p *Placement) {
		w.open('{')
		w.strMember("job", p.Job, false)
		w.member("allocation")
		w.allocation(p.Allocation)
		w.close('}')
	})
	writeList(w, "evictions", d.Evictions, false, func(e *Eviction) {
		w.open('{')
		w.strMember("job", e.Job, false)
		w.strMember("reason", string(e.Reason), false)
		w.strMember("by", e.By, true)
		w.strMember("grace", formatDuration(e.Grace), false)
		w.member("requeue")
		w.boolean(e.Requeue)
		w.close('}')
	})
	writeList(w, "reservations", d.Reservations, false, func(r *Reservation) { w.reservation(*r) })
	writeList(w, "pending", d.Pending, false, func(p *Wait) {
		w.open('{')
		w.strMember("job", p.Job, false)
		w.strMember("reason", string(p.Reason), false)
		w.strMember("message", p.Message, false)
		w.timeMember("start", p.Start, true)
		w.close('}')
	})
	w.timeMember("nextWake", d.NextWake, true)
	w.close('}')
	return w.flush(out)
}

// reservation writes a reservation, as a decision and a plan have it.
func (w *jsonWriter) reservation(r Reservation) {
	w.open('{')
	w.strMember("job", r.Job, false)
	w.timeMember("start", r.Start, false)
	w.member("allocation")
	w.allocation(r.Allocation)
	w.strMember("message", r.Message, true)
	w.close('}')
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
