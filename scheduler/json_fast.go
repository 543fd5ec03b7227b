package scheduler

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"time"
	"unicode/utf8"

	"github.com/gpusched/gpusched/topology"
)

// This file holds the fast path of a snapshot's reading: a job or a node
// that is plain reads here in one sweep of its text, as the list that
// holds it is first read (the document's "jobs", the cluster's "nodes":
// see fastList), without the bookkeeping that an error would need. Plain
// means that the text is valid JSON; that every key is one of the
// part's, given once and written without escapes; that every string is
// written without escapes; and that every value has the type its field
// wants and is valid. Nothing has checked the text before: the fast path
// checks the syntax of all it accepts. Anything else makes it give up:
// the list's reading then keeps the part's text, as before, and the full
// reader ([jsonReader.job], [jsonReader.node]) reads it in its turn and
// finds the error if there is one. Since a part the fast path reads has
// no error, the errors of a document, and their order, are those of the
// full reader alone.
//
// For text it does not give up on, the fast path reads exactly one JSON
// value, whose length it tells (the list's decoder then passes over it:
// see jsonscan.Decoder.ReadValueOf), and yields exactly what the full
// reader yields for it: TestFastPartsAgreeWithReader and
// FuzzFastPartsAgreeWithReader hold it to both, and
// FuzzFastPathAgreesWithFullReader holds whole documents to the same
// snapshot or error with the fast path and without it.

// fastPart sweeps the text of one part, from its start; what follows the
// part is not looked at. The text may be anything: what fastPart
// accepts it checks.
type fastPart struct {
	b    []byte
	pos  int
	r    *jsonReader // interns names
	last int         // the index of the key read last, -1 for none
	bad  bool        // a byte that cannot stand where it is was met
}

// newFastPart returns a sweep of the part text b.
func newFastPart(r *jsonReader, b []byte) fastPart {
	return fastPart{b: b, r: r, last: -1}
}

// space skips white space. A run of spaces, such as an indent, is
// measured eight bytes at a time.
func (f *fastPart) space() {
	b, i := f.b, f.pos
	for i < len(b) {
		switch b[i] {
		case ' ':
			if len(b)-i >= 8 {
				// The spaces that start the word: its low bytes that
				// equal ' '.
				i += bits.TrailingZeros64(binary.LittleEndian.Uint64(b[i:])^spaces8) / 8
				continue
			}
			i++
		case '\n', '\t', '\r':
			i++
		default:
			f.pos = i
			return
		}
	}
	f.pos = i
}

// spaces8 is eight spaces, read as a little-endian word.
const spaces8 = 0x2020202020202020

// peek is the next byte that is not white space, 0 at the end.
func (f *fastPart) peek() byte {
	f.space()
	if f.pos < len(f.b) {
		return f.b[f.pos]
	}
	return 0
}

// open reads c, the '{' or '[' that opens a container.
func (f *fastPart) open(c byte) bool {
	if f.peek() != c {
		return false
	}
	f.pos++
	return true
}

// more reports whether the container being read has another member or
// element: before the first, anything but the container's end (close);
// after one, a comma. It reads the comma, or the end. Anything else
// there marks f bad.
func (f *fastPart) more(close byte, first bool) bool {
	switch c := f.peek(); {
	case c == close:
		f.pos++
		return false
	case first:
		return true
	case c == ',':
		f.pos++
		return true
	}
	f.bad = true
	return false
}

// key reads the key of the next member of an object whose keys are keys
// and returns its index; ok is false for a key that is not one of keys,
// is given twice (given marks those given) or has an escape. The keys
// that follow the last one read are tried first, in their order, since
// a document written by EncodeSnapshot gives them in that order.
func (f *fastPart) key(keys []string, given *uint64) (int, bool) {
	// The keys after the last one read, in their order, are matched in
	// place; a document that leaves fields out skips a few.
	k := f.last + 1
	for k < len(keys) && k <= f.last+keysMatched && !f.quoted(keys[k]) {
		k++
	}
	if k == len(keys) || k > f.last+keysMatched {
		name, ok := f.str()
		if !ok {
			return 0, false
		}
		k = fieldIndex(keys, name)
	}
	if f.peek() != ':' {
		return 0, false
	}
	f.pos++
	if k < 0 || *given&(1<<k) != 0 {
		return 0, false
	}
	*given |= 1 << k
	f.last = k
	return k, true
}

// str reads a string without escapes and returns its text; control
// characters and bytes that are not UTF-8 make no string.
func (f *fastPart) str() ([]byte, bool) {
	if f.peek() != '"' {
		return nil, false
	}
	text := f.b[f.pos+1:]
	wide := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !strStop[c] {
			continue
		}
		switch {
		case c == '"':
			if wide && !utf8.Valid(text[:i]) {
				return nil, false
			}
			f.pos += i + 2
			return text[:i], true
		case c >= utf8.RuneSelf:
			wide = true
		default: // a backslash or a control character
			return nil, false
		}
	}
	return nil, false
}

// strStop marks the bytes that str looks at: the quote, the backslash,
// control characters and the bytes of UTF-8 beyond ASCII.
var strStop = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < ' ' || c >= utf8.RuneSelf
	}
	return t
}()

// keysMatched is how many keys after the last one read key matches in
// place before it reads the key to look it up.
const keysMatched = 3

// quoted reads the string s, which needs no escapes, when it comes next
// written plainly between quotes, and reports whether it did.
func (f *fastPart) quoted(s string) bool {
	if f.peek() != '"' {
		return false
	}
	rest := f.b[f.pos+1:]
	if len(rest) <= len(s) || string(rest[:len(s)]) != s || rest[len(s)] != '"' {
		return false
	}
	f.pos += len(s) + 2
	return true
}

// integer reads a JSON number written as an integer (an optional minus,
// then 0 or digits that do not start with 0) that int holds. A fraction
// or an exponent makes no integer.
func (f *fastPart) integer() (int, bool) {
	f.space()
	b, start := f.b, f.pos
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	switch {
	case i == digits, i-digits > 1 && b[digits] == '0':
		return 0, false
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return 0, false
	}
	f.pos = i
	return parseInt(b[start:i])
}

// boolean reads true or false.
func (f *fastPart) boolean() (bool, bool) {
	f.space()
	switch rest := f.b[f.pos:]; {
	case bytes.HasPrefix(rest, []byte("true")):
		f.pos += len("true")
		return true, true
	case bytes.HasPrefix(rest, []byte("false")):
		f.pos += len("false")
		return false, true
	}
	return false, false
}

// name reads a string and interns it, as internedStr does.
func (f *fastPart) name(dst *string) bool {
	s, ok := f.str()
	if ok {
		*dst = f.r.intern(s)
	}
	return ok
}

// enum reads one of names and returns its index.
func (f *fastPart) enum(names []string) (int, bool) {
	s, ok := f.str()
	if !ok {
		return 0, false
	}
	return enumIndex(names, s)
}

// time reads a time as timeValue does, a time written as EncodeSnapshot
// writes one without copying its text.
func (f *fastPart) time(dst *time.Time) bool {
	s, ok := f.str()
	if !ok {
		return false
	}
	t, ok := utcSeconds(s)
	if !ok {
		var err error
		t, err = parseTimeLong(keepMsg, "", string(s))
		ok = err == nil
	}
	*dst = t
	return ok
}

// duration reads a duration as durationValue does, one written as
// EncodeSnapshot writes one without copying its text.
func (f *fastPart) duration(dst *time.Duration) bool {
	s, ok := f.str()
	if !ok {
		return false
	}
	d, ok := wholeDuration(s)
	if !ok {
		var err error
		d, err = parseDurationLong(keepMsg, "", string(s))
		ok = err == nil
	}
	*dst = d
	return ok
}

// intList reads an array of integers as [jsonReader.intList] does: an
// empty one is empty, not nil.
func (f *fastPart) intList() ([]int, bool) {
	if !f.open('[') {
		return nil, false
	}
	list := []int{}
	for first := true; f.more(']', first); first = false {
		n, ok := f.integer()
		if !ok {
			return nil, false
		}
		list = append(list, n)
	}
	return list, !f.bad
}

// nameList reads an array of strings, interned, as
// [jsonReader.stringList] does: nil when empty.
func (f *fastPart) nameList() ([]string, bool) {
	if !f.open('[') {
		return nil, false
	}
	var list []string
	for first := true; f.more(']', first); first = false {
		var s string
		if !f.name(&s) {
			return nil, false
		}
		list = append(list, s)
	}
	return list, !f.bad
}

// nameMap reads an object of strings as [jsonReader.stringMap] does.
func (f *fastPart) nameMap() (map[string]string, bool) {
	if !f.open('{') {
		return nil, false
	}
	m := map[string]string{}
	for first := true; f.more('}', first); first = false {
		k, ok := f.str()
		if !ok || f.peek() != ':' {
			return nil, false
		}
		f.pos++
		if _, dup := m[string(k)]; dup {
			return nil, false
		}
		var v string
		if !f.name(&v) {
			return nil, false
		}
		m[f.r.intern(k)] = v
	}
	return m, !f.bad
}

// object reads an object whose keys are keys, calling value with the
// index of each key given to read its value.
func (f *fastPart) object(keys []string, value func(k int) bool) bool {
	if !f.open('{') {
		return false
	}
	var given uint64
	last := f.last
	defer func() { f.last = last }()
	f.last = -1
	for first := true; f.more('}', first); first = false {
		k, ok := f.key(keys, &given)
		if !ok || !value(k) {
			return false
		}
	}
	return !f.bad
}

// allocation reads an allocation as [jsonReader.allocation] does.
func (f *fastPart) allocation() (topology.Allocation, bool) {
	if !f.open('[') {
		return nil, false
	}
	var a topology.Allocation
	for first := true; f.more(']', first); first = false {
		var ng topology.NodeGPUs
		ok := f.object(allocationKeys, func(k int) bool {
			if k == 0 {
				return f.name(&ng.Node)
			}
			var ok bool
			ng.GPUs, ok = f.intList()
			return ok
		})
		if !ok {
			return nil, false
		}
		a = append(a, ng)
	}
	return a, !f.bad
}

// topology reads a job's topology as [jsonReader.topology] does.
func (f *fastPart) topology(t *TopologySpec) bool {
	return f.object(topologyKeys, func(k int) bool {
		if k == 0 {
			return f.name(&t.Required)
		}
		return f.name(&t.Preferred)
	})
}

// fastJob reads a plain job from the start of text into j and returns
// the length of its text; 0 when it is not plain, and then j is left for
// [jsonReader.job] to read again. What follows the job is not looked at.
func (r *jsonReader) fastJob(text []byte, j *Job) int {
	*j = Job{Members: 1, Kind: Training, State: Pending, Placement: Pack}
	f := newFastPart(r, text)
	if !f.object(jobKeys, func(k int) bool { return f.jobValue(j, k) }) {
		return 0
	}
	return f.pos
}

// jobValue reads the value of field k of a job into j, as
// [jsonReader.jobValue] does.
func (f *fastPart) jobValue(j *Job, k int) bool {
	var ok bool
	var i int
	switch k {
	case 0:
		var s []byte
		if s, ok = f.str(); ok {
			j.ID = string(s)
		}
	case 1:
		ok = f.name(&j.Team)
	case 2:
		i, ok = f.integer()
		j.Tier = TierN(i)
	case 3:
		i, ok = f.enum(kindNames)
		j.Kind = Kind(i)
	case 4:
		ok = f.time(&j.Submitted)
	case 5:
		j.Members, ok = f.integer()
	case 6:
		j.GPUsPerMember, ok = f.integer()
	case 7:
		ok = f.name(&j.GPUType)
	case 8:
		ok = f.duration(&j.TimeLimit)
	case 9:
		ok = f.duration(&j.CheckpointGrace)
	case 10:
		ok = f.topology(&j.Topology)
	case 11:
		i, ok = f.enum(placementNames)
		j.Placement = PlacementMode(i)
	case 12:
		ok = f.name(&j.Group)
	case 13:
		ok = f.name(&j.SpreadLevel)
	case 14:
		i, ok = f.enum(stateNames)
		j.State = JobState(i)
	case 15:
		ok = f.time(&j.Started)
	case 16:
		ok = f.time(&j.EvictedAt)
	case 17:
		j.Allocation, ok = f.allocation()
	case 18:
		j.MixGPUTypes, ok = f.boolean()
	case 19:
		j.CPUMillis, ok = f.integer()
	case 20:
		j.MemoryMiB, ok = f.integer()
	case 21:
		if j.EligibleNodes, ok = f.nameList(); ok && j.EligibleNodes == nil {
			j.EligibleNodes = []string{} // present and empty: no node, not every node
		}
	}
	return ok
}

// fastNode reads a plain node from the start of text into n and returns
// the length of its text, as fastJob does.
func (r *jsonReader) fastNode(text []byte, n *topology.Node) int {
	*n = topology.Node{State: topology.Ready}
	f := newFastPart(r, text)
	if !f.object(nodeKeys, func(k int) bool { return f.nodeValue(n, k) }) {
		return 0
	}
	return f.pos
}

// nodeValue reads the value of field k of a node into n, as
// [jsonReader.node] does.
func (f *fastPart) nodeValue(n *topology.Node, k int) bool {
	var ok bool
	switch k {
	case 0:
		var s []byte
		if s, ok = f.str(); ok {
			n.Name = string(s)
		}
	case 1:
		n.GPUs, ok = f.integer()
	case 2:
		ok = f.name(&n.GPUType)
	case 3:
		n.Domains, ok = f.nameMap()
	case 4:
		var i int
		i, ok = f.enum(nodeStateNames)
		n.State = topology.NodeState(i)
	case 5:
		var u []int
		if u, ok = f.intList(); len(u) > 0 {
			n.Unhealthy = u
		}
	case 6:
		n.CPUMillis, ok = f.integer()
	case 7:
		n.MemoryMiB, ok = f.integer()
	}
	return ok
}
