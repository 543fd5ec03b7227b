package scheduler

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/measure"
)

// TestDecodeExactPaths: an error inside a list of objects names the
// element by its index, wherever the value is and whatever is wrong with
// it; a map's value is named by its key.
func TestDecodeExactPaths(t *testing.T) {
	data, err := os.ReadFile("../examples/step/testdata/path-over308.json")
	require.NoError(t, err)
	_, err = DecodeSnapshot(bytes.NewReader(data))
	require.EqualError(t, err, `snapshot: jobs[7] "run-down": allocation[0].node: want a string, got number`)

	running := func(alloc string) string {
		return snapJSON(`{"id":"A","gpusPerMember":1,"state":"running","allocation":` + alloc + `}`)
	}
	for _, tt := range []struct{ json, want string }{
		{running(`[{"node":"n0","gpus":[0]},{"node":"n1","gpus":[1e400]}]`), `snapshot: jobs[0] "A": allocation[1].gpus: want an integer, got number 1e400`},
		{running(`[{"node":"n0","gpus":[0]},{"node":"n1","gpus":1}]`), `snapshot: jobs[0] "A": allocation[1].gpus: want an array, got number`},
		{running(`[{"node":"n0","gpus":[0]},{"node":5}]`), `snapshot: jobs[0] "A": allocation[1].node: want a string, got number`},
		{`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"domains":{"spine":"s0","leaf":7}}]}}`,
			`snapshot: cluster: nodes[0] "n0": domains.leaf: want a string, got number`},
	} {
		_, err := DecodeSnapshot(strings.NewReader(tt.json))
		require.EqualError(t, err, tt.want, tt.json)
	}
}

// TestDecodeClipsEchoedValues: an error quotes at most 64 bytes of a
// value from the input, cut at a character boundary and marked with "…",
// whether decoding or validation finds it.
func TestDecodeClipsEchoedValues(t *testing.T) {
	long := strings.Repeat("é", 5<<20) // 10 MB
	num := strings.Repeat("9", 10<<20)
	for _, tt := range []struct{ name, json, prefix string }{
		{"invalid ID", snapJSON(`{"id":"` + long + `","gpusPerMember":0}`), `snapshot: jobs[0] "éé`},
		{"ID of a job with a bad field", snapJSON(`{"id":"` + long + `","gpusPerMember":"x"}`), `snapshot: jobs[0] "éé`},
		{"unknown key", snapJSON(`{"id":"A","gpusPerMember":1,"` + long + `":1}`), `snapshot: jobs[0] "A": unknown field "éé`},
		{"unknown enum", snapJSON(`{"id":"A","gpusPerMember":1,"kind":"` + long + `"}`), `snapshot: jobs[0] "A": kind: unknown value "éé`},
		{"bad time", snapJSON(`{"id":"A","gpusPerMember":1,"submitted":"` + long + `"}`), `snapshot: jobs[0] "A": submitted: bad time "éé`},
		{"bad duration", snapJSON(`{"id":"A","gpusPerMember":1,"timeLimit":"` + long + `"}`), `snapshot: jobs[0] "A": timeLimit: bad duration "éé`},
		{"long integer", snapJSON(`{"id":"A","gpusPerMember":` + num + `}`), `snapshot: jobs[0] "A": gpusPerMember: want an integer from`},
		{"long number", snapWith(`"teams":[{"name":"t","share":1` + num + `e400}]`), `snapshot: teams[0] "t": share: want a number within`},
		{"unknown node", snapJSON(`{"id":"A","gpusPerMember":1,"state":"running","allocation":[{"node":"` + long + `","gpus":[0]}]}`),
			`snapshot: jobs[0] "A": allocation[0].node: unknown node "éé`},
		{"policy enum", `{"backfill":"` + long + `"}`, `config: backfill: unknown value "éé`},
		{"policy key", `{"` + long + `":1}`, `config: json: unknown field "éé`},
		{"matrix cell", `{"preemption":{"matrix":[["` + long + `"]]}}`, `config: preemption.matrix[0][0]: want true, false, 1 or 0, got "éé`},
		{"queue order", `{"order":"` + long + `"}`, `config: order: unknown value "éé`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if strings.HasPrefix(tt.prefix, "config: ") {
				_, err = DecodeConfig(strings.NewReader(tt.json))
			} else {
				_, err = DecodeSnapshot(strings.NewReader(tt.json))
				var ve *ValidationError
				require.ErrorAs(t, err, &ve)
			}
			require.Error(t, err)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, tt.prefix), msg)
			require.Less(t, len(msg), 400, msg)
			require.Contains(t, msg, "…")
			require.True(t, utf8.ValidString(msg), msg)
		})
	}
}

// endless is an input that never ends: the byte b, again and again. It
// counts the bytes read.
type endless struct {
	b    byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.read += len(p)
	return len(p), nil
}

// TestReadDocumentBounded: an input that cannot be JSON ends in its
// syntax error after the first chunk, however long it is; one that could
// be (white space) ends once the limit is passed; a document whose value
// starts after more than a chunk of white space is read whole.
func TestReadDocumentBounded(t *testing.T) {
	zeros := &endless{}
	_, err := DecodeSnapshot(zeros)
	require.EqualError(t, err, `snapshot: json: invalid character '\x00' looking for beginning of value (line 1, column 1, offset 0)`)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.LessOrEqual(t, zeros.read, 2*readChunk)

	zeros = &endless{}
	_, err = DecodeConfig(zeros)
	require.EqualError(t, err, `config: json: invalid character '\x00' looking for beginning of value (line 1, column 1, offset 0)`)
	require.LessOrEqual(t, zeros.read, 2*readChunk)

	spaces := &endless{b: ' '}
	_, err = readDocument(spaces, "snapshot", snapshotErr, 1<<20)
	require.EqualError(t, err, `snapshot: json: input longer than 1048576 bytes, the most that is read`)
	require.LessOrEqual(t, spaces.read, 1<<20+2*readChunk)

	doc := strings.Repeat(" ", 3*readChunk+5) + snapJSON(`{"id":"A","gpusPerMember":1}`)
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	require.Len(t, s.Jobs, 1)
	// A cut in the middle of a character is not reported as bad UTF-8.
	garbage := strings.Repeat("é", readChunk)
	_, err = DecodeSnapshot(io.MultiReader(strings.NewReader(garbage), &endless{b: 'x'}))
	require.EqualError(t, err, `snapshot: json: invalid character 'Ã' looking for beginning of value (line 1, column 1, offset 0)`)
}

// allocsDuring returns the bytes and the number of heap allocations f
// makes (of this process, so f should be all that runs).
func allocsDuring(f func()) (bytes, mallocs uint64) { return measure.Allocated(f) }

// maxAllocBytes and maxAllocs bound what decoding n bytes may allocate:
// the decoded values of the smallest elements the contract has (a job
// written as "{}," in 3 bytes is a Job of 320 bytes, and its text is
// kept for the second round, in a list that grows by doubling) and the
// reader's fixed state.
func maxAllocBytes(n int) uint64 { return uint64(192*n + 64<<10) }
func maxAllocs(n int) uint64     { return uint64(n + 200) }

// checkDecodeAllocs fails t when decoding data with decode allocates
// beyond the bounds for its length.
func checkDecodeAllocs(t *testing.T, data []byte, decode func(io.Reader)) {
	t.Helper()
	by, n := allocsDuring(func() { decode(bytes.NewReader(data)) })
	if by > maxAllocBytes(len(data)) || n > maxAllocs(len(data)) {
		t.Fatalf("decoding %d bytes allocates %d bytes in %d allocations, beyond %d and %d:\n%.200q",
			len(data), by, n, maxAllocBytes(len(data)), maxAllocs(len(data)), data)
	}
}

// FuzzDecodeSnapshotAllocs: decoding any input allocates within bounds
// proportional to its length, valid or not.
func FuzzDecodeSnapshotAllocs(f *testing.F) {
	for _, data := range fuzzSeeds(f, "*.json") {
		f.Add(data)
	}
	for _, s := range append(snapshotSeeds(), richSnapshot, snapJSON(strings.Repeat(`{},`, 500)+`{}`),
		`{"cluster":{"levels":[`+strings.Repeat(`"a",`, 500)+`"a"]}}`, `{"teams":[`+strings.Repeat(`{},`, 500)+`{}]}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeAllocs(t, data, func(r io.Reader) { _, _ = DecodeSnapshot(r) })
	})
}

// FuzzDecodeConfigAllocs: likewise for policy files.
func FuzzDecodeConfigAllocs(f *testing.F) {
	for _, data := range fuzzSeeds(f, "*.policy.json") {
		f.Add(data)
	}
	for _, s := range append(policySeeds, `{"preemption":{"matrix":[`+strings.Repeat(`[],`, 500)+`[]]}}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeAllocs(t, data, func(r io.Reader) { _, _ = DecodeConfig(r) })
	})
}

// TestDecodeAllocsLarge: the bounds hold for documents of many small
// elements, where a cost per element beyond its size would show.
func TestDecodeAllocsLarge(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, EncodeSnapshot(&buf, benchSnapshot(256, 1000)))
	docs := []string{
		buf.String(),
		snapJSON(strings.Repeat(`{"id":"a","gpusPerMember":1},`, 5000) + `{"id":"b","gpusPerMember":1}`),
		snapJSON(strings.Repeat(`{},`, 20000) + `{}`),
		`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"unhealthyGPUs":[` + strings.Repeat(`0,`, 20000) + `0]}]}}`,
		`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"domains":{` + strings.Repeat(`"a":"b",`, 2000) + `"c":"d"}}]}}`,
	}
	for _, d := range docs {
		checkDecodeAllocs(t, []byte(d), func(r io.Reader) { _, _ = DecodeSnapshot(r) })
	}
	checkDecodeAllocs(t, []byte(`{"preemption":{"matrix":[`+strings.Repeat(`[1,0],`, 20000)+`[]]}}`),
		func(r io.Reader) { _, _ = DecodeConfig(r) })
}

// TestSizeHint: readers of slices, strings and regular files tell their
// length, so that a document is read into a buffer of its size; others
// tell nothing.
func TestSizeHint(t *testing.T) {
	require.Equal(t, 3, sizeHint(strings.NewReader("abc")))
	require.Equal(t, 2, sizeHint(bytes.NewReader([]byte("ab"))))
	f, err := os.Open("../examples/step/testdata/design.json")
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int(fi.Size()), sizeHint(f))
	require.Zero(t, sizeHint(&endless{}))
}

// TestDecodeDeepNesting: arrays nested beyond 10,000 deep are a syntax
// error on one line, in a known key or an unknown one.
func TestDecodeDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	for _, doc := range []string{`{"x":` + deep + `}`, `{"jobs":` + deep + `}`, snapJSON(`{"id":"A","gpusPerMember":1,"allocation":` + deep + `}`)} {
		_, err := DecodeSnapshot(strings.NewReader(doc))
		require.ErrorContains(t, err, "exceeded max depth")
		require.NotContains(t, err.Error(), "\n")
	}
	// In a policy file, a key that names nothing is reported once its
	// value is read, and this one is not JSON.
	_, err := DecodeConfig(strings.NewReader(`{"x":` + deep + `}`))
	require.ErrorContains(t, err, "exceeded max depth")
}

// failing is a reader that fails after giving some bytes.
type failing struct{ given bool }

func (f *failing) Read(p []byte) (int, error) {
	if !f.given {
		f.given = true
		return copy(p, `{"now":`), nil
	}
	return 0, io.ErrClosedPipe
}

// TestDecodeReadError: an error of the reader is wrapped, after the
// document's kind.
func TestDecodeReadError(t *testing.T) {
	_, err := DecodeSnapshot(&failing{})
	require.EqualError(t, err, "snapshot: read: io: read/write on closed pipe")
	require.ErrorIs(t, err, io.ErrClosedPipe)
	_, err = DecodeConfig(&failing{})
	require.EqualError(t, err, "config: read: io: read/write on closed pipe")
	require.ErrorIs(t, err, io.ErrClosedPipe)
}
