package jsonscan

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// ErrSyntax is the error of every call that meets text that is not JSON,
// or a token that does not belong where it stands.
var ErrSyntax = errors.New("jsonscan: syntax error")

// maxDepth is how many objects and arrays may be open at once, as
// jsontext allows.
const maxDepth = 10000

// frame is an open container: whether it is an object, and how many
// tokens it has had (names and values for an object, so an odd count
// means a name waits for its value).
type frame struct {
	object bool
	count  int
}

// A Decoder reads one JSON text. The zero Decoder reads an empty text;
// Reset gives it another. It keeps the text it is given (it does not
// copy it), which must not change while it is read.
type Decoder struct {
	buf []byte
	// end is the offset after the last token or value read; peek the
	// offset of the next one when PeekKind has found it (0: not known).
	end, peek int
	// stack holds the open containers, the first being the top level,
	// which is an array of values without commas (jsontext's view).
	stack []frame
	err   error
}

// NewDecoder returns a Decoder of text.
func NewDecoder(text []byte) *Decoder {
	d := &Decoder{}
	d.Reset(text)
	return d
}

// Reset makes d read text from its start, keeping d's storage.
func (d *Decoder) Reset(text []byte) {
	d.buf, d.end, d.peek, d.err = text, 0, 0, nil
	d.stack = append(d.stack[:0], frame{})
}

// InputOffset is the offset in the text just after the last token or
// value read.
func (d *Decoder) InputOffset() int64 { return int64(d.end) }

// StackDepth is how many objects and arrays are open: 0 before the first
// token and after a top-level value, 1 inside a top-level object.
func (d *Decoder) StackDepth() int { return max(len(d.stack)-1, 0) }

// isSpace reports whether c is JSON white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// kindOf is the kind of a token that starts with c: '0' for a number,
// 0 for a byte that starts none.
func kindOf(c byte) jsontext.Kind {
	switch c {
	case '"', 'n', 't', 'f', '{', '}', '[', ']':
		return jsontext.Kind(c)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0'
	}
	return 0
}

// needDelim is the delimiter that must come before a token of kind next:
// ':' after a name, ',' between the elements of a container (not at the
// top level), else none.
func (d *Decoder) needDelim(next jsontext.Kind) byte {
	top := &d.stack[len(d.stack)-1]
	switch {
	case top.object && top.count%2 == 1:
		return ':'
	case top.count > 0 && next != '}' && next != ']' && len(d.stack) > 1:
		return ','
	}
	return 0
}

// PeekKind is the kind of the next token, without reading it: '"', '0'
// (a number), 'n', 't', 'f', '{', '}', '[' or ']'. It is 0 when the text
// ends or the next token cannot stand there, and then the next read
// fails.
func (d *Decoder) PeekKind() jsontext.Kind {
	if d.err != nil {
		return 0
	}
	if d.peek > 0 {
		return kindOf(d.buf[d.peek])
	}
	pos, err := d.next()
	if err != nil {
		return 0
	}
	d.peek = pos
	return kindOf(d.buf[pos])
}

// next finds the next token: past white space and the delimiter its
// place needs. It fails d when there is none.
func (d *Decoder) next() (int, error) {
	if d.peek > 0 {
		pos := d.peek
		d.peek = 0
		return pos, nil
	}
	pos := d.end
	for pos < len(d.buf) && isSpace(d.buf[pos]) {
		pos++
	}
	var delim byte
	if pos < len(d.buf) && (d.buf[pos] == ':' || d.buf[pos] == ',') {
		delim = d.buf[pos]
		pos++
		for pos < len(d.buf) && isSpace(d.buf[pos]) {
			pos++
		}
	}
	if pos >= len(d.buf) || d.needDelim(kindOf(d.buf[pos])) != delim {
		return 0, d.fail()
	}
	return pos, nil
}

// fail marks d failed and returns its error.
func (d *Decoder) fail() error {
	d.err = ErrSyntax
	d.peek = 0
	return d.err
}

// count counts a value read whole, or a name, in the container open: a
// value other than a string cannot be a name.
func (d *Decoder) count(isString bool) error {
	top := &d.stack[len(d.stack)-1]
	if top.object && top.count%2 == 0 && !isString {
		return d.fail()
	}
	top.count++
	return nil
}

// ReadToken reads the next token: a delimiter of an object or array, or
// a scalar, which it does not return (use ReadValue for those). The
// error is ErrSyntax.
func (d *Decoder) ReadToken() error {
	if d.err != nil {
		return d.err
	}
	pos, err := d.next()
	if err != nil {
		return err
	}
	top := &d.stack[len(d.stack)-1]
	switch c := d.buf[pos]; c {
	case '{', '[':
		if (top.object && top.count%2 == 0) || len(d.stack) > maxDepth {
			return d.fail()
		}
		top.count++
		d.stack = append(d.stack, frame{object: c == '{'})
		d.end = pos + 1
		return nil
	case '}', ']':
		if top.object != (c == '}') || len(d.stack) == 1 || (top.object && top.count%2 == 1) {
			return d.fail()
		}
		d.stack = d.stack[:len(d.stack)-1]
		d.end = pos + 1
		return nil
	}
	end, ok := d.value(pos, len(d.stack))
	if !ok {
		return d.fail()
	}
	if err := d.count(d.buf[pos] == '"'); err != nil {
		return err
	}
	d.end = end
	return nil
}

// ReadValue reads the next value whole and returns its text, a part of
// the text d reads (not to be changed). The next token being the end of
// an object or array is an error (ErrSyntax), as any other.
func (d *Decoder) ReadValue() (jsontext.Value, error) {
	if d.err != nil {
		return nil, d.err
	}
	pos, err := d.next()
	if err != nil {
		return nil, err
	}
	end, ok := d.value(pos, len(d.stack))
	if !ok {
		return nil, d.fail()
	}
	if err := d.count(d.buf[pos] == '"'); err != nil {
		return nil, err
	}
	d.end = end
	return d.buf[pos:end:end], nil
}

// Rest is the text from the start of the next token to the end of the
// input, once PeekKind has found that token. It is nil before PeekKind,
// after a failure, and for a token at offset 0 (the first of a text that
// does not start with white space), which the Decoder does not tell from
// one not yet found. A caller that reads a value from Rest itself tells
// the Decoder with ReadValueOf.
func (d *Decoder) Rest() []byte {
	if d.err != nil || d.peek == 0 {
		return nil
	}
	return d.buf[d.peek:]
}

// ReadValueOf reads the next value as ReadValue does, without looking at
// it: the caller has read it from Rest and vouches that its first n
// bytes are one valid JSON value, nested no deeper than the limit allows
// where it stands. It returns the value's text. Where Rest is nil (see
// Rest) it fails, and so fails the Decoder.
func (d *Decoder) ReadValueOf(n int) (jsontext.Value, error) {
	pos := d.peek
	if d.err != nil || pos == 0 || n <= 0 || n > len(d.buf)-pos {
		return nil, d.fail()
	}
	d.peek = 0
	if err := d.count(d.buf[pos] == '"'); err != nil {
		return nil, err
	}
	d.end = pos + n
	return d.buf[pos:d.end:d.end], nil
}

// SkipValue reads the next value and drops it.
func (d *Decoder) SkipValue() error {
	_, err := d.ReadValue()
	return err
}

// value reads the value at pos, with depth containers open around it,
// and returns the offset after it.
func (d *Decoder) value(pos, depth int) (int, bool) {
	b := d.buf
	switch b[pos] {
	case '"':
		return d.str(pos)
	case 'n':
		return literal(b, pos, "null")
	case 't':
		return literal(b, pos, "true")
	case 'f':
		return literal(b, pos, "false")
	case '{', '[':
		return d.container(pos, depth)
	}
	return number(b, pos)
}

// container reads the object or array at pos, depth containers open
// around it.
func (d *Decoder) container(pos, depth int) (int, bool) {
	b := d.buf
	if depth > maxDepth {
		return 0, false
	}
	object := b[pos] == '{'
	closing := byte(']')
	if object {
		closing = '}'
	}
	pos = skipSpace(b, pos+1)
	if pos < len(b) && b[pos] == closing {
		return pos + 1, true
	}
	for {
		var ok bool
		if object {
			if pos >= len(b) || b[pos] != '"' {
				return 0, false
			}
			if pos, ok = d.str(pos); !ok {
				return 0, false
			}
			if pos = skipSpace(b, pos); pos >= len(b) || b[pos] != ':' {
				return 0, false
			}
			pos = skipSpace(b, pos+1)
		}
		if pos >= len(b) {
			return 0, false
		}
		if pos, ok = d.value(pos, depth+1); !ok {
			return 0, false
		}
		if pos = skipSpace(b, pos); pos >= len(b) {
			return 0, false
		}
		switch b[pos] {
		case ',':
			pos = skipSpace(b, pos+1)
		case closing:
			return pos + 1, true
		default:
			return 0, false
		}
	}
}

// skipSpace returns the offset of the first byte at or after pos that is
// not white space.
func skipSpace(b []byte, pos int) int {
	for pos < len(b) && isSpace(b[pos]) {
		pos++
	}
	return pos
}

// literal reads the literal lit at pos.
func literal(b []byte, pos int, lit string) (int, bool) {
	if len(b)-pos < len(lit) || string(b[pos:pos+len(lit)]) != lit {
		return 0, false
	}
	return pos + len(lit), true
}

// number reads the number at pos: an optional minus, an integer without
// leading zeros, an optional fraction and exponent. What follows it is
// not looked at.
func number(b []byte, pos int) (int, bool) {
	if pos < len(b) && b[pos] == '-' {
		pos++
	}
	switch {
	case pos >= len(b):
		return 0, false
	case b[pos] == '0':
		pos++
	case '1' <= b[pos] && b[pos] <= '9':
		pos = digits(b, pos+1)
	default:
		return 0, false
	}
	if pos < len(b) && b[pos] == '.' {
		if pos+1 >= len(b) || !isDigit(b[pos+1]) {
			return 0, false
		}
		pos = digits(b, pos+1)
	}
	if pos < len(b) && (b[pos] == 'e' || b[pos] == 'E') {
		pos++
		if pos < len(b) && (b[pos] == '-' || b[pos] == '+') {
			pos++
		}
		if pos >= len(b) || !isDigit(b[pos]) {
			return 0, false
		}
		pos = digits(b, pos)
	}
	return pos, true
}

// isDigit reports whether c is a decimal digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits returns the offset of the first byte at or after pos that is
// not a digit.
func digits(b []byte, pos int) int {
	for pos < len(b) && isDigit(b[pos]) {
		pos++
	}
	return pos
}

// plain marks the bytes that a string holds as they are: printable ASCII
// but the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string at pos: no control characters, valid escapes
// (\u escapes of surrogates in pairs), valid UTF-8.
func (d *Decoder) str(pos int) (int, bool) {
	b := d.buf
	pos++
	for {
		for pos < len(b) && plain[b[pos]] {
			pos++
		}
		if pos >= len(b) {
			return 0, false
		}
		switch c := b[pos]; {
		case c == '"':
			return pos + 1, true
		case c == '\\':
			n, ok := escape(b, pos)
			if !ok {
				return 0, false
			}
			pos += n
		case c < ' ':
			return 0, false
		default:
			r, n := utf8.DecodeRune(b[pos:])
			if r == utf8.RuneError && n == 1 {
				return 0, false
			}
			pos += n
		}
	}
}

// escape reads the escape at pos and returns its length: a surrogate's
// \u escape must be followed by its pair's.
func escape(b []byte, pos int) (int, bool) {
	if pos+1 >= len(b) {
		return 0, false
	}
	switch b[pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
	default:
		return 0, false
	}
	v1, ok := hex4(b, pos+2)
	if !ok {
		return 0, false
	}
	if !utf16.IsSurrogate(rune(v1)) {
		return 6, true
	}
	if pos+12 > len(b) || b[pos+6] != '\\' || b[pos+7] != 'u' {
		return 0, false
	}
	v2, ok := hex4(b, pos+8)
	if !ok || utf16.DecodeRune(rune(v1), rune(v2)) == utf8.RuneError {
		return 0, false
	}
	return 12, true
}

// hex4 reads four hexadecimal digits at pos.
func hex4(b []byte, pos int) (uint16, bool) {
	if pos+4 > len(b) {
		return 0, false
	}
	var v uint16
	for _, c := range b[pos : pos+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(c)
	}
	return v, true
}
