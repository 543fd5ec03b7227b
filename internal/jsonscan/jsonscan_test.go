package jsonscan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// compare drives a Decoder and a jsontext.Decoder over text with the same
// calls, chosen by ops and by what the text holds, and fails t at the
// first call whose answer differs: the kind PeekKind tells, a value, an
// offset, a depth, or one failing and the other not. It stops at the
// first error (the readers of this module stop there too) or after limit
// calls. The Decoder is one that read another text and failed, then was
// Reset, as the readers reuse one for every part of a document.
func compare(t *testing.T, text, ops []byte, limit int) {
	t.Helper()
	ours := NewDecoder([]byte(`[{"a":`))
	_, _, _ = ours.ReadToken(), ours.ReadToken(), ours.PeekKind()
	_, _ = ours.ReadValue()
	if ours.PeekKind() != 0 || ours.ReadToken() == nil {
		t.Fatal("a text cut short reads on")
	}
	ours.Reset(text)
	ref := jsontext.NewDecoder(bytes.NewBuffer(text), jsontext.AllowDuplicateNames(true))
	op := func(i int) byte {
		if len(ops) == 0 {
			return 0
		}
		return ops[i%len(ops)]
	}
	for i := range limit {
		o := op(i)
		// Most calls look first, as the readers do before a container
		// or a list's next element; an op with its top bit set reads
		// without looking, as they read a member's value.
		var k jsontext.Kind
		if o&0x80 == 0 {
			rk := ref.PeekKind()
			if k = ours.PeekKind(); k != rk {
				t.Fatalf("call %d: PeekKind %q, jsontext %q", i, k, rk)
			}
		}
		var err, rerr error
		var v, rv []byte
		switch {
		case o%8 == 7:
			err, rerr = ours.SkipValue(), ref.SkipValue()
		case o%8 == 6 || (k != '{' && k != '[' && k != '}' && k != ']' && o%2 == 0):
			v, err = ours.ReadValue()
			rv, rerr = ref.ReadValue()
		default:
			err = ours.ReadToken()
			_, rerr = ref.ReadToken()
		}
		if (err != nil) != (rerr != nil) {
			t.Fatalf("call %d (kind %q, op %d): error %v, jsontext %v", i, k, o%8, err, rerr)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(v, rv) {
			t.Fatalf("call %d: value %q, jsontext %q", i, v, rv)
		}
		if ours.InputOffset() != ref.InputOffset() || ours.StackDepth() != ref.StackDepth() {
			t.Fatalf("call %d: offset %d depth %d, jsontext %d %d", i, ours.InputOffset(), ours.StackDepth(), ref.InputOffset(), ref.StackDepth())
		}
	}
}

// tricky are texts at the edges of the grammar, each one character away
// from a text the other side of the edge.
var tricky = []string{
	``, ` `, `{}`, `[]`, `{} {}`, `{}x`, `[1,]`, `[,1]`, `[1 2]`, `{"a" 1}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`,
	`{1:2}`, `{"a":1]`, `[1}`, `]`, `}`, `{"a":[1,{"b":null}],"c":true}`, `nul`, `nullx`, `[truex]`, `[fals]`,
	`0`, `-0`, `-`, `01`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1E-7`, `1e5x`, `-01`, `[-]`, `[1.e5]`, `123456789012345678901234567890`,
	`"`, `"abc`, `"a\"b"`, `"\/\b\f\n\r\t\\"`, `"\x"`, `"\u00e9"`, `"\u00E9"`, `"\u12"`, `"\u12g4"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00"`, `"\ud83d\u0041"`, `"\ud83d\ud83d"`, "\"\x01\"", "\"\x7f\"",
	"\"\xff\"", "\"\xc3\xa9\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\"", "\"\xe2\x82\"", "{\"a\":\"\t\"}",
	"\t{\r\n\"a\" :\n 1 }", `{"a":{"b":{"c":[[[]]]}}}`, `[{}]`, `[[],[]]`, `{"":""}`,
}

// deep nests n arrays, or objects with empty names.
func deep(n int, object bool) string {
	if object {
		return strings.Repeat(`{"":`, n) + `1` + strings.Repeat(`}`, n)
	}
	return strings.Repeat(`[`, n) + strings.Repeat(`]`, n)
}

// TestAgainstJSONTextTricky: the edges of the grammar and of the depth
// limit (10,000 open containers, reached by tokens, by a value read
// whole, or by both), under every call sequence of a few kinds.
func TestAgainstJSONTextTricky(t *testing.T) {
	var zero Decoder // reads an empty text
	if zero.StackDepth() != 0 || zero.InputOffset() != 0 || zero.PeekKind() != 0 || zero.ReadToken() == nil {
		t.Fatal("the zero Decoder is not a reader of an empty text")
	}
	texts := append([]string{}, tricky...)
	for _, n := range []int{9999, 10000, 10001} {
		texts = append(texts, deep(n, false), deep(n, true))
	}
	for _, text := range texts {
		for _, ops := range [][]byte{nil, {1}, {6}, {7}, {1, 1, 6}, {1, 1, 1, 7}, {1, 0, 1, 6}, {0x81, 0x86}, {1, 0x80, 0x81, 0x86, 0x87}} {
			compare(t, []byte(text), ops, 30000)
		}
	}
}

// FuzzAgainstJSONText: for any text and any sequence of calls, Decoder
// answers as jsontext.Decoder does. Its seeds are the tricky texts and
// the JSON files of the step command's tests and of the scheduler's.
func FuzzAgainstJSONText(f *testing.F) {
	for _, text := range tricky {
		f.Add([]byte(text), []byte{0})
		f.Add([]byte(text), []byte{1, 6})
	}
	for _, dir := range []string{"../../examples/step/testdata", "../../scheduler/testdata/repro"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) == 0 {
			f.Fatalf("no seed files in %s", dir)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, []byte{0})
			f.Add(data, []byte{1, 1, 2, 6})
			f.Add(data, []byte{1, 0x81, 0x80, 0x86})
		}
	}
	f.Fuzz(func(t *testing.T, text, ops []byte) {
		compare(t, text, ops, 100000)
	})
}

// TestReadValueOfAsReadValue checks that reading a value with Rest and
// ReadValueOf leaves a Decoder as ReadValue does: at every value of each
// text, one Decoder reads it with ReadValue and another with ReadValueOf
// of the same length, and from there on the two answer every call alike
// to the end of the text.
func TestReadValueOfAsReadValue(t *testing.T) {
	texts := []string{
		` [1, "two", {"a": [3, {"b": null}], "c": true}, [], {}, -4.5e6, false]`,
		"\n{\"jobs\": [{\"id\": \"a\", \"gpus\": [0, 1]}, {\"id\": \"b\"}], \"now\": \"x\"}",
		` {"a": {"b": {"c": [[[]]]}}, "d": ""}`,
		` [ "x" , 7 ] `,
	}
	for _, text := range texts {
		for at := 0; ; at++ {
			a, b := NewDecoder([]byte(text)), NewDecoder([]byte(text))
			taken := false
			values := 0
			for {
				ka, kb := a.PeekKind(), b.PeekKind()
				if ka != kb {
					t.Fatalf("%s, value %d: kinds %q and %q", text, at, ka, kb)
				}
				if ka == 0 {
					break
				}
				if ka == '}' || ka == ']' || a.StackDepth() > 0 && isName(a) {
					if ea, eb := a.ReadToken(), b.ReadToken(); (ea == nil) != (eb == nil) {
						t.Fatalf("%s: delimiters read differently", text)
					}
					continue
				}
				if values == at {
					rest := b.Rest()
					va, ea := a.ReadValue()
					if ea != nil || !bytes.HasPrefix(rest, va) {
						t.Fatalf("%s: value %d: %q is not at the start of Rest %q", text, at, va, rest)
					}
					vb, eb := b.ReadValueOf(len(va))
					if eb != nil || !bytes.Equal(va, vb) {
						t.Fatalf("%s: value %d: ReadValueOf gave %q, %v; ReadValue %q", text, at, vb, eb, va)
					}
					taken = true
				} else if ka == '{' || ka == '[' {
					if ea, eb := a.ReadToken(), b.ReadToken(); ea != nil || eb != nil {
						t.Fatalf("%s: opening a container: %v, %v", text, ea, eb)
					}
				} else {
					va, ea := a.ReadValue()
					vb, eb := b.ReadValue()
					if ea != nil || eb != nil || !bytes.Equal(va, vb) {
						t.Fatalf("%s: after value %d: %q, %v against %q, %v", text, at, vb, eb, va, ea)
					}
				}
				values++
				if a.InputOffset() != b.InputOffset() || a.StackDepth() != b.StackDepth() {
					t.Fatalf("%s: after value %d: offsets %d, %d, depths %d, %d", text, at,
						a.InputOffset(), b.InputOffset(), a.StackDepth(), b.StackDepth())
				}
			}
			if !taken {
				if at == 0 {
					t.Fatalf("%s: no value read", text)
				}
				break
			}
		}
	}
	d := NewDecoder([]byte(`[1]`))
	if _, err := d.ReadValueOf(1); err == nil {
		t.Fatal("ReadValueOf with nothing peeked succeeded")
	}
	if d := NewDecoder([]byte(`[1]`)); d.PeekKind() != '[' || d.Rest() != nil {
		t.Fatal("Rest of a value at the start of the text is not nil")
	}
}

// isName reports whether the next token of d, inside an object, is a
// member's name: d has read an even number of tokens there.
func isName(d *Decoder) bool {
	top := d.stack[len(d.stack)-1]
	return top.object && top.count%2 == 0
}
