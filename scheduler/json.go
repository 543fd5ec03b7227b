package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// This file is the JSON contract of the step command: snapshots and policy
// files in, decisions out. Decoding is strict: unknown fields (including
// fields that match a known one only when case is ignored), repeated
// fields, nulls, trailing data and unknown enum strings are errors that
// name the field.
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

// Wire types. Pointer fields tell an absent key (default applies) from an
// explicit value; times and durations travel as strings.

type wireSnapshot struct {
	Now     *string           `json:"now"`
	Cluster json.RawMessage   `json:"cluster"`
	Teams   []json.RawMessage `json:"teams"`
	Jobs    []json.RawMessage `json:"jobs"`
}

type wireCluster struct {
	Levels []string          `json:"levels"`
	Nodes  []json.RawMessage `json:"nodes"`
}

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

// mkErr builds the error of one document kind from a field and a message.
type mkErr func(field, msg string) error

func snapshotErr(field, msg string) error { return &ValidationError{Field: field, Msg: msg} }

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
// the line, column and byte offset.
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
// preemption matrix. It does not check the policy itself: a snapshot it
// returns, Step still refuses when the policy's modes are unknown (see
// [Config]).
func (s *Scheduler) DecodeSnapshot(r io.Reader) (*Snapshot, error) {
	return decodeSnapshot(r, s.cfg.tiers())
}

func decodeSnapshot(r io.Reader, tiers int) (*Snapshot, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("snapshot: read: %w", err)
	}
	var w wireSnapshot
	if err := decodeDoc(snapshotErr, data, &w); err != nil {
		return nil, err
	}
	s := &Snapshot{}
	if w.Now != nil {
		if s.Now, err = parseTime(snapshotErr, "now", *w.Now); err != nil {
			return nil, err
		}
	}
	if err := decodeCluster(w.Cluster, &s.Cluster); err != nil {
		return nil, err
	}
	if len(w.Teams) > 0 {
		s.Teams = make([]Team, len(w.Teams))
	}
	for i, raw := range w.Teams {
		if err := decodeTeam(i, raw, &s.Teams[i]); err != nil {
			return nil, err
		}
	}
	if len(w.Jobs) > 0 {
		s.Jobs = make([]Job, len(w.Jobs))
	}
	for i, raw := range w.Jobs {
		if err := decodeJob(i, raw, &s.Jobs[i]); err != nil {
			return nil, err
		}
	}
	if err := validateTiers(s, tiers); err != nil {
		return nil, err
	}
	return s, nil
}

func decodeCluster(raw json.RawMessage, c *topology.Cluster) error {
	var w wireCluster
	if err := decodePart(snapshotErr, func() string { return "cluster" }, raw, &w); err != nil {
		return err
	}
	if len(w.Levels) > 0 {
		c.Levels = w.Levels
	}
	if len(w.Nodes) > 0 {
		c.Nodes = make([]topology.Node, len(w.Nodes))
	}
	for i, raw := range w.Nodes {
		var wn wireNode
		if err := decodePart(snapshotErr, func() string { return elemName("cluster: nodes", i, raw, "name") }, raw, &wn); err != nil {
			return err
		}
		f := fmt.Sprintf("cluster: nodes[%d] %q", i, wn.Name)
		n := &c.Nodes[i]
		n.Name, n.GPUs, n.GPUType, n.Domains = wn.Name, wn.GPUs, wn.GPUType, wn.Domains
		if len(wn.UnhealthyGPUs) > 0 {
			n.Unhealthy = wn.UnhealthyGPUs
		}
		st, err := parseEnum[topology.NodeState](snapshotErr, f+": state", wn.State, topology.Ready, nodeStateNames)
		if err != nil {
			return err
		}
		n.State = st
	}
	return nil
}

func decodeTeam(i int, raw json.RawMessage, t *Team) error {
	var w wireTeam
	if err := decodePart(snapshotErr, func() string { return elemName("teams", i, raw, "name") }, raw, &w); err != nil {
		return err
	}
	*t = Team{Name: w.Name, Parent: w.Parent, Share: w.Share, Usage: w.Usage}
	if w.Quota != nil {
		t.Quota = &Quota{GPUs: w.Quota.GPUs, BorrowLimit: w.Quota.BorrowLimit}
	}
	return nil
}

func decodeJob(i int, raw json.RawMessage, j *Job) error {
	var w wireJob
	if err := decodePart(snapshotErr, func() string { return elemName("jobs", i, raw, "id") }, raw, &w); err != nil {
		return err
	}
	f := fmt.Sprintf("jobs[%d] %q", i, w.ID)
	*j = Job{ID: w.ID, Team: w.Team, Tier: 3, Members: 1, GPUsPerMember: w.GPUsPerMember,
		GPUType: w.GPUType, Group: w.Group, SpreadLevel: w.SpreadLevel}
	if w.Tier != nil {
		j.Tier = *w.Tier
	}
	if w.Members != nil {
		j.Members = *w.Members
	}
	if w.Topology != nil {
		j.Topology = TopologySpec{Required: w.Topology.Required, Preferred: w.Topology.Preferred}
	}
	var err error
	if j.Kind, err = parseEnum[Kind](snapshotErr, f+": kind", w.Kind, Training, kindNames); err != nil {
		return err
	}
	if j.State, err = parseEnum[JobState](snapshotErr, f+": state", w.State, Pending, stateNames); err != nil {
		return err
	}
	if j.Placement, err = parseEnum[PlacementMode](snapshotErr, f+": placement", w.Placement, Pack, placementNames); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		src  *string
		dst  *time.Time
	}{{"submitted", w.Submitted, &j.Submitted}, {"started", w.Started, &j.Started}, {"evictedAt", w.EvictedAt, &j.EvictedAt}} {
		if t.src == nil {
			continue
		}
		if *t.dst, err = parseTime(snapshotErr, f+": "+t.name, *t.src); err != nil {
			return err
		}
	}
	for _, d := range []struct {
		name string
		src  *string
		dst  *time.Duration
	}{{"timeLimit", w.TimeLimit, &j.TimeLimit}, {"checkpointGrace", w.CheckpointGrace, &j.CheckpointGrace}} {
		if d.src == nil {
			continue
		}
		if *d.dst, err = parseDuration(snapshotErr, f+": "+d.name, *d.src); err != nil {
			return err
		}
	}
	if len(w.Allocation) > 0 {
		j.Allocation = make(topology.Allocation, len(w.Allocation))
		for k, a := range w.Allocation {
			j.Allocation[k] = topology.NodeGPUs{Node: a.Node, GPUs: a.GPUs}
		}
	}
	return nil
}

// elemName is the field name of element i of a list: `jobs[3] "C"` when
// the element's key field (id or name) can be read, else `jobs[3]`.
func elemName(list string, i int, raw json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	var s *string // nil for a null
	if json.Unmarshal(raw, &m) == nil && json.Unmarshal(m[key], &s) == nil && s != nil {
		return fmt.Sprintf("%s[%d] %q", list, i, *s)
	}
	return fmt.Sprintf("%s[%d]", list, i)
}

// decodeDoc decodes a whole document into v: exactly one JSON value, an
// object, with nothing but white space after it.
func decodeDoc(mk mkErr, data []byte, v any) error {
	// JSON is UTF-8 (RFC 8259). encoding/json reads each byte that is
	// not as U+FFFD, so two different names could decode the same and
	// be reported as one name repeated, or pass as a name never given.
	if bytes.HasPrefix(data, []byte("\uFEFF")) {
		return mk("json", "input starts with a byte-order mark (U+FEFF), which JSON does not allow (line 1, column 1, offset 0)")
	}
	if bad := invalidUTF8(data); bad >= 0 {
		return mk("json", fmt.Sprintf("invalid UTF-8 (%s)", position(data, int64(bad))))
	}
	// So is an escaped half of a UTF-16 surrogate pair without its other
	// half ("\ud800"): JSON's grammar allows it, but it names no
	// character, and encoding/json reads it as U+FFFD too.
	if bad := loneSurrogate(data); bad >= 0 {
		return mk("json", fmt.Sprintf("lone surrogate %s names no character (%s)", data[bad:bad+6], position(data, int64(bad))))
	}
	// Unknown and repeated keys and nulls first, so that the error names
	// where the key is (the decoder names only the key, and takes the
	// rest). strictCheck reads only the first value, so trailing data
	// does not hide one; what is not JSON passes this check and is
	// reported by the decoder.
	if path, msg, ok := strictCheck(data, reflect.TypeOf(v)); !ok {
		if path == "" {
			path = "json"
		}
		return mk(path, msg)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return mk("json", "empty input (want one JSON object)")
		}
		return jsonErr(mk, "", data, err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		rest := bytes.TrimLeft(data[end:], " \t\r\n")
		return mk("json", fmt.Sprintf("trailing data after the object (%s)", position(data, int64(len(data)-len(rest)))))
	}
	return nil
}

// invalidUTF8 returns the offset of the first byte of data that is not
// part of a UTF-8 encoding, or -1 when data is UTF-8. O(len(data)).
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1 // the common case, at the speed of utf8.Valid
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1 // not reached: data is not valid
}

// loneSurrogate returns the offset of the first \u escape in a string
// of data that is half of a UTF-16 surrogate pair without the other half
// (a high surrogate \ud800–\udbff not followed by a low one
// \udc00–\udfff, or a low one on its own), or -1 when there is none.
// What lies outside strings is not read; malformed input is left to the
// decoder. O(len(data)).
func loneSurrogate(data []byte) int {
	if !bytes.Contains(data, []byte(`\u`)) {
		return -1 // the common case
	}
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			if v, ok := hex4(data, i+2); ok && data[i+1] == 'u' && v >= 0xd800 && v <= 0xdfff {
				if w, ok := hex4(data, i+8); ok && v < 0xdc00 && data[i+6] == '\\' && data[i+7] == 'u' && w >= 0xdc00 && w <= 0xdfff {
					i += 11 // a pair: past both escapes
					continue
				}
				return i
			}
			i++ // past the escaped character
		}
	}
	return -1
}

// hex4 reads the four hexadecimal digits of data at i, if there are.
func hex4(data []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(data) {
		return 0, false
	}
	var v rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// decodePart decodes one already well-formed part of a document (raw may
// be empty: the key was absent) into v; errors name the field that field
// returns, called only on error.
func decodePart(mk mkErr, field func() string, raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if path, msg, ok := strictCheck(raw, reflect.TypeOf(v)); !ok {
		f := field()
		if path != "" {
			f += ": " + path
		}
		return mk(f, msg)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonErr(mk, field(), raw, err)
	}
	return nil
}

// rawMessageType is the type of a part of a document whose check is left
// to its own decoding.
var rawMessageType = reflect.TypeFor[json.RawMessage]()

// strictCheck finds, in document order, what encoding/json accepts and
// the contract does not: an object key that names no field of t exactly
// (encoding/json matches keys without regard to case), a key that an
// object repeats (encoding/json keeps the last value), and a null
// (encoding/json leaves the value as it was, so that a null would pass
// for a zero or a default). It reports false, the message ("unknown
// field \"x\"", "duplicate field \"x\"", "want an integer, got null")
// and the path of the object that holds the key, or of the null
// ("fairshare.weights", "allocation[0]"; "" for raw itself), when it
// finds one. A null where a scalar belongs in a list is named by the
// list, as the decoder's type errors are ("allocation[0].gpus").
// Values of the wrong type are left to the decoder to report; a
// json.RawMessage is left to the decoding of the part it holds.
//
// What is not JSON passes this check, to be reported by the decoder;
// where it is decides what is reported. When t is a struct or a map,
// raw's members are taken one at a time, as encoding/json's Decoder
// reads them: the first offence is reported once the member that holds
// it has been read to its end and is JSON, whatever follows, and an
// offence in a member that is not JSON is not. Nothing after that member
// is read, so trailing data does not hide an offence. When t is a list,
// raw must be JSON as a whole, as for encoding/json's Unmarshal.
//
// It reads raw once, up to the end of the member that holds the first
// offence, keeping the path to where it is and the schema of the value
// there (see [strictScan] and [strictSchema]).
func strictCheck(raw []byte, t reflect.Type) (path, msg string, ok bool) {
	sc := strictSchemaOf(t)
	switch {
	case sc.kind == schemaRaw:
		return "", "", true
	case string(bytes.Trim(raw, " \t\r\n")) == "null":
		return "", sc.nullMsg, false
	}
	s := &strictScan{data: raw}
	s.path = s.pathBuf[:0]
	switch sc.kind {
	case schemaStruct, schemaMap:
		s.skipSpace()
		if s.peek() != '{' || !s.object(sc, true) || !s.found {
			return "", "", true
		}
	case schemaList:
		if !s.value(sc) || !s.skipSpace() || s.pos != len(raw) || !s.found {
			return "", "", true
		}
	default:
		return "", "", true // a scalar, not null
	}
	return s.errPath, s.errMsg, false
}

// schemaKind is what strictCheck looks for in a value of a Go type.
type schemaKind uint8

const (
	schemaScalar schemaKind = iota // a null only
	schemaRaw                      // nothing: a json.RawMessage
	schemaList                     // a null; in an array, each element
	schemaStruct                   // a null; in an object, unknown and repeated keys and each member
	schemaMap                      // a null; in an object, repeated keys and each member
)

// strictSchema is what strictCheck knows of a Go type: the kind of
// check, what a null is called, and what its elements or members hold.
// Pointers are looked through: a *T has the schema of T.
type strictSchema struct {
	kind schemaKind
	// nullMsg is the message for a null in the place of the value:
	// "want an integer, got null".
	nullMsg string
	// elem is the schema of a list's elements or of a map's values.
	elem *strictSchema
	// scalarElems is set for a list of scalars: a null element is named
	// by the list, not by its index.
	scalarElems bool
	// fields maps the key of each field of a struct, the name in its json
	// tag ("" for none), to its index in the struct; where two fields
	// have one key, the first.
	fields map[string]int
	// fieldSchemas are the schemas of a struct's fields, by index.
	fieldSchemas []*strictSchema
}

// strictSchemas caches the schema of each type that strictCheck was
// given (reflect.Type to *strictSchema).
var strictSchemas sync.Map

// strictSchemaOf returns the schema of t, built once.
func strictSchemaOf(t reflect.Type) *strictSchema {
	if sc, ok := strictSchemas.Load(t); ok {
		return sc.(*strictSchema)
	}
	sc, _ := strictSchemas.LoadOrStore(t, buildStrictSchema(t, map[reflect.Type]*strictSchema{}))
	return sc.(*strictSchema)
}

// buildStrictSchema builds the schema of t; building holds the schemas
// under construction, so that a type that holds itself ends.
func buildStrictSchema(t reflect.Type, building map[reflect.Type]*strictSchema) *strictSchema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if sc := building[t]; sc != nil {
		return sc
	}
	sc := &strictSchema{nullMsg: fmt.Sprintf("want %s, got null", kindOf(t))}
	building[t] = sc
	switch {
	case t == rawMessageType:
		sc.kind = schemaRaw
	case t.Kind() == reflect.Slice:
		sc.kind = schemaList
		sc.elem = buildStrictSchema(t.Elem(), building)
		sc.scalarElems = !isContainer(t.Elem())
	case t.Kind() == reflect.Map:
		sc.kind = schemaMap
		sc.elem = buildStrictSchema(t.Elem(), building)
	case t.Kind() == reflect.Struct:
		sc.kind = schemaStruct
		sc.fields = make(map[string]int, t.NumField())
		sc.fieldSchemas = make([]*strictSchema, t.NumField())
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if _, dup := sc.fields[name]; !dup {
				sc.fields[name] = i
			}
			sc.fieldSchemas[i] = buildStrictSchema(f.Type, building)
		}
	}
	return sc
}

// maxJSONDepth is how deeply encoding/json lets arrays and objects nest
// in one value it reads: deeper is a syntax error.
const maxJSONDepth = 10000

// strictScan is one run of strictCheck over its input: a recursive
// descent over the bytes that checks the syntax as encoding/json does
// and, where a schema is given, the contract.
type strictScan struct {
	data []byte
	pos  int // the next byte to read
	// depth counts the arrays and objects open in the value read as a
	// whole: the input, or a member of the outermost object.
	depth int
	// path holds a step for each object member and array element that
	// the value being read is in, outermost first, where a schema is
	// checked.
	path    []pathStep
	pathBuf [8]pathStep // path's first array: deep enough for the contract
	// found is set with errPath and errMsg at the first offence; from
	// then on the rest is only scanned.
	found           bool
	errPath, errMsg string
}

// pathStep is one step of the path to a value: an object member or an
// array element.
type pathStep struct {
	key         []byte // the member's key, unquoted
	index       int    // the element's index
	inArray     bool   // an element, not a member
	scalarElems bool   // an element of a list of scalars
}

// fail records an offence at the value being read, unless one was found
// before.
func (s *strictScan) fail(msg string) {
	if s.found {
		return
	}
	s.found, s.errMsg = true, msg
	// The path is built from the inside out, as the nesting of the
	// values calls for: a null scalar element is named by its list.
	p := ""
	for i := len(s.path) - 1; i >= 0; i-- {
		switch st := s.path[i]; {
		case !st.inArray:
			p = joinPath(string(st.key), p)
		case p == "" && st.scalarElems:
			// A null scalar element: the path is the list's.
		default:
			p = joinPath(fmt.Sprintf("[%d]", st.index), p)
		}
	}
	s.errPath = p
}

// peek returns the next byte, or 0 at the end of the input.
func (s *strictScan) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// skipSpace moves past JSON white space; it reports true, to be chained.
func (s *strictScan) skipSpace() bool {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return true
		}
	}
	return true
}

// value reads one value, after white space, and checks it against sc
// (nil: none). It reports false if the input is not JSON there.
func (s *strictScan) value(sc *strictSchema) bool {
	s.skipSpace()
	switch s.peek() {
	case '{':
		return s.object(sc, false)
	case '[':
		return s.array(sc)
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		if !s.literal("null") {
			return false
		}
		if sc != nil && sc.kind != schemaRaw {
			s.fail(sc.nullMsg)
		}
		return true
	}
	return s.number()
}

// object reads an object at its '{', checking its keys and members
// against sc when sc is a struct or a map. At the top (the input
// itself), it stops after the member that holds the first offence, and
// its own '{' does not count in depth: encoding/json reads such an
// object a member at a time, each member's value as a whole.
func (s *strictScan) object(sc *strictSchema, top bool) bool {
	s.pos++ // '{'
	if !top {
		if s.depth++; s.depth > maxJSONDepth {
			return false
		}
	}
	if sc != nil && sc.kind != schemaStruct && sc.kind != schemaMap {
		sc = nil // not an object: the decoder reports the type
	}
	s.skipSpace()
	if s.peek() == '}' {
		return s.closeObject(top)
	}
	var seen keySet
	for {
		if s.peek() != '"' {
			return false
		}
		checked := sc != nil && !s.found
		var key []byte
		ok := false
		if checked {
			key, ok = s.key()
		} else {
			_, ok = s.str()
		}
		if !ok || !s.skipSpace() || s.peek() != ':' {
			return false
		}
		s.pos++
		// What the member holds, nil when it is not checked.
		var elem *strictSchema
		if checked {
			i := -1 // the field's index; -1 for a map's key
			switch sc.kind {
			case schemaMap:
				elem = sc.elem
			case schemaStruct:
				var known bool
				if i, known = sc.fields[string(key)]; known {
					elem = sc.fieldSchemas[i]
				} else {
					s.fail(fmt.Sprintf("unknown field %q", key))
				}
			}
			if elem != nil && seen.add(i, key) {
				s.fail(fmt.Sprintf("duplicate field %q", key))
				elem = nil
			}
		}
		if elem != nil {
			s.path = append(s.path, pathStep{key: key})
		}
		if !s.value(elem) {
			return false
		}
		if elem != nil {
			s.path = s.path[:len(s.path)-1]
		}
		if top && s.found {
			return true // the member that holds it is well-formed: report
		}
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
			s.skipSpace()
		case '}':
			return s.closeObject(top)
		default:
			return false
		}
	}
}

// closeObject reads the '}' of an object; it reports true, to be
// returned.
func (s *strictScan) closeObject(top bool) bool {
	s.pos++
	if !top {
		s.depth--
	}
	return true
}

// array reads an array at its '[', checking its elements against sc's
// when sc is a list.
func (s *strictScan) array(sc *strictSchema) bool {
	s.pos++ // '['
	if s.depth++; s.depth > maxJSONDepth {
		return false
	}
	if sc != nil && sc.kind != schemaList {
		sc = nil // not an array: the decoder reports the type
	}
	s.skipSpace()
	if s.peek() == ']' {
		s.pos++
		s.depth--
		return true
	}
	for i := 0; ; i++ {
		checked := sc != nil && !s.found
		var elem *strictSchema
		if checked {
			elem = sc.elem
			s.path = append(s.path, pathStep{index: i, inArray: true, scalarElems: sc.scalarElems})
		}
		if !s.value(elem) {
			return false
		}
		if checked {
			s.path = s.path[:len(s.path)-1]
		}
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// str reads a string at its '"'. It reports whether the string is JSON,
// and whether it is plain: without escapes or bytes past ASCII, so that
// its value is the bytes between the quotes.
func (s *strictScan) str() (plain, ok bool) {
	s.pos++ // '"'
	plain = true
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return plain, true
		case c < 0x20:
			return false, false
		case c == '\\':
			plain = false
			s.pos++
			switch s.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos++
			case 'u':
				s.pos++
				for range 4 {
					if !isHex(s.peek()) {
						return false, false
					}
					s.pos++
				}
			default:
				return false, false
			}
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			s.pos++
		}
	}
	return false, false
}

// key reads an object's key at its '"' and returns its value as
// encoding/json reads it: escapes resolved, and each byte that is not
// UTF-8 (and each lone surrogate) as U+FFFD. The value of a plain key
// is a part of the input.
func (s *strictScan) key() (val []byte, ok bool) {
	start := s.pos
	switch plain, ok := s.str(); {
	case !ok:
		return nil, false
	case plain:
		return s.data[start+1 : s.pos-1], true
	}
	var v string
	if json.Unmarshal(s.data[start:s.pos], &v) != nil {
		return nil, false // not JSON after all; str would have said so
	}
	return []byte(v), true
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// literal reads true, false or null; what follows is left to the reader
// of the enclosing value.
func (s *strictScan) literal(lit string) bool {
	if end := s.pos + len(lit); end > len(s.data) || string(s.data[s.pos:end]) != lit {
		return false
	}
	s.pos += len(lit)
	return true
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *strictScan) number() bool {
	if s.peek() == '-' {
		s.pos++
	}
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.pos++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits; it reports false for none.
func (s *strictScan) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

// keySet is the set of keys an object has given so far, for finding a
// repeated one without allocating for the few keys most objects have.
type keySet struct {
	fields uint64          // the struct fields up to index 63, by index
	few    [8][]byte       // the first other keys
	n      int             // how many of few are used
	more   map[string]bool // the others
}

// add adds key, the key of struct field i (i < 0 for a map key), and
// reports whether it was there before.
func (k *keySet) add(i int, key []byte) bool {
	if 0 <= i && i < 64 {
		had := k.fields&(1<<i) != 0
		k.fields |= 1 << i
		return had
	}
	for _, f := range k.few[:k.n] {
		if bytes.Equal(f, key) {
			return true
		}
	}
	if k.more[string(key)] {
		return true
	}
	if k.n < len(k.few) {
		k.few[k.n] = key
		k.n++
		return false
	}
	if k.more == nil {
		k.more = map[string]bool{}
	}
	k.more[string(key)] = true
	return false
}

// joinPath puts a field or index in front of a path below it.
func joinPath(head, rest string) string {
	if rest == "" || strings.HasPrefix(rest, "[") {
		return head + rest
	}
	return head + "." + rest
}

// jsonErr turns an error of encoding/json into one naming the field.
func jsonErr(mk mkErr, field string, data []byte, err error) error {
	join := func(sub string) string {
		switch {
		case field == "" && sub == "":
			return "json"
		case field == "":
			return sub
		case sub == "":
			return field
		}
		return field + ": " + sub
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the bad one included.
		return mk("json", fmt.Sprintf("%s (%s)", se.Error(), position(data, se.Offset-1)))
	case errors.As(err, &te):
		sub := te.Field
		if p := valuePath(data, te.Offset, isContainer(te.Type)); p != "" {
			sub = p // with the indices of the objects in arrays
		}
		if n, ok := strings.CutPrefix(te.Value, "number "); ok {
			switch {
			case kindOf(te.Type) == "a number":
				// A number where a number belongs: only its size is wrong.
				return mk(join(sub), fmt.Sprintf("want a number within ±%v, got %s", math.MaxFloat64, n))
			case kindOf(te.Type) == "an integer" && wholeNumber(n):
				// An integer where one belongs, too large for it.
				return mk(join(sub), fmt.Sprintf("want an integer from %s, got %s", intRange(te.Type), n))
			}
		}
		return mk(join(sub), fmt.Sprintf("want %s, got %s", kindOf(te.Type), te.Value))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return mk("json", fmt.Sprintf("unexpected end of input (%s)", position(data, int64(len(data)))))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return mk(join(""), strings.TrimPrefix(err.Error(), "json: "))
	}
	return mk(join(""), err.Error())
}

// valuePath returns the path of the value of data that ends at byte off,
// or of the object or array that opens just before it (where
// encoding/json reports a type error for each: "allocation[1].gpus"):
// keys joined by dots, and the index of each element that is an object
// or an array. A scalar's own index is left out, as in the validation
// errors, unless own is set: a scalar where an object or an array
// belongs stands for an entry of its own ("allocation[1]"). "" when no
// value ends or opens there.
func valuePath(data []byte, off int64, own bool) string {
	type frame struct {
		array bool
		idx   int
		key   string
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(data))
	// render is the path of the value in the innermost frame; own keeps
	// its index when that frame is an array.
	render := func(own bool) string {
		var b strings.Builder
		for i, f := range stack {
			switch {
			case f.array && (own || i < len(stack)-1):
				fmt.Fprintf(&b, "[%d]", f.idx)
			case !f.array && f.key != "":
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			}
		}
		return b.String()
	}
	// expectKey: the next token is a key of the innermost object. It
	// follows from the innermost frame alone: true after '{' and after a
	// value in an object, false after '[', a key, and a value in an array.
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				switch at := dec.InputOffset(); {
				case at == off:
					return render(true) // an object or an array: with its index
				case at > off:
					return ""
				}
				stack = append(stack, frame{array: d == '['})
				expectKey = d == '{'
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		} else if expectKey {
			k, ok := tok.(string)
			if !ok {
				return "" // not JSON
			}
			stack[len(stack)-1].key = k
			expectKey = false
			continue
		} else if dec.InputOffset() >= off {
			return render(own)
		}
		// A value ended (a scalar, or an object or array just closed):
		// the next token is a key of the enclosing object or the next
		// element of the enclosing array.
		if len(stack) == 0 {
			return ""
		}
		top := &stack[len(stack)-1]
		if top.array {
			top.idx++
		}
		expectKey = !top.array
	}
}

// isContainer reports whether t (or what it points to) is an object or an
// array in JSON.
func isContainer(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return true
	}
	return false
}

// wholeNumber reports whether n, a JSON number, is written as an
// integer: digits, with a minus sign perhaps, and no fraction or
// exponent.
func wholeNumber(n string) bool {
	n = strings.TrimPrefix(n, "-")
	return n != "" && strings.Trim(n, "0123456789") == ""
}

// intRange describes the values of integer type t: "LO to HI".
func intRange(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	b := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("0 to %d", uint64(math.MaxUint64)>>(64-b))
	}
	return fmt.Sprintf("%d to %d", int64(-1)<<(b-1), int64(math.MaxInt64)>>(64-b))
}

// kindOf names a Go type by its JSON kind.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return kindOf(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// position formats the place of the byte at offset off of data (0-based)
// as a 1-based line and column and the offset.
func position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := 1 + bytes.Count(before, []byte{'\n'})
	col := off - int64(bytes.LastIndexByte(before, '\n'))
	return fmt.Sprintf("line %d, column %d, offset %d", line, col, off)
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
	bad := func() (time.Time, error) {
		return time.Time{}, mk(field, fmt.Sprintf("bad time %q (want RFC 3339, e.g. 2026-12-02T00:00:00Z)", s))
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
		return time.Time{}, mk(field, fmt.Sprintf("time %q is the zero time, which means unset", s))
	}
	if t.UTC().Year() > 9999 {
		return time.Time{}, mk(field, fmt.Sprintf("time %q is after 9999-12-31T23:59:59.999999999Z, the last time a decision can write in UTC", s))
	}
	return t, nil
}

func parseDuration(mk mkErr, field, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, mk(field, fmt.Sprintf("bad duration %q", s))
	}
	if d < 0 {
		return 0, mk(field, fmt.Sprintf("must be >= 0, got %s", formatDuration(d)))
	}
	return d, nil
}

// parseEnum maps a string to its index in names; nil means def.
func parseEnum[T ~uint8](mk mkErr, field string, s *string, def T, names []string) (T, error) {
	if s == nil {
		return def, nil
	}
	if i := slices.Index(names, *s); i >= 0 {
		return T(i), nil
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	want := strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	return 0, mk(field, fmt.Sprintf("unknown value %q (want %s)", *s, want))
}

func enumName(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("?%d", i)
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
// does unless told not to); a [Config] is the Go form with useful zero
// values.
type PolicyFile struct {
	// Backfill is the "backfill" key: "easy" (default), "conservative"
	// or "none".
	Backfill BackfillMode
	// Reservations is the "reservations" key: K for EASY backfill
	// (0 means 1).
	Reservations int
	// EnforceTimeLimits is the "enforceTimeLimits" key (default true).
	EnforceTimeLimits bool
	// BackfillOrder is the "backfillOrder" key: "priority" (default) or
	// "shortest".
	BackfillOrder BackfillOrder
	// FairShare holds the "fairshare" key: "halfLife" and "ageMax" (Go
	// durations) and "weights" {"fairshare", "age", "size"}. A weight
	// left out of "weights" keeps its default; one given as 0 is 0.
	FairShare FairShare
	// Preemption is the "preemption": {"matrix": ...} key: row = preemptor
	// tier, column = victim tier, cells true/false or 1/0. Nil means the
	// default matrix; it becomes Config.Preemption.
	Preemption preempt.Matrix
	// DisablePreemption is "preemption": {"disabled": true} (default
	// false); it becomes Config.DisablePreemption.
	DisablePreemption bool
	// Horizon is the "horizon" key (a Go duration, default none): how far
	// ahead reservations are planned; it becomes Config.Horizon.
	Horizon time.Duration
	// Order is the "order" key: "multifactor" ([Multifactor] with the
	// fairshare settings, the default, also meant by "") or "tier"
	// ([TierOrder]: first come, first served within a tier); it becomes
	// Config.Order.
	Order string
}

type wirePolicy struct {
	Backfill          *string         `json:"backfill"`
	Reservations      *int            `json:"reservations"`
	EnforceTimeLimits *bool           `json:"enforceTimeLimits"`
	BackfillOrder     *string         `json:"backfillOrder"`
	FairShare         *wireFairShare  `json:"fairshare"`
	Preemption        *wirePreemption `json:"preemption"`
	Horizon           *string         `json:"horizon"`
	Order             *string         `json:"order"`
}

type wireFairShare struct {
	HalfLife *string      `json:"halfLife"`
	Weights  *wireWeights `json:"weights"`
	AgeMax   *string      `json:"ageMax"`
}

type wireWeights struct {
	FairShare *float64 `json:"fairshare"`
	Age       *float64 `json:"age"`
	Size      *float64 `json:"size"`
}

type wirePreemption struct {
	Matrix   [][]json.RawMessage `json:"matrix"`
	Disabled *bool               `json:"disabled"`
}

// DecodePolicy reads a policy file. All keys are optional: a key left
// out takes its default, while a key given as null is an error
// ("config: backfill: want a string, got null"). Unknown or repeated
// keys, trailing data, input that is not UTF-8 (or escapes half a
// surrogate pair), unknown enum strings, bad or negative durations,
// negative weights or reservations and a matrix that is not square (or
// that lets a tier preempt itself or tier 0, or two tiers preempt each
// other) are errors naming the key and where it is
// ("config: json: unknown field \"x\"",
// "config: fairshare.weights: unknown field \"tier\"",
// "config: fairshare.halfLife: bad duration \"1x\"").
func DecodePolicy(r io.Reader) (PolicyFile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return PolicyFile{}, fmt.Errorf("config: read: %w", err)
	}
	var w wirePolicy
	if err := decodeDoc(configErr, data, &w); err != nil {
		return PolicyFile{}, err
	}
	p := PolicyFile{EnforceTimeLimits: true}
	if p.Backfill, err = parseEnum[BackfillMode](configErr, "backfill", w.Backfill, EASY, backfillNames); err != nil {
		return PolicyFile{}, err
	}
	if p.BackfillOrder, err = parseEnum[BackfillOrder](configErr, "backfillOrder", w.BackfillOrder, ByPriority, orderNames); err != nil {
		return PolicyFile{}, err
	}
	if w.Reservations != nil {
		p.Reservations = *w.Reservations
	}
	if w.EnforceTimeLimits != nil {
		p.EnforceTimeLimits = *w.EnforceTimeLimits
	}
	if fs := w.FairShare; fs != nil {
		if fs.HalfLife != nil {
			if p.FairShare.HalfLife, err = parseDuration(configErr, "fairshare.halfLife", *fs.HalfLife); err != nil {
				return PolicyFile{}, err
			}
		}
		if fs.AgeMax != nil {
			if p.FairShare.Weights.AgeMax, err = parseDuration(configErr, "fairshare.ageMax", *fs.AgeMax); err != nil {
				return PolicyFile{}, err
			}
		}
		if ws := fs.Weights; ws != nil {
			wt := &p.FairShare.Weights
			wt.Explicit = true
			wt.FairShare, wt.Age, wt.Size = fairshare.DefaultFairShareWeight, fairshare.DefaultAgeWeight, fairshare.DefaultSizeWeight
			for _, x := range []struct {
				name string
				src  *float64
				dst  *float64
			}{{"fairshare", ws.FairShare, &wt.FairShare}, {"age", ws.Age, &wt.Age}, {"size", ws.Size, &wt.Size}} {
				if x.src != nil {
					*x.dst = *x.src
				}
			}
		}
	}
	if w.Horizon != nil {
		if p.Horizon, err = parseDuration(configErr, "horizon", *w.Horizon); err != nil {
			return PolicyFile{}, err
		}
	}
	if w.Order != nil {
		p.Order = *w.Order // checked by Config below
	}
	if pr := w.Preemption; pr != nil {
		if pr.Matrix != nil {
			if p.Preemption, err = decodeMatrix(pr.Matrix); err != nil {
				return PolicyFile{}, err
			}
		}
		if pr.Disabled != nil {
			p.DisablePreemption = *pr.Disabled
		}
	}
	if _, err := p.Config(); err != nil {
		return PolicyFile{}, err
	}
	return p, nil
}

func decodeMatrix(rows [][]json.RawMessage) (preempt.Matrix, error) {
	m := make(preempt.Matrix, len(rows))
	for i, row := range rows {
		m[i] = make([]bool, len(row))
		for k, cell := range row {
			switch string(cell) {
			case "true", "1":
				m[i][k] = true
			case "false", "0":
			default:
				return nil, configErr(fmt.Sprintf("preemption.matrix[%d][%d]", i, k),
					fmt.Sprintf("want true, false, 1 or 0, got %s", cell))
			}
		}
	}
	return m, nil
}

// Config checks p and returns the scheduling policy it describes.
func (p PolicyFile) Config() (Config, error) {
	modes := Config{Backfill: p.Backfill, BackfillOrder: p.BackfillOrder, FairShare: p.FairShare}
	if err := modes.checkModes(); err != nil {
		return Config{}, err // what Step would refuse
	}
	if p.Reservations < 0 {
		return Config{}, configErr("reservations", fmt.Sprintf("must be >= 0, got %d", p.Reservations))
	}
	if p.FairShare.HalfLife < 0 {
		return Config{}, configErr("fairshare.halfLife", fmt.Sprintf("must be >= 0, got %s", formatDuration(p.FairShare.HalfLife)))
	}
	w := p.FairShare.Weights
	if w.AgeMax < 0 {
		return Config{}, configErr("fairshare.ageMax", fmt.Sprintf("must be >= 0, got %s", formatDuration(w.AgeMax)))
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"fairshare", w.FairShare}, {"age", w.Age}, {"size", w.Size}} {
		if x.v < 0 || math.IsNaN(x.v) || math.IsInf(x.v, 0) {
			return Config{}, configErr("fairshare.weights."+x.name, fmt.Sprintf("must be a finite number >= 0, got %v", x.v))
		}
	}
	if math.IsInf(w.FairShare+w.Age+w.Size, 1) {
		return Config{}, configErr("fairshare.weights", fmt.Sprintf("must sum to a finite number, got fairshare %v + age %v + size %v", w.FairShare, w.Age, w.Size))
	}
	if p.Horizon < 0 {
		return Config{}, configErr("horizon", fmt.Sprintf("must be >= 0, got %s", formatDuration(p.Horizon)))
	}
	if p.Preemption != nil {
		if err := p.Preemption.Validate(); err != nil {
			return Config{}, fmt.Errorf("config: preemption.%w", err)
		}
	}
	var order Orderer
	if p.Order != "" {
		q, err := parseEnum[uint8](configErr, "order", &p.Order, 0, queueNames)
		if err != nil {
			return Config{}, err
		}
		if queueNames[q] == "tier" {
			order = TierOrder{}
		}
	}
	return Config{
		Order:             order,
		Backfill:          p.Backfill,
		Reservations:      p.Reservations,
		IgnoreTimeLimits:  !p.EnforceTimeLimits,
		BackfillOrder:     p.BackfillOrder,
		FairShare:         p.FairShare,
		Preemption:        p.Preemption,
		DisablePreemption: p.DisablePreemption,
		Horizon:           p.Horizon,
	}, nil
}

// DecodeConfig reads a policy file (see [DecodePolicy]) and returns the
// scheduling policy it describes (see [PolicyFile.Config]).
func DecodeConfig(r io.Reader) (Config, error) {
	p, err := DecodePolicy(r)
	if err != nil {
		return Config{}, err
	}
	return p.Config()
}
