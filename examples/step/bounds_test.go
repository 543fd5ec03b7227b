package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// zeros is an endless input of zero bytes, as /dev/zero gives; it counts
// the bytes read.
type zeros struct{ read int }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += len(p)
	return len(p), nil
}

// TestEndlessInput: `step < /dev/zero` ends with exit code 2 and one
// line naming the first byte, having read only the start of the input.
func TestEndlessInput(t *testing.T) {
	in := &zeros{}
	var out, errb bytes.Buffer
	code := run(nil, in, &out, &errb)
	require.Equal(t, 2, code)
	require.Empty(t, out.String())
	require.Equal(t, `snapshot: json: invalid character '\x00' looking for beginning of value (line 1, column 1, offset 0)`+"\n", errb.String())
	require.Less(t, in.read, 1<<20)
}

// TestExactPathRepro: a number beyond the float64 range inside an
// allocation is named with the job and the entry's index.
func TestExactPathRepro(t *testing.T) {
	code, stdout, stderr := runFile(t, "path-over308.json")
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Equal(t, `snapshot: jobs[7] "run-down": allocation[0].node: want a string, got number`+"\n", stderr)
}

// TestLongIDClipped: an invalid 10 MB job ID is not echoed whole.
func TestLongIDClipped(t *testing.T) {
	id := strings.Repeat("x", 10<<20)
	in := strings.NewReader(`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8}]},` +
		`"jobs":[{"id":"` + id + `","gpusPerMember":0}]}`)
	var out, errb bytes.Buffer
	require.Equal(t, 2, run(nil, in, &out, &errb))
	require.Equal(t, `snapshot: jobs[0] "`+strings.Repeat("x", 64)+`…": gpusPerMember must be >= 1, got 0`+"\n", errb.String())
}

// TestConfigTooManyTiers: a policy whose matrix has more than the tiers
// allowed is refused as a config error, before the snapshot is read.
func TestConfigTooManyTiers(t *testing.T) {
	row := "[" + strings.TrimSuffix(strings.Repeat("false,", 257), ",") + "]"
	policy := `{"preemption":{"matrix":[` + strings.TrimSuffix(strings.Repeat(row+",", 257), ",") + `]}}`
	path := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(path, []byte(policy), 0o644))
	in := &zeros{}
	var out, errb bytes.Buffer
	code := run([]string{"-config", path}, in, &out, &errb)
	require.Equal(t, 2, code)
	require.Empty(t, out.String())
	require.Equal(t, "config: preemption.matrix: 257 tiers, more than the 256 allowed\n", errb.String())
	require.Zero(t, in.read)
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriteError: a decision that cannot be written ends the command
// with exit code 1 and one line naming the write.
func TestWriteError(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "design.json"))
	require.NoError(t, err)
	var errb bytes.Buffer
	code := run(nil, bytes.NewReader(data), failingWriter{}, &errb)
	require.Equal(t, 1, code)
	require.Equal(t, "write: disk full\n", errb.String())
}
