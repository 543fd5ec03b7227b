package scheduler

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpusched/gpusched/topology"
)

// This file and the other json*.go files are the JSON contract of the
// step command: snapshots and policy files in, decisions out. Decoding is
// strict: unknown fields (including fields that match a known one only
// when case is ignored), repeated fields, nulls, trailing data and
// unknown enum strings are errors that name the field. The syntax is
// read as github.com/go-json-experiment/json's jsontext package reads it,
// by internal/jsonscan, which is held to it (see json_reader.go).
//
// Null is not a value. A default applies to a key left out, never to a
// key given as null: a null where an optional value may stand could mean
// "unset", or be a bug of the producer that a default would hide (tier
// 3, no time limit, no quota, every GPU healthy), so it is an error like
// a value of the wrong type ("jobs[0] \"A\": tier: want an integer, got
// null").

// Enum spellings, in the order of the Go constants.
var (
	kindNames      = []string{Training: "training", Inference: "inference"}
	stateNames     = []string{Pending: "pending", Running: "running", Evicting: "evicting"}
	placementNames = []string{Pack: "pack", Spread: "spread"}
	nodeStateNames = []string{topology.Ready: "ready", topology.Draining: "draining", topology.Down: "down"}
	backfillNames  = []string{EASY: "easy", Conservative: "conservative", NoBackfill: "none"}
	orderNames     = []string{ByPriority: "priority", ShortestFirst: "shortest"}
	queueNames     = []string{"multifactor", "tier"}
)

// snapshotErr is the mkErr of snapshots: a *ValidationError.
func snapshotErr(field, msg string) error { return &ValidationError{Field: field, Msg: msg} }

// configErr is the mkErr of policy files: "config: FIELD: MSG", or
// "config: FIELD MSG" when MSG states a rule ("must ...").
func configErr(field, msg string) error {
	if strings.HasPrefix(msg, "must ") {
		return fmt.Errorf("config: %s %s", field, msg)
	}
	return fmt.Errorf("config: %s: %s", field, msg)
}

// DecodeSnapshot reads one snapshot in the JSON form of the step command
// and validates it with [Validate]. Decoding is strict: unknown or

// repeated fields, nulls, data after the object, unknown enum strings,
// malformed RFC 3339 times and malformed or negative durations are
// errors. Every error, from decoding or validation, is a
// *ValidationError naming the field ("snapshot: jobs[3] \"C\":
// gpusPerMember must be >= 1, got 0", "snapshot: jobs[0] \"A\":
// allocation[1]: want an object, got null"); JSON syntax errors, input
// that is not UTF-8 and escapes of half a surrogate pair ("\ud800") give
// the line, column and byte offset. Values quoted from the input are cut
// to 64 bytes, marked with "…", so that an error line stays short.
//
// The keys are the names of the fields of [Snapshot], [topology.Cluster],
// [topology.Node], [Team], [Quota], [Job], [TopologySpec] and
// [topology.NodeGPUs] in lower camel case ("now", "gpusPerMember",
// "checkpointGrace", "evictedAt", "borrowLimit", "id"), except a node's
// Unhealthy, which is "unhealthyGPUs"; enums are the strings their String
// methods return ("running", "inference", "spread", "draining").
// The step command's testdata/mixed.json uses every key.
//
// Defaults, for keys left out (a key given as null is an error, not a
// default): members 1, tier 3, kind training, state pending, placement
// pack, node state ready; no time limit, no checkpoint grace, no quota,
// no unhealthy GPUs, and no teams or jobs. A team's "share" and "usage"
// default to 0, and a share of 0 entitles a listed team to nothing (a
// team that jobs name but the list leaves out gets share 1). "now" and a
// job's "id" and "gpusPerMember" have no default. A job without
// "submitted" counts as submitted at the zero time, before every other.
func DecodeSnapshot(r io.Reader) (*Snapshot, error) { return decodeSnapshot(r, DefaultTiers) }

// DecodeSnapshot is the package's [DecodeSnapshot], validating the
// snapshot as [Scheduler.Validate] does: jobs may have any tier of the
// scheduler's policy, such as one of the six tiers of a six-tier
// preemption matrix. It checks the policy first, as Step does: a policy
// Step refuses (see [Config]) is a config error here, whatever the
// snapshot, and the input is not read.
func (s *Scheduler) DecodeSnapshot(r io.Reader) (*Snapshot, error) {
	if err := s.cfg.checkModes(); err != nil {
		return nil, err
	}
	return decodeSnapshot(r, s.cfg.tiers())
}

// MaxDocumentBytes is the largest snapshot or policy file that
// [DecodeSnapshot] and [DecodeConfig] read: 256 MiB, about seven times
// the JSON of a snapshot of 16,384 nodes and 100,000 jobs. A longer input
// is an error, reported once that many bytes are read.
const MaxDocumentBytes = 256 << 20

// readChunk is how much readDocument reads before it looks at what the
// input starts with.
const readChunk = 64 << 10

// readDocument reads a whole document of kind doc ("snapshot", "config")
// from r: at most limit bytes, and no more than its first chunk when the
// input cannot be JSON (its first byte that is not white space can start
// no JSON value), so that an endless stream of such bytes ends in the
// syntax error it holds. An error of r is wrapped ("snapshot: read:
// ..."); the others are built by mk.
func readDocument(r io.Reader, doc string, mk mkErr, limit int) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(min(sizeHint(r), limit) + bytes.MinRead)
	first := -1 // the offset of the first byte that is not white space
	for {
		n, err := io.CopyN(&buf, r, readChunk)
		if err != nil && err != io.EOF {
			return nil, &readError{doc: doc, err: err}
		}
		if buf.Len() > limit {
			return nil, mk("json", fmt.Sprintf("input longer than %d bytes, the most that is read", limit))
		}
		if err == io.EOF || n < readChunk {
			return buf.Bytes(), nil
		}
		if first < 0 {
			data := buf.Bytes()
			if k := len(data) - len(bytes.TrimLeft(data[len(data)-int(n):], " \t\r\n")); k < len(data) {
				first = k
				if !strings.ContainsRune("{[\"-0123456789tfn", rune(data[k])) {
					return completeUTF8(data), nil
				}
			}
		}
	}
}

// readError is an error of the reader of a document, which it wraps:
// "snapshot: read: ERR".
type readError struct {
	doc string // "snapshot" or "config"
	err error
}

func (e *readError) Error() string { return e.doc + ": read: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// sizeHint is how many bytes r holds, when it can tell (a reader of a
// slice or string, a regular file), else 0.
func sizeHint(r io.Reader) int {
	switch v := r.(type) {
	case interface{ Len() int }:
		return v.Len()
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return int(min(fi.Size(), int64(MaxDocumentBytes)))
		}
	}
	return 0
}

// completeUTF8 is data without the bytes at its end that begin a UTF-8
// sequence that data cuts short.
func completeUTF8(data []byte) []byte {
	for cut := 1; cut <= 3 && cut <= len(data); cut++ {
		if c := data[len(data)-cut]; c >= 0xc0 {
			if utf8.FullRune(data[len(data)-cut:]) {
				return data
			}
			return data[:len(data)-cut]
		}
	}
	return data
}

func decodeSnapshot(r io.Reader, tiers int) (*Snapshot, error) {
	data, err := readDocument(r, "snapshot", snapshotErr, MaxDocumentBytes)
	if err != nil {
		return nil, err
	}
	s, err := decodeSnapshotData(data)
	if err == nil {
		err = validateTiers(s, tiers)
	}
	if err != nil {
		return nil, clipErr(err)
	}
	return s, nil
}

// clipErr cuts the long quoted strings of err's message (see clipQuoted);
// a *ValidationError stays one.
func clipErr(err error) error {
	var ve *ValidationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ve):
		if f, m := clipQuoted(ve.Field), clipQuoted(ve.Msg); f != ve.Field || m != ve.Msg {
			return &ValidationError{Field: f, Msg: m}
		}
		return err
	}
	if m := clipQuoted(err.Error()); m != err.Error() {
		return errors.New(m)
	}
	return err
}

// document reads a whole document with read, which reads its value, and
// reports, in this order of precedence: an offence (once the member of
// the document's object that holds it is complete JSON), a syntax error,
// the first value of the wrong type and data after the value.
func (r *jsonReader) document(data []byte, read func() error) error {
	err := read()
	if err != nil && err != errSyntax {
		for r.dec.StackDepth() > 1 {
			if terr := r.dec.ReadToken(); terr != nil {
				err = errSyntax
				break
			}
		}
	}
	switch {
	case err == errSyntax:
		return syntaxError(r.mk, data)
	case err != nil:
		return err
	case r.typeErr != nil:
		return r.typeErr
	}
	return r.endDocument(data)
}

// enumIndex is the index of the name b in names.
func enumIndex(names []string, b []byte) (int, bool) {
	for i, n := range names {
		if n == string(b) {
			return i, true
		}
	}
	return 0, false
}

// unknownEnum is the message of an unknown enum string s.
func unknownEnum(s string, names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	want := strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	return fmt.Sprintf("unknown value %s (want %s)", quoteClipped(s), want)
}

// utcSeconds parses s when it is a time as EncodeSnapshot writes one in
// whole seconds of UTC, "2006-01-02T15:04:05Z", and a valid one that
// parseTime takes as it is: a date that exists, no leap second, not the
// zero time. It gives what parseTime gives for it, and false for
// anything else, which parseTime reads the long way. The fast path calls
// it on the text in place.
func utcSeconds[T string | []byte](s T) (time.Time, bool) {
	if len(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return time.Time{}, false
	}
	ok := true
	num := func(from, to int) int {
		n := 0
		for i := from; i < to; i++ {
			if s[i] < '0' || s[i] > '9' {
				ok = false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n
	}
	y, mo, d := num(0, 4), num(5, 7), num(8, 10)
	h, mi, sec := num(11, 13), num(14, 16), num(17, 19)
	if !ok || mo < 1 || mo > 12 || d < 1 || d > daysIn(time.Month(mo), y) || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	return t, !t.IsZero()
}

// daysIn is the number of days of month m in year y.
func daysIn(m time.Month, y int) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// parseTime parses an RFC 3339 date-time. Beyond what time.Parse takes,
// it accepts a lower-case "t" and "z" and a leap second (23:59:60, read
// as the next second: time.Time has no leap seconds); it refuses what
// time.Parse takes beyond RFC 3339: a comma before the fraction, an
// offset past 23:59, and the zero time, which means unset. It also
// refuses a time after the end of year 9999 in UTC
// (9999-12-31T23:59:59.999999999Z), the last RFC 3339 can write there,
// such as a leap second at that very end or a time with an offset west
// of UTC that falls after it: decisions could not be written.
func parseTime(mk mkErr, field, s string) (time.Time, error) {
	if t, ok := utcSeconds(s); ok {
		return t, nil
	}
	return parseTimeLong(mk, field, s)
}

// parseTimeLong is parseTime without its shortcut for whole seconds of
// UTC (see utcSeconds).
func parseTimeLong(mk mkErr, field, s string) (time.Time, error) {
	bad := func() (time.Time, error) {
		return time.Time{}, mk(field, fmt.Sprintf("bad time %s (want RFC 3339, e.g. 2026-12-02T00:00:00Z)", quoteClipped(s)))
	}
	// date "T" hh ":" mm ":" ss [fraction] ("Z" / offset): the fixed
	// positions come first.
	if len(s) < 20 || strings.ContainsRune(s, ',') {
		return bad()
	}
	b := []byte(s)
	if b[10] == 't' {
		b[10] = 'T'
	}
	if last := len(b) - 1; b[last] == 'z' {
		b[last] = 'Z'
	}
	leap := b[17] == '6' && b[18] == '0'
	if leap {
		b[17], b[18] = '5', '9'
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return bad()
	}
	if b[len(b)-1] != 'Z' && b[len(b)-2] > '5' {
		return bad() // offset minutes past 59
	}
	_, off := t.Zone()
	if off <= -24*3600 || off >= 24*3600 {
		return bad()
	}
	if t.Location() == time.Local {
		// Parse takes an offset that the host's zone uses for that zone,
		// whose offset can differ at other instants: keep the offset as
		// written, so that times the decision derives from it do not
		// depend on the host.
		t = t.In(time.FixedZone("", off))
	}
	if leap {
		if u := t.UTC(); u.Second() != 59 || u.Minute() != 59 {
			return bad() // a leap second ends a UTC hour's last minute
		}
		t = t.Add(time.Second)
	}
	if t.IsZero() {
		return time.Time{}, mk(field, fmt.Sprintf("time %s is the zero time, which means unset", quoteClipped(s)))
	}
	if t.UTC().Year() > 9999 {
		return time.Time{}, mk(field, fmt.Sprintf("time %s is after 9999-12-31T23:59:59.999999999Z, the last time a decision can write in UTC", quoteClipped(s)))
	}
	return t, nil
}

func parseDuration(mk mkErr, field, s string) (time.Duration, error) {
	if d, ok := wholeDuration(s); ok {
		return d, nil
	}
	return parseDurationLong(mk, field, s)
}

// wholeDuration parses s when it is a duration in whole hours, minutes
// and seconds, as EncodeSnapshot writes one ("9h3m", "51m", "1h0m30s"):
// up to three numbers of up to six digits, each followed by its unit, h
// before m before s. It gives what time.ParseDuration gives for it, and
// false for anything else, which parseDuration reads the long way. The
// fast path calls it on the text in place.
func wholeDuration[T string | []byte](s T) (time.Duration, bool) {
	units := [...]struct {
		name byte
		size time.Duration
	}{{'h', time.Hour}, {'m', time.Minute}, {'s', time.Second}}
	var d time.Duration
	next := 0 // the first unit that may still come
	for i := 0; i < len(s); i++ {
		n, digits := 0, 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			n = n*10 + int(s[i]-'0')
			digits++
		}
		if digits == 0 || digits > 6 || i == len(s) {
			return 0, false
		}
		for next < len(units) && units[next].name != s[i] {
			next++
		}
		if next == len(units) {
			return 0, false
		}
		d += time.Duration(n) * units[next].size
		next++
	}
	return d, next > 0
}

// parseDurationLong is parseDuration without its shortcut for whole
// units (see wholeDuration).
func parseDurationLong(mk mkErr, field, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, mk(field, fmt.Sprintf("bad duration %s", quoteClipped(s)))
	}
	if d < 0 {
		return 0, mk(field, fmt.Sprintf("must be >= 0, got %s", formatDuration(d)))
	}
	return d, nil
}
