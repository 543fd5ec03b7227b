package scheduler

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// strictTypes are the types strictCheck is given, for documents and for
// their parts, then one more of each kind of schema.
var strictTypes = []reflect.Type{
	reflect.TypeFor[*wireSnapshot](), reflect.TypeFor[*wirePolicy](),
	reflect.TypeFor[*wireCluster](), reflect.TypeFor[*wireNode](), reflect.TypeFor[*wireTeam](), reflect.TypeFor[*wireJob](),
	reflect.TypeFor[[]wireNodeGPUs](), reflect.TypeFor[map[string]string](), reflect.TypeFor[*string](),
	reflect.TypeFor[[][]json.RawMessage](), reflect.TypeFor[json.RawMessage](),
}

// partTypes are the types of the parts that decodePart checks.
var partTypes = strictTypes[2:6]

// strictTally counts the outcomes of the comparisons of one test, so
// that it can tell that they were not all alike: a comparison that only
// ever sees well-formed input proves little.
type strictTally map[string]int

// add counts one outcome by the start of its message.
func (c strictTally) add(msg string, ok bool) {
	switch {
	case ok:
		c["ok"]++
	case strings.HasPrefix(msg, "unknown field"):
		c["unknown"]++
	case strings.HasPrefix(msg, "duplicate field"):
		c["duplicate"]++
	case strings.HasSuffix(msg, "got null"):
		c["null"]++
	default:
		c[msg]++
	}
}

// sameAsOracle compares strictCheck with strictCheckOracle on data read
// as t and describes how they differ, "" when they do not.
func sameAsOracle(data []byte, t reflect.Type, tally strictTally) string {
	path, msg, ok := strictCheck(data, t)
	wantPath, wantMsg, wantOK := strictCheckOracle(data, t)
	if tally != nil {
		tally.add(wantMsg, wantOK)
	}
	if path != wantPath || msg != wantMsg || ok != wantOK {
		return fmt.Sprintf("%v: strictCheck gives (%q, %q, %v), the oracle (%q, %q, %v), for\n%q",
			t, path, msg, ok, wantPath, wantMsg, wantOK, data)
	}
	return ""
}

// strictDiffs compares strictCheck with the oracle on data as each of
// strictTypes; on each part of data that decodePart would check (when
// data reads as a snapshot); and, as each part type, on the input from
// each of at most maxOffsets '{' of data on (all for a negative
// maxOffsets), chosen evenly, so that what follows a part is there too.
func strictDiffs(data []byte, maxOffsets int, tally strictTally) []string {
	var diffs []string
	check := func(data []byte, types ...reflect.Type) {
		for _, t := range types {
			if d := sameAsOracle(data, t, tally); d != "" {
				diffs = append(diffs, d)
			}
		}
	}
	check(data, strictTypes...)
	var snap wireSnapshot
	if json.Unmarshal(data, &snap) == nil {
		check(snap.Cluster, partTypes[0])
		var c wireCluster
		if json.Unmarshal(snap.Cluster, &c) == nil {
			for _, n := range c.Nodes {
				check(n, partTypes[1])
			}
		}
		for _, raw := range snap.Teams {
			check(raw, partTypes[2])
		}
		for _, raw := range snap.Jobs {
			check(raw, partTypes[3])
		}
	}
	var offsets []int
	for i, c := range data {
		if c == '{' && i > 0 {
			offsets = append(offsets, i)
		}
	}
	step := 1
	if maxOffsets >= 0 && len(offsets) > maxOffsets {
		step = (len(offsets) + maxOffsets - 1) / max(maxOffsets, 1)
	}
	for i := 0; i < len(offsets) && maxOffsets != 0; i += step {
		check(data[offsets[i]:], partTypes...)
	}
	return diffs
}

// requireNoDiffs fails t with the first few differences.
func requireNoDiffs(t testing.TB, diffs []string) {
	t.Helper()
	if len(diffs) > 0 {
		t.Fatalf("%d differences from the oracle; the first:\n%s", len(diffs), strings.Join(diffs[:min(len(diffs), 3)], "\n"))
	}
}

// nest is 0 in depth arrays and objects, in turn.
func nest(depth int) string {
	var open, close strings.Builder
	for i := range depth {
		if i%2 == 0 {
			open.WriteString("[")
			close.WriteString("]")
		} else {
			open.WriteString(`{"a":`)
			close.WriteString("}")
		}
	}
	c := []byte(close.String())
	slices.Reverse(c)
	return open.String() + "0" + string(c)
}

// deepNest is inputs whose offence is in a value that nests arrays and
// objects depth deep: encoding/json reads a value at most 10,000 deep,
// counted from a member of the outermost object or from the input, so
// the offence is found up to that depth and the input is not JSON past
// it.
func deepNest(depth int) []string {
	return []string{
		`{"bogus":` + nest(depth) + `}`,
		`{"fairshare":{"weights":{"bogus":1},"halfLife":` + nest(depth-1) + `}}`,
		`{"id":"A","topology":{"required":null,"preferred":` + nest(depth-1) + `}}`,
		`[{"node":null},` + nest(depth-1) + `]`,
	}
}

// strictCorpus is the input of TestStrictCheckMatchesOracle: the rich
// documents and their malformed variants, the fuzz seeds, every prefix
// of the rich documents, and inputs written for the edges of the JSON
// syntax and of the contract.
func strictCorpus(t *testing.T) (docs []string, prefixed []string) {
	docs = append(docs, richSnapshot, richPolicy)
	for _, v := range malformedVariants(t, richSnapshot) {
		docs = append(docs, v.doc)
	}
	for _, v := range malformedVariants(t, richPolicy) {
		docs = append(docs, v.doc)
	}
	// Each member of the rich documents repeated before itself, with a
	// value of each kind.
	for _, d := range []string{richSnapshot, richPolicy} {
		for _, m := range regexp.MustCompile(`"[A-Za-z]+":`).FindAllStringIndex(d, -1) {
			for _, x := range strayValues {
				docs = append(docs, d[:m[0]]+d[m[0]:m[1]]+x+","+d[m[0]:])
			}
		}
	}
	for _, data := range fuzzSeeds(t, "*.json") {
		docs = append(docs, string(data))
	}
	docs = append(docs, snapshotSeeds()...)
	docs = append(docs, policySeeds...)
	for _, d := range []int{9999, 10000, 10001, 10002} {
		docs = append(docs, deepNest(d)...)
	}
	docs = append(docs,
		// Keys matched after unquoting, and keys that match only when
		// case is ignored.
		`{"n\u0061me":"n0","gpus":8,"name":"n1"}`, `{"Name":"n0"}`, `{"name":"n0","gpus":8,"domains":{"a":"b","\u0061":null}}`,
		"{\"name\":\"n0\",\"domains\":{\"\xff\":\"x\",\"\xfe\":\"y\",\"\xff\":\"z\"}}", `{"name":"\ud800","id":"\udc00x"}`,
		"{\"\xff\":1}", `{"\ud800":1}`, `{"a\"b":1}`, `{"":1}`, `{"id":"A","\/":1}`,
		"{\"\x80\":1}", "{\"id\":\"A\",\"\xc3\xa9\":1}", "{\"name\":\"n0\",\"domains\":{\"\xc3\":\"x\",\"\xc4\":\"y\"}}",
		"{\"name\":\"n0\",\"domains\":{\"\xc3\xa9\":\"x\",\"\\u00e9\":\"y\"}}", `{"name":"n0","domains":{"\ud800":"x","\udbff":"y"}}`,
		// Repeated keys: many, of maps and of structs, and after an
		// offence.
		`{"name":"n0","domains":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","j":"10","a":"11"}}`,
		`{"name":"n0","domains":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","j":"10","j":"11"}}`,
		`{"id":"A","id":"B"}`, `{"id":"A","x":1,"id":"B"}`, `{"id":null,"id":"B"}`, `{"jobs":[],"jobs":null}`,
		// What follows the value of a member: the member is reported
		// all the same.
		`{"now":null`, `{"now":null x`, `{"now":nullx}`, `{"now":01}`, `{"x":01}`, `{"x":[01]}`, `{"x":[-01]}`, `{"x":{"a":00}}`, `{"x":1.}`, `{"x":-}`, `{"x":1e}`,
		`{"x":tru}`, `{"x":"a`, `{"x":"\x"}`, `{"x":"\u12"}`, "{\"x\":\"\t\"}", `{"x":[1,]}`, `{"x":{"a":1,}}`,
		"{\"x\":\"\x1f\"}", "{\"x\":\"\x7f\"}", `{"x":"\a"}`, `{"x":"\u00zz"}`, `{"x":"\b\f\n\r\t\"\\\/\uABcd"}`, `{"x":"\"}`,
		`{"now":"t" "x":1}`, `{"now":"t",,"x":1}`, `{,"x":1}`, `{"x" 1}`, `{"now":"t"]`, `{"now":"t",}`, `{"x":}`,
		`{"now":"t"} {"x":1}`, `{"x":1} trailing`, ` null `, `null x`, "\tnull\r\n", `nul`, `[null]`, `[1,null]`,
		`{"cluster":{"nodes":[{"name":null}]},"x":[}`, `{"teams":[null,{"x":1}],"y":1}`, `{"jobs":[{"id":"A","allocation":[{"gpus":[null]}]}]}`,
		`{"jobs":[{"id":"A","allocation":[null,{"gpus":null}]}]}`, `{"x":{"a":[1,{"b":null}]},"y":null}`,
		`{"fairshare":{"weights":{"age":1,"age":2}}}`, `{"preemption":{"matrix":[[null],[true]],"matrix":null}}`,
		`{"preemption":{"matrix":[null]}}`, `{"preemption":{"matrix":{"a":null}}}`, `{"name":{"a":null},"gpus":[null]}`,
		`{"name":"n0","unhealthyGPUs":{"a":null}}`, `{"name":"n0","domains":[null]}`, `{"id":"A","topology":[null]}`,
		`{"id":"A","topology":{"required":"x","Required":"y"}}`, "{\"id\":\"A\"\xa0}", " \t\r\n{\"x\":1}", "\ufeff{\"x\":1}",
		`{"now":"t","cluster":{"levels":["a",null,1],"nodes":[{"name":"n","domains":{"a":null}}]}}`, `{"x":-0.5e+7}`, `{"x":1E-0}`,
		`{"x":[[[[[[{"a":null}]]]]]],"y":null}`, `[[null]]`, `[[],null]`, `[[1],{}]`, `[{"node":null}]`, `[{"gpus":[null]}] `, `[{}]x`,
	)
	for _, d := range []string{richSnapshot, richPolicy} {
		for n := range len(d) {
			prefixed = append(prefixed, d[:n])
		}
	}
	return docs, prefixed
}

// TestStrictCheckMatchesOracle: strictCheck gives what strictCheckOracle
// gives, the same message and path or none, on the malformed variants of
// the rich documents, the fuzz seeds, every prefix of the rich documents
// and inputs at the edges, read as each type that strictCheck is given.
func TestStrictCheckMatchesOracle(t *testing.T) {
	docs, prefixes := strictCorpus(t)
	tally := strictTally{}
	var diffs []string
	for _, d := range docs {
		diffs = append(diffs, strictDiffs([]byte(d), 3, tally)...)
	}
	for _, d := range prefixes {
		diffs = append(diffs, strictDiffs([]byte(d), 2, tally)...)
	}
	requireNoDiffs(t, diffs)
	t.Logf("outcomes: %v", tally)
	for _, kind := range []string{"ok", "unknown", "duplicate", "null"} {
		require.Greater(t, tally[kind], 100, "too few comparisons ended %s: %v", kind, tally)
	}
}

// mutationBases are the valid documents that TestStrictCheckMutations
// mutates.
func mutationBases(t testing.TB) []string {
	bases := []string{richSnapshot, richPolicy, snapJSON(`{"id":"A","members":2,"gpusPerMember":4}`)}
	for _, name := range []string{"design.json", "six-tiers.policy.json", "mixed.json"} {
		for _, data := range fuzzSeeds(t, name) {
			bases = append(bases, string(data))
		}
	}
	return bases
}

// mutationKeys are keys of every schema, some in another case, and keys
// of none.
var mutationKeys = []string{
	"now", "cluster", "teams", "jobs", "levels", "nodes", "name", "gpus", "gpuType", "domains", "state",
	"unhealthyGPUs", "share", "usage", "parent", "quota", "borrowLimit", "id", "team", "tier", "kind",
	"members", "gpusPerMember", "timeLimit", "topology", "required", "allocation", "node", "backfill",
	"fairshare", "weights", "age", "halfLife", "preemption", "matrix", "disabled", "order",
	"Name", "ID", "x", "", `n\u0061me`, `\u00e9`,
}

// mutationTokens are pieces of JSON, whole or not, put in at random
// places.
var mutationTokens = []string{
	`null`, `{`, `}`, `[`, `]`, `,`, `:`, `"`, ` `, "\n", `0`, `01`, `-`, `1e5`, `1.`, `true`, `tru`, `\`,
	`{}`, `[]`, `[null]`, `{"a":null}`, `"x"`, `"\u00"`, "\xff", "\t", `[[[[`, `]]]]`,
}

// mutate draws a random mutation of one of bases: values replaced by
// stray values, members put in objects (keys of every schema, repeated
// or unknown, with stray values), tokens put in, bytes cut out, and the
// end cut off, up to a few of each.
// The replacements keep the document JSON, as jsonSpans, which tt
// runs, wants.
func mutate(t *rapid.T, tt *testing.T, bases []string) string {
	doc := rapid.SampledFrom(bases).Draw(t, "base")
	for range rapid.IntRange(0, 3).Draw(t, "replacements") {
		spans, _ := jsonSpans(tt, doc)
		s := rapid.SampledFrom(spans).Draw(t, "span")
		doc = doc[:s.start] + rapid.SampledFrom(strayValues).Draw(t, "stray") + doc[s.end:]
	}
	for range rapid.IntRange(0, 4).Draw(t, "members") {
		var opens []int
		for i, c := range doc {
			if c == '{' {
				opens = append(opens, i)
			}
		}
		if len(opens) == 0 {
			break
		}
		at := rapid.SampledFrom(opens).Draw(t, "object") + 1
		member := fmt.Sprintf("%q:%s", rapid.SampledFrom(mutationKeys).Draw(t, "key"), rapid.SampledFrom(strayValues).Draw(t, "value"))
		member = strings.ReplaceAll(member, `\\u`, `\u`) // keep the escapes of mutationKeys
		if !strings.HasPrefix(doc[at:], "}") {
			member += ","
		}
		doc = doc[:at] + member + doc[at:]
	}
	for range rapid.IntRange(0, 2).Draw(t, "tokens") {
		at := rapid.IntRange(0, len(doc)).Draw(t, "at")
		doc = doc[:at] + rapid.SampledFrom(mutationTokens).Draw(t, "token") + doc[at:]
	}
	for range rapid.IntRange(0, 2).Draw(t, "cuts") {
		if len(doc) == 0 {
			break
		}
		at := rapid.IntRange(0, len(doc)-1).Draw(t, "cut")
		n := rapid.IntRange(1, min(8, len(doc)-at)).Draw(t, "cutLen")
		doc = doc[:at] + doc[at+n:]
	}
	if rapid.IntRange(0, 3).Draw(t, "truncate") == 0 {
		doc = doc[:rapid.IntRange(0, len(doc)).Draw(t, "end")]
	}
	return doc
}

// TestStrictCheckMutations: strictCheck gives what strictCheckOracle
// gives on random mutations of valid snapshots and policy files, twenty
// for each of rapid's checks.
func TestStrictCheckMutations(t *testing.T) {
	bases := mutationBases(t)
	tally := strictTally{}
	rapid.Check(t, func(rt *rapid.T) {
		for range 20 {
			doc := mutate(rt, t, bases)
			if diffs := strictDiffs([]byte(doc), 16, tally); len(diffs) > 0 {
				rt.Fatalf("%d differences from the oracle; the first:\n%s", len(diffs), diffs[0])
			}
		}
	})
	t.Logf("outcomes: %v", tally)
}

// FuzzStrictCheck: strictCheck gives what strictCheckOracle gives, on
// any input, read as each type that strictCheck is given, and on the
// parts of it that decodePart checks.
func FuzzStrictCheck(f *testing.F) {
	for _, data := range fuzzSeeds(f, "*.json") {
		f.Add(data)
	}
	for _, s := range append(append(snapshotSeeds(), policySeeds...), richSnapshot, `{"now":01}`, `{"x":[1,{"a":null}]}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		requireNoDiffs(t, strictDiffs(data, 32, nil))
	})
}

// TestStrictCheckAllocs: checking a valid job or node allocates once,
// for the scan's state, whatever the number of keys and elements.
func TestStrictCheckAllocs(t *testing.T) {
	job := []byte(`{"id":"R","team":"t","tier":1,"kind":"training","members":2,"gpusPerMember":2,` +
		`"topology":{"required":"spine","preferred":"leaf"},"allocation":[{"node":"n0","gpus":[0,1]},{"node":"n1","gpus":[0,1]}]}`)
	node := []byte(`{"name":"n0","gpus":8,"domains":{"spine":"s0","leaf":"l0"},"unhealthyGPUs":[7]}`)
	for _, c := range []struct {
		data []byte
		t    reflect.Type
	}{{job, reflect.TypeFor[*wireJob]()}, {node, reflect.TypeFor[*wireNode]()}} {
		_, _, ok := strictCheck(c.data, c.t)
		require.True(t, ok)
		require.LessOrEqual(t, testing.AllocsPerRun(100, func() { strictCheck(c.data, c.t) }), 1.0, "%s", c.data)
	}
}
