package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden decisions in testdata")

// runFile runs the command with args and the named testdata file (none
// when empty) on standard input.
func runFile(t *testing.T, stdinFile string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var in bytes.Buffer
	if stdinFile != "" {
		data, err := os.ReadFile(filepath.Join("testdata", stdinFile))
		require.NoError(t, err)
		in.Write(data)
	}
	var out, errb bytes.Buffer
	code = run(args, &in, &out, &errb)
	return code, out.String(), errb.String()
}

// TestGolden compares the decision for testdata/design.json (the design's
// example snapshot, with nodes added so that its running gang of 8×8 GPUs
// holds a valid allocation) with testdata/design.decision.json. Run with
// -update to rewrite the golden file.
func TestGolden(t *testing.T) {
	for _, tt := range []struct{ in, policy, golden string }{
		{"design.json", "", "design.decision.json"},
		{"mixed.json", "", "mixed.decision.json"},
		{"mixed.json", "conservative.policy.json", "mixed.conservative.decision.json"},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			var args []string
			if tt.policy != "" {
				args = []string{"-config", filepath.Join("testdata", tt.policy)}
			}
			code, stdout, stderr := runFile(t, tt.in, args...)
			require.Equal(t, 0, code, stderr)
			require.Empty(t, stderr)
			path := filepath.Join("testdata", tt.golden)
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(stdout), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), stdout)
		})
	}
}

func TestSuccess(t *testing.T) {
	for _, tt := range []struct {
		in   string
		args []string
	}{
		{"design.json", nil},
		{"design.json", []string{"-config", "testdata/none.policy.json"}},
		{"mixed.json", []string{"-config=testdata/none.policy.json"}},
		{"mixed.json", []string{"-config", "testdata/conservative.policy.json"}},
	} {
		t.Run(tt.in+strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runFile(t, tt.in, tt.args...)
			require.Equal(t, 0, code, stderr)
			require.Empty(t, stderr)
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(stdout), &raw))
			if w, ok := raw["nextWake"]; ok {
				// Decision.NextWake, when something is due: an RFC 3339 time.
				var at time.Time
				require.NoError(t, json.Unmarshal(w, &at))
				delete(raw, "nextWake")
			}
			require.Len(t, raw, 4)
			for _, k := range []string{"placements", "evictions", "reservations", "pending"} {
				var list []map[string]any
				require.Contains(t, raw, k)
				require.NoError(t, json.Unmarshal(raw[k], &list), k)
				require.NotNil(t, list, "%s is a list, not null", k)
			}
			require.True(t, strings.HasPrefix(stdout, "{\n  \"placements\": ["), "indented by two spaces")
		})
	}
}

func TestDesignDecision(t *testing.T) {
	// The design's example at its now: A reaches its 12h limit and is
	// evicted; C gets a reservation on the GPUs A frees.
	_, stdout, _ := runFile(t, "design.json")
	var d struct {
		Evictions []struct {
			Job, Reason, Grace string
		}
		Reservations []struct{ Job, Start string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &d))
	require.Len(t, d.Evictions, 1)
	require.Equal(t, "A", d.Evictions[0].Job)
	require.Equal(t, "time-limit", d.Evictions[0].Reason)
	require.Equal(t, "0s", d.Evictions[0].Grace)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "C", d.Reservations[0].Job)
	require.Equal(t, "2026-12-02T00:00:00Z", d.Reservations[0].Start)
}

// TestPolicyTiers: with a six-tier preemption matrix, jobs of tiers 4
// and 5 are valid and a tier-4 job preempts a tier-5 one; without it
// the default four tiers apply.
func TestPolicyTiers(t *testing.T) {
	code, stdout, stderr := runFile(t, "six-tiers.json", "-config", "testdata/six-tiers.policy.json")
	require.Equal(t, 0, code, stderr)
	var d struct {
		Evictions    []struct{ Job, Reason, By string }
		Reservations []struct{ Job string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &d))
	require.Len(t, d.Evictions, 1)
	require.Equal(t, "low", d.Evictions[0].Job)
	require.Equal(t, "preempted", d.Evictions[0].Reason)
	require.Equal(t, "high", d.Evictions[0].By)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "high", d.Reservations[0].Job)
	code, stdout, stderr = runFile(t, "six-tiers.json", "-explain", "high", "-config", "testdata/six-tiers.policy.json")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `"job": "high"`)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		args []string
		want string // the whole line on stderr, without its newline
	}{
		{name: "bad JSON", in: "bad-syntax.json",
			want: `snapshot: json: invalid character '}' looking for beginning of object key string (line 3, column 50, offset 84)`},
		{name: "unknown field", in: "unknown-field.json", want: `snapshot: jobs[0] "A": unknown field "priority"`},
		{name: "validation error", in: "bad-members.json", want: `snapshot: jobs[3] "C": gpusPerMember must be >= 1, got 0`},
		{name: "bad duration", in: "bad-duration.json", want: `snapshot: jobs[2] "X": timeLimit: bad duration "12x"`},
		{name: "missing now", in: "missing-now.json", want: `snapshot: now is missing`},
		{name: "tier beyond the default policy's", in: "six-tiers.json", want: `snapshot: jobs[0] "low": tier must be in 0..3, got 5`},
		{name: "trailing data", in: "trailing.json", want: `snapshot: json: trailing data after the object (line 2, column 1, offset 32)`},
		{name: "line break in a name", in: "multiline-level.json",
			want: `snapshot: cluster: nodes[0] "n0": domains: unknown level "zone" (cluster levels are rack\nrow)`},
		{name: "empty input", in: "", want: `snapshot: json: empty input (want one JSON object)`},
		{name: "scalar after an object in a job's list", in: "scalar-after-object.json",
			want: `snapshot: jobs[0] "A": allocation[1]: want an object, got number`},
		{name: "scalar after an object in a list read later", in: "scalar-after-node.json",
			want: `snapshot: now: want a string, got number`},
		{name: "null in a list of GPUs", in: "null-gpu.json",
			want: `snapshot: jobs[0] "A": allocation[0].gpus: want an integer, got null`},
		{name: "null cluster", in: "null-cluster.json", want: `snapshot: cluster: want an object, got null`},
		{name: "unknown policy key", in: "design.json", args: []string{"-config", "testdata/unknown-key.policy.json"},
			want: `config: json: unknown field "x"`},
		{name: "bad matrix", in: "design.json", args: []string{"-config", "testdata/bad-matrix.policy.json"},
			want: `config: preemption.matrix[1]: row has 1 entries, want 2 (the matrix must be square)`},
		{name: "policy file is a snapshot", in: "design.json", args: []string{"-config", "testdata/design.json"},
			want: `config: json: unknown field "now"`},
		{name: "missing policy file", in: "design.json", args: []string{"-config", "testdata/nope.json"},
			want: `config: open testdata/nope.json: no such file or directory`},
		{name: "unknown flag", in: "design.json", args: []string{"-backfill", "easy"},
			want: `flag provided but not defined: -backfill; usage: step [-config policy.json] [-explain JOB [-text] | -forecast] < snapshot.json > decision.json`},
		{name: "flag without value", in: "design.json", args: []string{"-config"},
			want: `flag needs an argument: -config; usage: step [-config policy.json] [-explain JOB [-text] | -forecast] < snapshot.json > decision.json`},
		{name: "extra argument", in: "design.json", args: []string{"snapshot.json"},
			want: `unexpected argument "snapshot.json"; usage: step [-config policy.json] [-explain JOB [-text] | -forecast] < snapshot.json > decision.json`},
		{name: "empty policy file name", in: "design.json", args: []string{"-config", ""},
			want: `-config: empty file name; usage: step [-config policy.json] [-explain JOB [-text] | -forecast] < snapshot.json > decision.json`},
		{name: "empty job to explain", in: "design.json", args: []string{"-explain="},
			want: `-explain: empty job ID; usage: step [-config policy.json] [-explain JOB [-text] | -forecast] < snapshot.json > decision.json`},
		{name: "text without explain", in: "design.json", args: []string{"-text"},
			want: `-text needs -explain JOB; usage: step [-config policy.json] [-explain JOB [-text] | -forecast] < snapshot.json > decision.json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runFile(t, tt.in, tt.args...)
			require.Equal(t, 2, code)
			require.Empty(t, stdout)
			require.True(t, strings.HasSuffix(stderr, "\n"), "%q", stderr)
			line := strings.TrimSuffix(stderr, "\n")
			require.NotContains(t, line, "\n")
			require.NotContains(t, line, "\r")
			require.Equal(t, tt.want, line)
		})
	}
}

func TestHelp(t *testing.T) {
	code, stdout, stderr := runFile(t, "", "-h")
	require.Equal(t, 0, code)
	require.Empty(t, stdout)
	require.Equal(t, "usage: step [-config policy.json] [-explain JOB [-text] | -forecast] < snapshot.json > decision.json\n", stderr)
}

func TestExplain(t *testing.T) {
	code, stdout, stderr := runFile(t, "design.json", "-explain", "C")
	require.Equal(t, 0, code, stderr)
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &e))
	require.Equal(t, "C", e["job"])
	require.Equal(t, "reserved", e["outcome"])
	require.EqualValues(t, 12, e["members"])
	require.Contains(t, e, "nodes")

	code, stdout, stderr = runFile(t, "design.json", "-explain", "C", "-text")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(stdout, "job C: reserved"), stdout)
	require.Contains(t, stdout, "asks 12×8 H100 GPUs")

	code, stdout, stderr = runFile(t, "design.json", "-explain", "nope")
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Equal(t, "explain: no job \"nope\" in the snapshot\n", stderr)
}

// TestExplainNoHTMLEscapes: explain's JSON writes a job ID with <, > and
// & as they are, as the decision output does, not as \u003c escapes.
func TestExplainNoHTMLEscapes(t *testing.T) {
	snap := `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8}]},` +
		`"jobs":[{"id":"a<b>&c","gpusPerMember":16}]}`
	var out, errb bytes.Buffer
	code := run([]string{"-explain", "a<b>&c"}, strings.NewReader(snap), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	require.Contains(t, out.String(), `"a<b>&c"`)
	require.NotContains(t, out.String(), `\u003c`)
}

// TestDesignExampleAsWritten: the design's example snapshot, verbatim, is
// invalid (job A, a gang of 8×8 GPUs, holds only the 8 GPUs of n0): the
// command exits 2, writes nothing on standard output and one line on
// standard error naming the field. testdata/design.json is the copy with
// the nodes A needs.
func TestDesignExampleAsWritten(t *testing.T) {
	code, stdout, stderr := runFile(t, "design-as-written.json")
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Equal(t, "snapshot: jobs[1] \"A\": allocation: holds 8 GPUs, want members × gpusPerMember = 64\n", stderr)
}
