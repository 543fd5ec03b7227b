package scheduler

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/jsonscan"
	"github.com/gpusched/gpusched/topology"
)

// snapshotPartsOf returns the text of the jobs and nodes of the snapshot
// document data; none when data is not JSON of that shape.
func snapshotPartsOf(data []byte) (jobs, nodes []json.RawMessage) {
	var doc struct {
		Cluster struct{ Nodes []json.RawMessage }
		Jobs    []json.RawMessage
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil, nil
	}
	return doc.Jobs, doc.Cluster.Nodes
}

// fastAgrees checks the fast path on text, the text of a job or a node
// or any other: when it does not give up, what it read is one JSON value,
// the full reader accepts that value as a part and reads the same job or
// node from it. It reports whether the fast path read text whole.
func fastAgrees(t testing.TB, text []byte, node bool) (whole bool) {
	quick := newJSONReader(text, snapshotErr)
	var gotJob Job
	var gotNode topology.Node
	var n int
	if node {
		n = quick.fastNode(text, &gotNode)
	} else {
		n = quick.fastJob(text, &gotJob)
	}
	if n == 0 {
		return false
	}
	part := text[:n]
	dec := jsonscan.NewDecoder(part)
	_, err := dec.ReadValue()
	require.NoError(t, err, "the fast path read %q, which is not JSON", part)
	require.EqualValues(t, n, dec.InputOffset(), "the fast path read %q, which is not one value", part)
	full := newJSONReader(part, snapshotErr)
	if node {
		full.readPart(part, "cluster: nodes", 0, "name")
	} else {
		full.readPart(part, "jobs", 0, "id")
	}
	if node {
		var want topology.Node
		require.NoError(t, full.node(&want), "the fast path read a node that the reader refuses: %s", part)
		require.Equal(t, want, gotNode, "node %s", part)
	} else {
		var want Job
		require.NoError(t, full.job(&want), "the fast path read a job that the reader refuses: %s", part)
		require.Equal(t, want, gotJob, "job %s", part)
	}
	return n == len(text)
}

// fastSeedJobs and fastSeedNodes are parts at the edges of what the fast
// path reads: escapes, nulls, repeated and unknown keys, values of the
// wrong type or invalid, numbers that are no int, and the empty lists
// whose nil-or-empty the full reader decides.
var fastSeedJobs = []string{
	`{"id":"a","gpusPerMember":1}`,
	`{}`,
	`{"id":"a\"b","gpusPerMember":1}`,
	`{"id":"a\u0041","team":"t\\"}`,
	`{"i\u0064":"a"}`,
	`{"id":"a","id":"b"}`,
	`{"id":"a","bogus":1}`,
	`{"id":null}`,
	`{"id":"a","tier":null}`,
	`{"id":"a","tier":"2"}`,
	`{"id":"a","tier":1.0}`,
	`{"id":"a","tier":1e2}`,
	`{"id":"a","tier":-0}`,
	`{"id":"a","members":99999999999999999999}`,
	`{"id":"a","members":-9223372036854775808}`,
	`{"id":"a","kind":"Training"}`,
	`{"id":"a","kind":"inference","placement":"spread","state":"evicting"}`,
	`{"id":"a","submitted":"2026-12-02T00:00:00Z","started":"2026-12-02t00:00:00z","evictedAt":"2026-12-31T23:59:60+01:00"}`,
	`{"id":"a","submitted":"2026-12-02 00:00:00Z"}`,
	`{"id":"a","submitted":"0001-01-01T00:00:00Z"}`,
	`{"id":"a","timeLimit":"1h30m","checkpointGrace":"0s"}`,
	`{"id":"a","timeLimit":"-1h"}`,
	`{"id":"a","timeLimit":"soon"}`,
	`{"id":"a","allocation":[]}`,
	`{"id":"a","allocation":[{"node":"n0","gpus":[]}]}`,
	`{"id":"a","allocation":[{"node":"n0"},{"gpus":[1,2]}]}`,
	`{"id":"a","allocation":[{"node":"n0","node":"n1"}]}`,
	`{"id":"a","allocation":[{"node":"n0","gpus":[0,null]}]}`,
	`{"id":"a","allocation":[3]}`,
	`{"id":"a","allocation":null}`,
	`{"id":"a","eligibleNodes":[]}`,
	`{"id":"a","eligibleNodes":["n0","n1","n0"]}`,
	`{"id":"a","eligibleNodes":["n0",1]}`,
	`{"id":"a","mixGPUTypes":true,"cpuMillis":500,"memoryMiB":1024}`,
	`{"id":"a","mixGPUTypes":"yes"}`,
	`{"id":"a","topology":{"required":"leaf"}}`,
	`{"id":"a","group":"g","spreadLevel":"leaf","gpuType":"H100"}`,
	`{"id":"ä€😀","team":"` + "\u00e9" + `"}`,
	` { "id" : "a" , "tier" : 3 } `,
	`[]`, `"job"`, `null`,
	// Not JSON, which the fast path meets as the first round passes.
	`{"id":"a",}`, `{,"id":"a"}`, `{"id":"a" "tier":1}`, `{"id":"a"`, "{\"id\":\"a\x01\"}", "{\"id\":\"a\tb\"}",
	"{\"id\":\"\xff\"}", "{\"id\":\"\xed\xa0\x80\"}", `{"id":"a","tier":01}`, `{"id":"a","tier":+1}`,
	`{"id":"a","tier":-}`, `{"id":"a","tier":1.}`, `{"id":"a","mixGPUTypes":tru}`, `{"id":"a","mixGPUTypes":trueish}`,
	`{"id":"a","allocation":[{"node":"n0","gpus":[0,]}]}`, `{"id":"a","allocation":[,{"node":"n0"}]}`,
	`{"id":"a","eligibleNodes":["n0" "n1"]}`, `{"id":"a"} trailing`, `{"id":"a"}]`,
}

var fastSeedNodes = []string{
	`{"name":"n0","gpus":8}`,
	`{"name":"n0","gpus":8,"gpuType":"H100","domains":{"spine":"s0","leaf":"l0"},"state":"draining","unhealthyGPUs":[7]}`,
	`{"name":"n0","domains":{}}`,
	`{"name":"n0","domains":{"spine":"s0","spine":"s1"}}`,
	`{"name":"n0","domains":{"spine":null}}`,
	`{"name":"n0","domains":{"sp\u0069ne":"s0"}}`,
	`{"name":"n0","unhealthyGPUs":[]}`,
	`{"name":"n0","state":"gone"}`,
	`{"name":"n0","cpuMillis":64000,"memoryMiB":512000}`,
	`{"name":"n0","gpus":8.5}`,
	`{"name":"n0","gpus":8,"gpus":4}`,
	`{"name":"n0","color":"red"}`,
	`{}`, `[]`,
	`{"name":"n0","domains":{"spine":"s0",}}`, `{"name":"n0","unhealthyGPUs":[1 2]}`, `{"name":"n0",,"gpus":8}`,
}

// TestFastPartsAgreeWithReader holds the fast path (see fastAgrees) to
// the full reader on the parts of the seed documents and on parts at its
// edges, JSON or not; and checks that it does read the plain parts that
// EncodeSnapshot writes, so that it is not a path never taken.
func TestFastPartsAgreeWithReader(t *testing.T) {
	var docs [][]byte
	docs = append(docs, []byte(richSnapshot))
	for _, s := range snapshotSeeds() {
		docs = append(docs, []byte(s))
	}
	docs = append(docs, fuzzSeeds(t, "*.json")...)
	for _, d := range docs {
		jobs, nodes := snapshotPartsOf(d)
		for _, j := range jobs {
			fastAgrees(t, j, false)
		}
		for _, n := range nodes {
			fastAgrees(t, n, true)
		}
	}
	for _, j := range fastSeedJobs {
		fastAgrees(t, []byte(j), false)
	}
	for _, n := range fastSeedNodes {
		fastAgrees(t, []byte(n), true)
	}

	var buf bytes.Buffer
	require.NoError(t, EncodeSnapshot(&buf, benchSnapshot(64, 500)))
	jobs, nodes := snapshotPartsOf(buf.Bytes())
	require.NotEmpty(t, jobs)
	require.NotEmpty(t, nodes)
	for _, j := range jobs {
		require.True(t, fastAgrees(t, j, false), "the fast path gave up on a job that EncodeSnapshot wrote: %s", j)
	}
	for _, n := range nodes {
		require.True(t, fastAgrees(t, n, true), "the fast path gave up on a node that EncodeSnapshot wrote: %s", n)
	}
}

// FuzzFastPartsAgreeWithReader holds the fast path to the full reader on
// any text of a job or a node.
func FuzzFastPartsAgreeWithReader(f *testing.F) {
	for _, j := range fastSeedJobs {
		f.Add([]byte(j), false)
	}
	for _, n := range fastSeedNodes {
		f.Add([]byte(n), true)
	}
	jobs, nodes := snapshotPartsOf([]byte(richSnapshot))
	for _, j := range jobs {
		f.Add([]byte(j), false)
	}
	for _, n := range nodes {
		f.Add([]byte(n), true)
	}
	f.Fuzz(func(t *testing.T, text []byte, node bool) {
		fastAgrees(t, text, node)
	})
}

// FuzzFastPathAgreesWithFullReader decodes any document twice, with the
// fast path and with the full reader alone: both give the same error,
// or the same snapshot.
func FuzzFastPathAgreesWithFullReader(f *testing.F) {
	for _, data := range fuzzSeeds(f, "*.json") {
		f.Add(data)
	}
	for _, s := range append(snapshotSeeds(), richSnapshot) {
		f.Add([]byte(s))
	}
	for _, j := range fastSeedJobs {
		f.Add([]byte(snapJSON(j, `{"id":"z","gpusPerMember":1}`)))
	}
	for _, n := range fastSeedNodes {
		f.Add([]byte(`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[` + n + `,{"name":"z","gpus":8}]}}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fastAgreesWithFull(t, data)
	})
}

// fastAgreesWithFull checks that data decodes alike with the fast path
// and without it.
func fastAgreesWithFull(t testing.TB, data []byte) {
	got, gotErr := decodeSnapshotDataWith(data, false)
	want, wantErr := decodeSnapshotDataWith(data, true)
	if wantErr != nil {
		require.EqualError(t, gotErr, wantErr.Error(), "document %q", data)
		return
	}
	require.NoError(t, gotErr, "document %q", data)
	require.Equal(t, want, got, "document %q", data)
}

// TestFastPathAgreesWithFullReader is the fuzz target's check on the
// seeds and on the documents of the fast path's seeds, among jobs and
// nodes that it reads.
func TestFastPathAgreesWithFullReader(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, EncodeSnapshot(&buf, benchSnapshot(64, 500)))
	fastAgreesWithFull(t, buf.Bytes())
	fastAgreesWithFull(t, []byte(richSnapshot))
	for _, s := range snapshotSeeds() {
		fastAgreesWithFull(t, []byte(s))
	}
	for _, d := range fuzzSeeds(t, "*.json") {
		fastAgreesWithFull(t, d)
	}
	plain := `{"id":"p","gpusPerMember":1,"team":"t"}`
	for _, j := range fastSeedJobs {
		fastAgreesWithFull(t, []byte(snapJSON(plain, j, plain)))
	}
	for _, n := range fastSeedNodes {
		fastAgreesWithFull(t, []byte(`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"p","gpus":8,"gpuType":"H100"},`+n+`]}}`))
	}
}

// TestFastListsKeepNoSpareRoom: the first capacity of a fast list is
// guessed from all the text that follows it, so a short list followed by
// a long one would keep room for thousands of elements alive; a decoded
// snapshot keeps no more memory with the fast path than without it.
func TestFastListsKeepNoSpareRoom(t *testing.T) {
	job := `{"id":"p","gpusPerMember":1,"team":"t"}`
	plan := strings.Repeat(`{"job":"p"},`, 40000) + `{"job":"p"}`
	node := `{"name":"n0","gpus":8,"gpuType":"H100"}`
	levels := strings.Repeat(`"l",`, 40000) + `"l"`
	for _, doc := range []string{
		`{"now":"2026-12-02T00:00:00Z","jobs":[` + job + `],"plan":[` + plan + `]}`,
		`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[` + node + `],"levels":[` + levels + `]}}`,
	} {
		fast, slow := liveAfter(t, doc, false), liveAfter(t, doc, true)
		require.LessOrEqual(t, fast, slow+64<<10, "decoded with the fast path, the snapshot keeps %d bytes; without, %d", fast, slow)
	}
}

// liveAfter returns the bytes of heap that the snapshot decoded from doc
// keeps alive, with the fast path or without it (slow).
func liveAfter(t *testing.T, doc string, slow bool) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := decodeSnapshotDataWith([]byte(doc), slow)
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
}

// utcSecondsSeeds are times at the edges of what utcSeconds reads.
var utcSecondsSeeds = []string{
	"2026-12-02T00:00:00Z", "2024-02-29T12:00:00Z", "2023-02-29T12:00:00Z", "1900-02-29T00:00:00Z",
	"2000-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
	"2026-12-00T00:00:00Z", "2026-12-31T24:00:00Z", "2026-12-31T23:60:00Z", "2026-12-31T23:59:60Z",
	"0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-12-02t00:00:00z",
	"2026-12-02T00:00:00+00:00", "2026-12-02T00:00:00.5Z", "2026-1a-02T00:00:00Z", "+026-12-02T00:00:00Z",
}

// FuzzUTCSeconds holds utcSeconds to the long way of parseTime.
func FuzzUTCSeconds(f *testing.F) {
	for _, s := range utcSecondsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { shortcutAgrees(t, s, utcSeconds, parseTimeLong) })
}

// TestUTCSeconds checks utcSeconds on its seeds, the first of which is a
// time as EncodeSnapshot writes it.
func TestUTCSeconds(t *testing.T) {
	require.Equal(t, 5, shortcutReads(t, utcSecondsSeeds, utcSeconds, parseTimeLong),
		"the seeds utcSeconds reads: 2026-12-02, two 29ths of February, year 0 and the last second of 9999")
}

// wholeDurationSeeds are durations at the edges of what wholeDuration
// reads.
var wholeDurationSeeds = []string{
	"9h3m", "51m", "1h0m30s", "30s", "0h", "0s", "999999h59m59s", "1000000h", "1h1h", "1m1h", "1.5h",
	"1h30", "", "0", "-1h", "+1h", "1H", "01m", "1µs", "1ms", "h", "1h ", " 1h",
}

// FuzzWholeDuration holds wholeDuration to the long way of
// parseDuration.
func FuzzWholeDuration(f *testing.F) {
	for _, s := range wholeDurationSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { shortcutAgrees(t, s, wholeDuration, parseDurationLong) })
}

// shortcutAgrees checks a parser's shortcut on s against the parser's
// long way: whatever short reads, long reads alike. It reports whether
// short read s.
func shortcutAgrees[T any](t *testing.T, s string, short func(string) (T, bool), long func(mkErr, string, string) (T, error)) bool {
	got, ok := short(s)
	if !ok {
		return false
	}
	want, err := long(keepMsg, "f", s)
	require.NoError(t, err, "the shortcut read %q, which the long way refuses", s)
	require.Equal(t, want, got, "%q", s)
	return true
}

// shortcutReads checks short on each of seeds (see shortcutAgrees) and
// returns how many it read.
func shortcutReads[T any](t *testing.T, seeds []string, short func(string) (T, bool), long func(mkErr, string, string) (T, error)) int {
	read := 0
	for _, s := range seeds {
		if shortcutAgrees(t, s, short, long) {
			read++
		}
	}
	return read
}

// TestWholeDuration checks wholeDuration on its seeds, and that it reads
// the durations EncodeSnapshot writes.
func TestWholeDuration(t *testing.T) {
	require.Equal(t, 8, shortcutReads(t, wholeDurationSeeds, wholeDuration, parseDurationLong),
		"the seeds wholeDuration reads: the first seven, and 01m")
	for _, d := range []time.Duration{time.Minute, 9*time.Hour + 3*time.Minute, time.Hour + 30*time.Second, 600 * time.Minute} {
		require.True(t, shortcutAgrees(t, formatDuration(d), wholeDuration, parseDurationLong), "wholeDuration does not read %q", formatDuration(d))
	}
}
