package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// richSnapshot is a valid snapshot that gives every key of the contract
// at least once: nodes, teams, and a running, an evicting and a pending
// job. Its keys are in an order that puts a part decoded in one piece
// after lists of objects ("nodes" before "levels", "now" last), so that
// a type error there is found after reading past those lists.
const richSnapshot = `{"cluster":{"nodes":[` +
	`{"name":"n0","gpus":8,"gpuType":"H100","domains":{"spine":"s0","leaf":"l0"},"state":"ready","unhealthyGPUs":[7]},` +
	`{"name":"n1","gpus":8,"gpuType":"H100","domains":{"spine":"s0","leaf":"l1"},"state":"draining","unhealthyGPUs":[6,7]}],` +
	`"levels":["spine","leaf"]},` +
	`"teams":[{"name":"org","share":60,"usage":0},` +
	`{"name":"t","share":40,"usage":86400.5,"parent":"org","quota":{"gpus":16,"borrowLimit":4}}],` +
	`"jobs":[` +
	`{"id":"R","team":"t","tier":1,"kind":"training","submitted":"2026-12-01T23:00:00Z","members":2,"gpusPerMember":2,` +
	`"gpuType":"H100","timeLimit":"24h","checkpointGrace":"5m","topology":{"required":"spine","preferred":"leaf"},` +
	`"placement":"pack","group":"g","spreadLevel":"leaf","state":"running","started":"2026-12-01T23:30:00Z",` +
	`"allocation":[{"node":"n0","gpus":[0,1]},{"node":"n1","gpus":[0,1]}]},` +
	`{"id":"E","team":"t","tier":2,"kind":"inference","gpusPerMember":1,"checkpointGrace":"90s","state":"evicting",` +
	`"evictedAt":"2026-12-01T23:59:00Z","allocation":[{"node":"n0","gpus":[2]}]},` +
	`{"id":"P","tier":0,"gpusPerMember":4,"placement":"spread","group":"g","spreadLevel":"leaf","timeLimit":"1h","mixGPUTypes":true}],` +
	`"now":"2026-12-02T00:00:00Z"}`

// richPolicy is a valid policy file that gives every key.
const richPolicy = `{"backfill":"conservative","reservations":3,"enforceTimeLimits":false,"backfillOrder":"shortest",` +
	`"fairshare":{"halfLife":"24h","weights":{"fairshare":1000,"age":0,"size":5.5},"ageMax":"72h"},` +
	`"preemption":{"matrix":[[false,true,true],[false,false,true],[false,false,false]],"disabled":false},` +
	`"horizon":"36h","order":"tier"}`

// jsonSpan is where one value of a document is: data[start:end].
type jsonSpan struct {
	start, end int
	kind       byte   // the value's first byte, '{', '[', '"', 't' and 'f' as 't', 'n', or '0' for a number
	key        string // the key of the innermost object member that holds the value, "" for none
}

// jsonArray is one array of a document: its '[', its elements and the
// key of the innermost object member that holds it.
type jsonArray struct {
	open  int
	elems []jsonSpan
	key   string
}

// jsonSpans lists every value of a well-formed document (the document
// itself included) and every array, in document order.
func jsonSpans(t *testing.T, data string) (values []jsonSpan, arrays []jsonArray) {
	type frame struct {
		start     int
		array     int // index in arrays, or -1 for an object
		expectKey bool
		key       string // of an object: its current key
	}
	var stack []frame
	// key is the key of the innermost object member that holds what is
	// read now.
	key := func() string {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].array < 0 {
				return stack[i].key
			}
		}
		return ""
	}
	dec := json.NewDecoder(strings.NewReader(data))
	prev := 0
	value := func(s jsonSpan) {
		values = append(values, s)
		if len(stack) == 0 {
			return
		}
		if top := &stack[len(stack)-1]; top.array >= 0 {
			arrays[top.array].elems = append(arrays[top.array].elems, s)
		} else {
			top.expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		end := int(dec.InputOffset())
		start := prev
		for strings.IndexByte(" \t\r\n,:", data[start]) >= 0 {
			start++
		}
		prev = end
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{start: start, array: -1, expectKey: true})
		case json.Delim('['):
			stack = append(stack, frame{start: start, array: len(arrays)})
			arrays = append(arrays, jsonArray{open: start, key: key()})
		case json.Delim('}'), json.Delim(']'):
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			value(jsonSpan{f.start, end, data[f.start], key()})
		default:
			if top := len(stack) - 1; top >= 0 && stack[top].expectKey {
				stack[top].expectKey = false
				stack[top].key = tok.(string)
				continue
			}
			value(jsonSpan{start, end, kindByte(data[start]), key()})
		}
	}
	return values, arrays
}

func kindByte(b byte) byte {
	switch b {
	case '{', '[', '"', 'n':
		return b
	case 't', 'f':
		return 't'
	}
	return '0'
}

// strayValues are put in the place of a value or among the elements of
// an array: one of each JSON kind, and a few of each container.
var strayValues = []string{`3`, `-1.5`, `"x"`, `true`, `null`, `[]`, `[3]`, `[null]`, `[{}]`, `{}`, `{"a":1}`, `{"a":null}`}

// malformed is one variant of a valid document, whether it must be
// rejected and, if so, a key its error must name ("" for any error).
type malformed struct {
	desc, doc string
	bad       bool
	key       string
}

// malformedVariants derives variants of the valid document doc: each
// value replaced by each stray value, and each stray value inserted at
// each place of each array. A variant must be rejected when the stray
// value's kind differs from the kind of what it replaces or of the
// array's elements, unless it is null; other variants may be valid. Then, for each object element of an array followed by a
// scalar, each later value replaced by one of another kind.
func malformedVariants(t *testing.T, doc string) []malformed {
	values, arrays := jsonSpans(t, doc)
	var out []malformed
	add := func(desc, v string, bad bool, key string) {
		out = append(out, malformed{desc, v, bad, key})
	}
	for _, s := range values {
		for _, x := range strayValues {
			add(fmt.Sprintf("%s replaced by %s", doc[s.start:s.end], x), doc[:s.start]+x+doc[s.end:],
				kindByte(x[0]) != s.kind || strings.Contains(x, "null"), s.key)
		}
	}
	for _, a := range arrays {
		for i := 0; i <= len(a.elems); i++ {
			for _, x := range strayValues {
				var v string
				switch {
				case len(a.elems) == 0:
					v = doc[:a.open+1] + x + doc[a.open+1:]
				case i < len(a.elems):
					v = doc[:a.elems[i].start] + x + "," + doc[a.elems[i].start:]
				default:
					end := a.elems[i-1].end
					v = doc[:end] + "," + x + doc[end:]
				}
				bad := strings.Contains(x, "null") || len(a.elems) > 0 && kindByte(x[0]) != a.elems[0].kind
				add(fmt.Sprintf("%s inserted at %d of the array at offset %d", x, i, a.open), v, bad, a.key)
			}
		}
		// A scalar after an object element, then a type error later on.
		for _, e := range a.elems {
			if e.kind != '{' {
				continue
			}
			for _, x := range []string{`3`, `null`, `"x"`} {
				withStray := doc[:e.end] + "," + x + doc[e.end:]
				for _, s := range values {
					if s.start < e.end || s.kind == '{' || s.kind == '[' {
						continue
					}
					y := `3`
					if s.kind == '0' {
						y = `"x"`
					}
					shift := len(x) + 1
					v := withStray[:s.start+shift] + y + withStray[s.end+shift:]
					add(fmt.Sprintf("%s after the object at offset %d, %s replaced by %s", x, e.start, doc[s.start:s.end], y), v, true, "")
				}
			}
		}
	}
	return out
}

// checkMalformed decodes every variant of doc with decode and reports
// each panic, each accepted variant that must be rejected, each error
// that check refuses and each error that does not name the key it must
// name, at most a few of each kind.
func checkMalformed(t *testing.T, doc string, min int, decode func(string) error, check func(error) string) {
	t.Helper()
	require.NoError(t, decode(doc))
	variants := malformedVariants(t, doc)
	require.Greater(t, len(variants), min)
	counts := map[string]int{}
	report := func(kind string, format string, args ...any) {
		if counts[kind]++; counts[kind] <= 5 {
			t.Errorf(kind+": "+format, args...)
		}
	}
	for _, v := range variants {
		var err error
		panicked := true
		func() {
			defer func() {
				if p := recover(); panicked {
					report("panic", "%s: %v\n%s", v.desc, p, v.doc)
				}
			}()
			err = decode(v.doc)
			panicked = false
		}()
		switch {
		case panicked:
		case err == nil && v.bad:
			report("accepted", "%s\n%s", v.desc, v.doc)
		case err != nil:
			if msg := check(err); msg != "" {
				report("bad error", "%s: %s", v.desc, msg)
			} else if v.bad && !strings.Contains(err.Error(), v.key) {
				report("wrong place", "%s: the error does not name %q: %v", v.desc, v.key, err)
			}
		}
	}
	for kind, n := range counts {
		t.Errorf("%d variants of %d: %s", n, len(variants), kind)
	}
}

// TestMalformedSnapshots: no variant of a valid snapshot makes decoding
// panic, and every variant with a value of the wrong kind or a null is
// rejected with a *ValidationError on one line.
func TestMalformedSnapshots(t *testing.T) {
	checkMalformed(t, richSnapshot, 2000, func(doc string) error {
		_, err := DecodeSnapshot(strings.NewReader(doc))
		return err
	}, func(err error) string {
		var ve *ValidationError
		if !errors.As(err, &ve) {
			return fmt.Sprintf("error of type %T: %v", err, err)
		}
		if strings.Contains(err.Error(), "\n") {
			return fmt.Sprintf("error on more than one line: %q", err)
		}
		return ""
	})
}

// TestMalformedPolicies: likewise for policy files, whose errors start
// with "config: ".
func TestMalformedPolicies(t *testing.T) {
	checkMalformed(t, richPolicy, 500, func(doc string) error {
		_, err := DecodeConfig(strings.NewReader(doc))
		return err
	}, func(err error) string {
		if !strings.HasPrefix(err.Error(), "config: ") || strings.Contains(err.Error(), "\n") {
			return fmt.Sprintf("error not on one line starting with config: %q", err)
		}
		return ""
	})
}

// TestDecodeMalformedErrors: a scalar after an object in an array is an
// error naming the value, with its index, also when the error is found
// after it; an object or array of the wrong type is named by its own
// path. A scalar of the wrong type where a scalar belongs is named by
// its list, as before.
func TestDecodeMalformedErrors(t *testing.T) {
	running := func(alloc string) string {
		return snapJSON(`{"id":"A","members":1,"gpusPerMember":2,"state":"running","allocation":` + alloc + `}`)
	}
	for _, tt := range []struct{ json, want string }{
		{running(`[{"node":"n0","gpus":[0,1]},3]`), `snapshot: jobs[0] "A": allocation[1]: want an object, got number`},
		{running(`[{"node":"n0","gpus":[0,1]},"n1"]`), `snapshot: jobs[0] "A": allocation[1]: want an object, got string`},
		{running(`[{"node":"n0","gpus":[0,1]},[0]]`), `snapshot: jobs[0] "A": allocation[1]: want an object, got array`},
		{`{"cluster":{"nodes":[{},1]},"now":5}`, `snapshot: now: want a string, got number`},
		{`{"cluster":{"nodes":[{},null]},"now":5}`, `snapshot: now: want a string, got number`},
		{`{"cluster":{"nodes":[[{}],1]},"now":true}`, `snapshot: now: want a string, got bool`},
		{`{"cluster":{"nodes":[{"name":"n0","gpus":8},1]},"now":"2026-12-02T00:00:00Z"}`, `snapshot: cluster: nodes[1]: want an object, got number`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"unhealthyGPUs":[{},1]}]}}`,
			`snapshot: cluster: nodes[0] "n0": unhealthyGPUs[0]: want an integer, got object`},
		{`{"preemption":{"matrix":[[false],{}],"disabled":1}}`, `config: preemption.matrix[1]: want an array, got object`},
		{`{"backfill":[],"reservations":3}`, `config: backfill: want a string, got array`},
		{`{"preemption":{"matrix":[[false],true]}}`, `config: preemption.matrix[1]: want an array, got bool`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"unhealthyGPUs":[0,"1"]}]}}`,
			`snapshot: cluster: nodes[0] "n0": unhealthyGPUs: want an integer, got string`},
		{`{"fairshare":{"weights":{"age":{}},"halfLife":"1h"}}`, `config: fairshare.weights.age: want a number, got object`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8}],"levels":[["a"]]}}`, `snapshot: cluster: levels[0]: want a string, got array`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":{},"levels":[]}}`, `snapshot: cluster: nodes: want an array, got object`},
	} {
		t.Run(tt.json, func(t *testing.T) {
			var err error
			if strings.HasPrefix(tt.want, "config: ") {
				require.NotPanics(t, func() { _, err = DecodeConfig(strings.NewReader(tt.json)) })
			} else {
				require.NotPanics(t, func() { _, err = DecodeSnapshot(strings.NewReader(tt.json)) })
			}
			require.EqualError(t, err, tt.want)
		})
	}
}

// TestDecodeNulls: null is not a value. Where the contract has a default
// it is the default of a key left out, not of a null; a null is an error
// naming it, like a value of the wrong type.
func TestDecodeNulls(t *testing.T) {
	running := func(alloc string) string {
		return snapJSON(`{"id":"A","members":1,"gpusPerMember":2,"state":"running","allocation":` + alloc + `}`)
	}
	node := func(extra string) string {
		return `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8` + extra + `}]}}`
	}
	job := func(extra string) string { return snapJSON(`{"id":"A","gpusPerMember":1` + extra + `}`) }
	for _, tt := range []struct{ json, want string }{
		{running(`[{"node":"n0","gpus":[0,1]},null]`), `snapshot: jobs[0] "A": allocation[1]: want an object, got null`},
		{running(`[{"node":"n0","gpus":[0,null]}]`), `snapshot: jobs[0] "A": allocation[0].gpus: want an integer, got null`},
		{running(`[{"node":"n0","gpus":[null]}]`), `snapshot: jobs[0] "A": allocation[0].gpus: want an integer, got null`},
		{running(`[{"node":"n0","gpus":null}]`), `snapshot: jobs[0] "A": allocation[0].gpus: want an array, got null`},
		{running(`[{"node":null,"gpus":[0,1]}]`), `snapshot: jobs[0] "A": allocation[0].node: want a string, got null`},
		{running(`null`), `snapshot: jobs[0] "A": allocation: want an array, got null`},
		{`{"cluster":{"nodes":[{"name":"n0","gpus":8},null]},"now":"2026-12-02T00:00:00Z"}`, `snapshot: cluster: nodes[1]: want an object, got null`},
		{node(`,"unhealthyGPUs":[0,null]`), `snapshot: cluster: nodes[0] "n0": unhealthyGPUs: want an integer, got null`},
		{node(`,"unhealthyGPUs":null`), `snapshot: cluster: nodes[0] "n0": unhealthyGPUs: want an array, got null`},
		{node(`,"state":null`), `snapshot: cluster: nodes[0] "n0": state: want a string, got null`},
		{node(`,"gpuType":null`), `snapshot: cluster: nodes[0] "n0": gpuType: want a string, got null`},
		{node(`,"domains":null`), `snapshot: cluster: nodes[0] "n0": domains: want an object, got null`},
		{node(`,"domains":{"spine":null}`), `snapshot: cluster: nodes[0] "n0": domains.spine: want a string, got null`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":null,"gpus":8}]}}`, `snapshot: cluster: nodes[0]: name: want a string, got null`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":null}`, `snapshot: cluster: want an object, got null`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":null}}`, `snapshot: cluster: nodes: want an array, got null`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"levels":null}}`, `snapshot: cluster: levels: want an array, got null`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"levels":["a",null]}}`, `snapshot: cluster: levels: want a string, got null`},
		{`{"now":null,"cluster":{"nodes":[{"name":"n0","gpus":8}]}}`, `snapshot: now: want a string, got null`},
		{`{"now":"2026-12-02T00:00:00Z","teams":null}`, `snapshot: teams: want an array, got null`},
		{`{"now":"2026-12-02T00:00:00Z","jobs":null}`, `snapshot: jobs: want an array, got null`},
		{`{"now":"2026-12-02T00:00:00Z","jobs":[null]}`, `snapshot: jobs[0]: want an object, got null`},
		{`{"now":"2026-12-02T00:00:00Z","teams":[{"name":"t"},null]}`, `snapshot: teams[1]: want an object, got null`},
		{snapWith(`"teams":[{"name":"t","quota":null}]`), `snapshot: teams[0] "t": quota: want an object, got null`},
		{snapWith(`"teams":[{"name":"t","quota":{"gpus":null}}]`), `snapshot: teams[0] "t": quota.gpus: want an integer, got null`},
		{snapWith(`"teams":[{"name":"t","share":null}]`), `snapshot: teams[0] "t": share: want a number, got null`},
		{snapWith(`"teams":[{"name":"t","parent":null}]`), `snapshot: teams[0] "t": parent: want a string, got null`},
		{job(`,"tier":null`), `snapshot: jobs[0] "A": tier: want an integer, got null`},
		{job(`,"members":null`), `snapshot: jobs[0] "A": members: want an integer, got null`},
		{job(`,"kind":null`), `snapshot: jobs[0] "A": kind: want a string, got null`},
		{job(`,"state":null`), `snapshot: jobs[0] "A": state: want a string, got null`},
		{job(`,"timeLimit":null`), `snapshot: jobs[0] "A": timeLimit: want a string, got null`},
		{job(`,"checkpointGrace":null`), `snapshot: jobs[0] "A": checkpointGrace: want a string, got null`},
		{job(`,"team":null`), `snapshot: jobs[0] "A": team: want a string, got null`},
		{job(`,"topology":null`), `snapshot: jobs[0] "A": topology: want an object, got null`},
		{job(`,"topology":{"required":null}`), `snapshot: jobs[0] "A": topology.required: want a string, got null`},
		{snapJSON(`{"id":null,"gpusPerMember":1}`), `snapshot: jobs[0]: id: want a string, got null`},
		{`null`, `snapshot: json: want an object, got null`},
		{" null\n", `snapshot: json: want an object, got null`},
	} {
		t.Run(tt.json, func(t *testing.T) {
			s, err := DecodeSnapshot(strings.NewReader(tt.json))
			require.Nil(t, s)
			require.EqualError(t, err, tt.want)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
		})
	}
	for _, tt := range []struct{ json, want string }{
		{`{"backfill":null}`, `config: backfill: want a string, got null`},
		{`{"reservations":null}`, `config: reservations: want an integer, got null`},
		{`{"enforceTimeLimits":null}`, `config: enforceTimeLimits: want true or false, got null`},
		{`{"fairshare":null}`, `config: fairshare: want an object, got null`},
		{`{"fairshare":{"weights":null}}`, `config: fairshare.weights: want an object, got null`},
		{`{"fairshare":{"weights":{"age":null}}}`, `config: fairshare.weights.age: want a number, got null`},
		{`{"preemption":null}`, `config: preemption: want an object, got null`},
		{`{"preemption":{"matrix":null}}`, `config: preemption.matrix: want an array, got null`},
		{`{"preemption":{"matrix":[[false,true],null]}}`, `config: preemption.matrix[1]: want an array, got null`},
		{`{"preemption":{"matrix":[[false,null],[false,false]]}}`, `config: preemption.matrix[0][1]: want true, false, 1 or 0, got null`},
		{`{"preemption":{"disabled":null}}`, `config: preemption.disabled: want true or false, got null`},
		{`{"horizon":null}`, `config: horizon: want a string, got null`},
		{`{"order":null}`, `config: order: want a string, got null`},
		{`null`, `config: json: want an object, got null`},
	} {
		t.Run(tt.json, func(t *testing.T) {
			_, err := DecodeConfig(strings.NewReader(tt.json))
			require.EqualError(t, err, tt.want)
		})
	}
}

// TestDecodeNullAnywhere: a null in the place of any value of the
// design's example snapshot is an error about that null.
func TestDecodeNullAnywhere(t *testing.T) {
	data, err := os.ReadFile(designFile)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, data))
	doc := buf.String()
	values, _ := jsonSpans(t, doc)
	for _, s := range values {
		v := doc[:s.start] + "null" + doc[s.end:]
		_, err := DecodeSnapshot(strings.NewReader(v))
		require.ErrorContains(t, err, "got null", v)
	}
}
