package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpusched/gpusched/internal/jsonscan"
)

// This file holds the reader that the snapshot and policy decoders share:
// a jsonscan.Decoder, which checks the syntax, the UTF-8 and the nesting
// depth (at most 10,000 arrays and objects) as jsontext does and leaves
// the wording of a syntax error to syntaxError, and the bookkeeping that
// names the field of an error the way the contract does. Repeated keys
// are found here rather than by the decoder, so that the error names
// where they are.
//
// What makes a document no JSON text at all (see encodingError) comes
// first, and a syntax error before anything but an offence that precedes
// it (see [jsonReader.document]). Then errors come in three classes,
// reported in this order of precedence within one document or part of
// one (see [jsonReader.endPart]):
//   - offences against the strict contract (an unknown or repeated key, a
//     null): reported at once;
//   - values of the wrong type: the first is kept and the rest of the part
//     is read, since an offence later in the part takes precedence;
//   - values of the right type that are not valid (an unknown enum string,
//     a bad time or duration): checked once the part is read, in the order
//     of the fields, not of the document.

// maxEcho is how many bytes of a value from the input an error quotes; a
// longer value is cut there (at a character boundary) and ends in "…".
const maxEcho = 64

// mkErr builds the error of one document kind from a field and a message.
type mkErr func(field, msg string) error

// pathStep is one step of the path from a part to the value being read:
// an object member (its key) or an array element (its index).
type pathStep struct {
	key   string
	index int
	// elem marks an array element; scalar an element of a list whose
	// elements are not objects or arrays, which an error about a scalar
	// there names by the list, not by its index ("unhealthyGPUs: want an
	// integer, got string").
	elem, scalar bool
}

// jsonReader reads one document, or one part of one, from a
// jsonscan.Decoder and keeps what an error must name.
type jsonReader struct {
	dec  *jsonscan.Decoder
	mk   mkErr
	path []pathStep
	// The part being read: its text, and what names it (see readPart).
	// list is "" for a whole document. base is the name, computed on
	// the first error, since it needs a second look at the part's text.
	part      []byte
	list, key string
	index     int
	base      string
	// typeErr is the first value of the wrong type in the part, and
	// semErr, semOrder the invalid value of the lowest order (see
	// semantic).
	typeErr  error
	semErr   error
	semOrder int
	// scratch holds unquoted text that escapes made differ from the
	// input.
	scratch []byte
	// names interns short strings that snapshots repeat (team and GPU
	// type names, domains, the nodes of allocations). A node's own name
	// is not: each is given once.
	names map[string]string
	// noFast turns the fast path of fastList off (for tests).
	noFast bool
}

// newJSONReader returns a reader of the document data whose errors mk
// builds. It reads data in place: data must not change while r is used.
func newJSONReader(data []byte, mk mkErr) *jsonReader {
	return &jsonReader{mk: mk, dec: jsonscan.NewDecoder(data), names: make(map[string]string)}
}

// readPart makes r read data, a part of a document: element index of
// list named by the member key of each element when index >= 0 (see
// elemName), else the part list. It reads data in place.
func (r *jsonReader) readPart(data []byte, list string, index int, key string) {
	r.dec.Reset(data)
	r.path = r.path[:0]
	r.part, r.list, r.index, r.key, r.base = data, list, index, key, ""
	r.typeErr, r.semErr, r.semOrder = nil, nil, 0
}

// field is the name of the value being read, as an error gives it: the
// part's name, then the path within it ("allocation[0].gpus"), joined
// by ": ", or "json" for the document itself. dropScalar leaves out the
// index of an element of a list of scalars.
func (r *jsonReader) field(dropScalar bool) string {
	var b strings.Builder
	steps := r.path
	if n := len(steps); dropScalar && n > 0 && steps[n-1].scalar {
		steps = steps[:n-1]
	}
	for _, s := range steps {
		if s.elem {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return joinField(r.partName(), b.String())
}

// partName is the name of the part being read, "" for a document.
func (r *jsonReader) partName() string {
	switch {
	case r.base != "" || r.list == "":
	case r.index < 0:
		r.base = r.list
	default:
		r.base = elemName(r.list, r.index, r.part, r.key)
	}
	return r.base
}

// elemName is the name of element i of a list: `jobs[3] "C"` when the
// element, an object, has a key field (id or name) that is a string (the
// last one, if the object repeats it), else `jobs[3]`.
func elemName(list string, i int, raw []byte, key string) string {
	plain := fmt.Sprintf("%s[%d]", list, i)
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return plain
	}
	var name jsontext.Value
	for dec.PeekKind() != '}' {
		k, err := dec.ReadToken()
		if err != nil {
			return plain
		}
		isKey := k.String() == key
		v, err := dec.ReadValue()
		if err != nil {
			return plain
		}
		if isKey {
			name = v.Clone()
		}
	}
	if name.Kind() != '"' {
		return plain
	}
	s, _ := jsontext.AppendUnquote(nil, name)
	return plain + " " + quoteClipped(string(s))
}

// joinField joins a part's name and a path within it.
func joinField(part, sub string) string {
	switch {
	case part == "" && sub == "":
		return "json"
	case part == "":
		return sub
	case sub == "":
		return part
	}
	return part + ": " + sub
}

// errAt is an error about the value being read; see field for dropScalar.
func (r *jsonReader) errAt(dropScalar bool, msg string) error {
	return r.mk(r.field(dropScalar), msg)
}

// push and pop move the path into a member or an element and back.
func (r *jsonReader) push(key string) { r.path = append(r.path, pathStep{key: key}) }
func (r *jsonReader) pushIndex(i int, scalar bool) {
	r.path = append(r.path, pathStep{index: i, elem: true, scalar: scalar})
}
func (r *jsonReader) pop() { r.path = r.path[:len(r.path)-1] }

// null is the offence of a null where want ("an integer") belongs.
func (r *jsonReader) null(want string) error {
	return r.errAt(true, "want "+want+", got null")
}

// mismatch records a value of kind k where want belongs, the value
// having been read.
func (r *jsonReader) mismatch(want string, k jsontext.Kind) {
	r.mismatchMsg(k == '{' || k == '[', "want "+want+", got "+kindName(k))
}

// mismatchMsg records a value of the wrong type with its message;
// container keeps the index of a list of scalars in the name.
func (r *jsonReader) mismatchMsg(container bool, msg string) {
	if r.typeErr == nil {
		r.typeErr = r.errAt(!container, msg)
	}
}

// semantic records an invalid value: of those found in a part, endPart
// reports the one of the lowest order, the place of its field in the
// part's list of checks.
func (r *jsonReader) semantic(order int, field, msg string) {
	if r.semErr == nil || order < r.semOrder {
		r.semErr, r.semOrder = r.mk(joinField(r.partName(), field), msg), order
	}
}

// endPart reports what the part read held: its first value of the wrong
// type, else its invalid value of the lowest order, else nil.
func (r *jsonReader) endPart() error {
	if r.typeErr != nil {
		return r.typeErr
	}
	return r.semErr
}

// kindName names a JSON kind as type errors do.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "bool"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "null"
}

// errSyntax stands for a syntax error of the document, which the caller
// words from the whole document (see syntaxError).
var errSyntax = errors.New("syntax error")

// read reads the next value; a syntax error is errSyntax.
func (r *jsonReader) read() (jsontext.Value, error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, errSyntax
	}
	return v, nil
}

// token reads the next token, expected to be a delimiter that PeekKind
// announced.
func (r *jsonReader) token() error {
	if err := r.dec.ReadToken(); err != nil {
		return errSyntax
	}
	return nil
}

// open reads the '{' or '[' (kind k) of a container where want belongs.
// It reports false when the value is not one: a null is an offence, and
// any other value is recorded as of the wrong type and skipped.
func (r *jsonReader) open(k jsontext.Kind, want string) (bool, error) {
	switch got := r.dec.PeekKind(); got {
	case k:
		return true, r.token()
	case 'n':
		if err := r.token(); err != nil {
			return false, err
		}
		return false, r.null(want)
	default:
		if _, err := r.read(); err != nil {
			return false, err
		}
		r.mismatch(want, got)
		return false, nil
	}
}

// more reports whether the object or array being read has another
// member or element, reading its end if not.
func (r *jsonReader) more() (bool, error) {
	switch r.dec.PeekKind() {
	case '}', ']':
		return false, r.token()
	case 0:
		return false, errSyntax
	}
	return true, nil
}

// name reads the key of an object member; the text is valid until the
// next read.
func (r *jsonReader) name() ([]byte, error) {
	v, err := r.read()
	if err != nil {
		return nil, err
	}
	return r.unquote(v), nil
}

// unquote returns the text of the string value v: a part of v when v has
// no escapes, else r's scratch space.
func (r *jsonReader) unquote(v jsontext.Value) []byte {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	r.scratch, _ = jsontext.AppendUnquote(r.scratch[:0], v) // v is valid
	return r.scratch
}

// unknown is the offence of a key that names no field, at the object
// that holds it. The member's value is read first, so that a syntax
// error there takes precedence.
func (r *jsonReader) unknown(name []byte) error {
	msg := "unknown field " + quoteClipped(string(name))
	if err := r.dec.SkipValue(); err != nil {
		return errSyntax
	}
	return r.errAt(false, msg)
}

// duplicate is the offence of a key given twice in one object; as for
// unknown, the value is read first.
func (r *jsonReader) duplicate(name []byte) error {
	msg := "duplicate field " + quoteClipped(string(name))
	if err := r.dec.SkipValue(); err != nil {
		return errSyntax
	}
	return r.errAt(false, msg)
}

// object reads an object whose keys are keys (at most 64), calling member
// with the index of each key given, with the path at the member. A key
// that is not one of keys, or that the object repeats, is an offence. It
// reports false, with what open reports, when the value is not an object.
func (r *jsonReader) object(keys []string, member func(f int) error) (bool, error) {
	if ok, err := r.open('{', "an object"); !ok {
		return false, err
	}
	var given uint64
	for {
		more, err := r.more()
		if err != nil || !more {
			return true, err
		}
		name, err := r.name()
		if err != nil {
			return true, err
		}
		f := fieldIndex(keys, name)
		switch {
		case f < 0:
			return true, r.unknown(name)
		case given&(1<<f) != 0:
			return true, r.duplicate(name)
		}
		given |= 1 << f
		r.push(keys[f])
		err = member(f)
		r.pop()
		if err != nil {
			return true, err
		}
	}
}

// fieldIndex is the index of name in keys, -1 for none.
func fieldIndex(keys []string, name []byte) int {
	for i, k := range keys {
		if k == string(name) {
			return i
		}
	}
	return -1
}

// str reads a string into dst; ok is false when the value was not one.
func (r *jsonReader) str(dst *string) (ok bool, err error) {
	b, ok, err := r.strBytes()
	if ok {
		*dst = string(b)
	}
	return ok, err
}

// name-like strings: internedStr reads a string that is likely repeated
// in the document, such as a node or team name.
func (r *jsonReader) internedStr(dst *string) (bool, error) {
	b, ok, err := r.strBytes()
	if ok {
		*dst = r.intern(b)
	}
	return ok, err
}

// intern returns b as a string, the same string for the same text.
func (r *jsonReader) intern(b []byte) string {
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(s) <= 64 {
		r.names[s] = s
	}
	return s
}

// strBytes reads a string and returns its text, valid until the next
// read; ok is false when the value was not a string.
func (r *jsonReader) strBytes() (b []byte, ok bool, err error) {
	v, err := r.read()
	if err != nil {
		return nil, false, err
	}
	switch k := v.Kind(); k {
	case '"':
		return r.unquote(v), true, nil
	case 'n':
		return nil, false, r.null("a string")
	default:
		r.mismatch("a string", k)
		return nil, false, nil
	}
}

// boolean reads true or false into dst.
func (r *jsonReader) boolean(dst *bool) (bool, error) {
	v, err := r.read()
	if err != nil {
		return false, err
	}
	switch k := v.Kind(); k {
	case 't', 'f':
		*dst = k == 't'
		return true, nil
	case 'n':
		return false, r.null("true or false")
	default:
		r.mismatch("true or false", k)
		return false, nil
	}
}

// integer reads an integer into dst. A number with a fraction or an
// exponent is not one, and one beyond the range of int is of the wrong
// type too, with the range in the message.
func (r *jsonReader) integer(dst *int) (bool, error) {
	v, err := r.read()
	if err != nil {
		return false, err
	}
	switch k := v.Kind(); k {
	case '0':
		if n, ok := parseInt(v); ok {
			*dst = n
			return true, nil
		}
		if wholeNumber(v) {
			r.mismatchMsg(false, fmt.Sprintf("want an integer from %d to %d, got %s", math.MinInt, math.MaxInt, clip(string(v))))
		} else {
			r.mismatchMsg(false, "want an integer, got number "+clip(string(v)))
		}
		return false, nil
	case 'n':
		return false, r.null("an integer")
	default:
		r.mismatch("an integer", k)
		return false, nil
	}
}

// number reads a number within the range of float64 into dst.
func (r *jsonReader) number(dst *float64) (bool, error) {
	v, err := r.read()
	if err != nil {
		return false, err
	}
	switch k := v.Kind(); k {
	case '0':
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			r.mismatchMsg(false, fmt.Sprintf("want a number within ±%v, got %s", math.MaxFloat64, clip(string(v))))
			return false, nil
		}
		*dst = f
		return true, nil
	case 'n':
		return false, r.null("a number")
	default:
		r.mismatch("a number", k)
		return false, nil
	}
}

// parseInt parses a JSON number written as an integer that int holds.
func parseInt(v []byte) (int, bool) {
	if len(v) > 0 && len(v) < 19 && v[0] != '-' {
		n := 0
		for _, c := range v {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return int(n), err == nil && n >= math.MinInt && n <= math.MaxInt
}

// wholeNumber reports whether n, a JSON number, is written as an
// integer: digits, with a minus sign perhaps, and no fraction or
// exponent.
func wholeNumber[T ~string | ~[]byte](n T) bool {
	s := strings.TrimPrefix(string(n), "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// endDocument checks that only white space follows the document's value,
// which ends at the decoder's offset.
func (r *jsonReader) endDocument(data []byte) error {
	end := r.dec.InputOffset()
	rest := bytes.TrimLeft(data[end:], " \t\r\n")
	if len(rest) > 0 {
		return r.mk("json", fmt.Sprintf("trailing data after the object (%s)", position(data, int64(len(data)-len(rest)))))
	}
	return nil
}

// encodingError reports what makes data no JSON text whatever its
// syntax: a byte-order mark, a byte that is not UTF-8, or an escaped
// half of a UTF-16 surrogate pair without its other half ("\ud800"),
// which names no character. These come first, wherever they are.
func encodingError(mk mkErr, data []byte) error {
	if bytes.HasPrefix(data, []byte("\uFEFF")) {
		return mk("json", "input starts with a byte-order mark (U+FEFF), which JSON does not allow (line 1, column 1, offset 0)")
	}
	if bad := invalidUTF8(data); bad >= 0 {
		return mk("json", fmt.Sprintf("invalid UTF-8 (%s)", position(data, int64(bad))))
	}
	if bad := loneSurrogate(data); bad >= 0 {
		return mk("json", fmt.Sprintf("lone surrogate %s names no character (%s)", data[bad:bad+6], position(data, int64(bad))))
	}
	return nil
}

// syntaxError words the syntax error of data, which has one, as
// encoding/json words it (the wording that hosts of the step command see
// and may match), with its line, column and offset. It reads data again,
// once: O(len(data)), on the path of an error only.
func syntaxError(mk mkErr, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	err := dec.Decode(&v)
	var se *json.SyntaxError
	switch {
	case err == io.EOF:
		return mk("json", "empty input (want one JSON object)")
	case errors.As(err, &se):
		// Offset counts the bytes read, the bad one included.
		return mk("json", fmt.Sprintf("%s (%s)", se.Error(), position(data, se.Offset-1)))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return mk("json", fmt.Sprintf("unexpected end of input (%s)", position(data, int64(len(data)))))
	}
	// What jsontext refuses and encoding/json takes: word it as jsontext
	// does.
	jd := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	_, err = jd.ReadValue()
	var je *jsontext.SyntacticError
	if errors.As(err, &je) {
		return mk("json", fmt.Sprintf("%v (%s)", je.Err, position(data, je.ByteOffset)))
	}
	return mk("json", "not JSON")
}

// invalidUTF8 returns the offset of the first byte of data that is not
// part of a UTF-8 encoding, or -1 when data is UTF-8. O(len(data)).
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
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
	v, err := strconv.ParseUint(string(data[i:i+4]), 16, 32)
	return rune(v), err == nil
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

// clip cuts s to at most maxEcho bytes, at a character boundary, and
// marks the cut with "…".
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// quoteClipped quotes s as Go does, cut as clip cuts it.
func quoteClipped(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	return strconv.Quote(clip(s))
}

// clipQuoted cuts each quoted string in msg, as %q writes them, to
// maxEcho bytes of the original text, so that an error line stays short
// whatever names the input gives. A message without long quoted strings
// is returned as it is.
func clipQuoted(msg string) string {
	if len(msg) <= 2*maxEcho {
		return msg
	}
	var b strings.Builder
	for {
		start := strings.IndexByte(msg, '"')
		if start < 0 {
			break
		}
		end := start + 1
		for end < len(msg) && msg[end] != '"' {
			if msg[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(msg) {
			break // not a quoted string after all
		}
		q := msg[start : end+1]
		if s, err := strconv.Unquote(q); err == nil && len(s) > maxEcho {
			q = strconv.Quote(clip(s))
		}
		b.WriteString(msg[:start])
		b.WriteString(q)
		msg = msg[end+1:]
	}
	b.WriteString(msg)
	return b.String()
}
