package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Millisecond); return t }
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb, false, fixedClock())
	return code, out.String(), errb.String()
}

func TestJSONContract(t *testing.T) {
	for _, tc := range []struct {
		backfill string
		makespan float64
	}{
		// Hand-worked in the simulator's golden tests: FCFS ends at 55,
		// EASY at 37.
		{"none", 55}, {"easy", 37}, {"conservative", 55},
	} {
		code, out, stderr := runCLI(t, "-trace", "testdata/small.swf", "-backfill", tc.backfill, "-json")
		require.Equal(t, 0, code, stderr)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		for _, k := range []string{"jobs", "skipped", "makespan", "utilization", "meanWait", "meanBoundedSlowdown", "maxWait", "stepP50", "stepP99"} {
			require.Contains(t, m, k)
		}
		require.EqualValues(t, 4, m["jobs"])
		require.EqualValues(t, 2, m["skipped"])
		require.EqualValues(t, 4, m["gpus"])
		require.InDelta(t, tc.makespan, m["makespan"], 1e-9, tc.backfill)
		require.InDelta(t, 100/(4*tc.makespan), m["utilization"], 1e-9)
		require.InDelta(t, 0.001, m["stepP50"], 1e-12) // the fake clock ticks 1 ms per read
	}
}

func TestFlatPoolAndNodes(t *testing.T) {
	// -gpus 2 leaves the 3- and 4-processor jobs too large: skipped.
	code, out, stderr := runCLI(t, "-trace", "testdata/small.swf", "-gpus", "2", "-json")
	require.Equal(t, 0, code, stderr)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.EqualValues(t, 2, m["jobs"])
	require.EqualValues(t, 4, m["skipped"])

	// CSV: 2 nodes × 8 GPUs; the 16-GPU job is 2 members of 8.
	code, out, stderr = runCLI(t, "-trace", "testdata/small.csv", "-nodes", "2", "-gpus-per-node", "8", "-json", "-backfill", "none")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.EqualValues(t, 4, m["jobs"])
	require.EqualValues(t, 16, m["gpus"])
	teams := m["teams"].([]any)
	require.Len(t, teams, 2)
	// FCFS: 0 (8 GPUs) and 1 (4) start at 0; 2 (16) waits until 100 and
	// ends at 120; 3 waits behind it and runs 120–620.
	require.InDelta(t, 620, m["makespan"], 1e-9)
}

func TestSWFProcs(t *testing.T) {
	// Two jobs on 4 processors, both submitted at 0 for 100 s: the first
	// was allocated 4 processors but asked for 2.
	dir := t.TempDir()
	path := filepath.Join(dir, "req.swf")
	log := "; MaxProcs: 4\n" +
		"1 0 -1 100 4 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n" +
		"2 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
	require.NoError(t, os.WriteFile(path, []byte(log), 0o644))
	for _, tc := range []struct {
		procs    string
		makespan float64
	}{
		{"allocated", 200}, // the second job waits for the first's 4 processors
		{"requested", 100}, // 2 + 2 processors: both start at 0
	} {
		code, out, stderr := runCLI(t, "-trace", path, "-swf-procs", tc.procs, "-json")
		require.Equal(t, 0, code, stderr)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		require.InDelta(t, tc.makespan, m["makespan"], 1e-9, tc.procs)
	}
}

func TestTableAndPlot(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"out.svg", "out.png"} {
		p := filepath.Join(dir, name)
		code, out, stderr := runCLI(t, "-trace", "testdata/small.csv", "-nodes", "2", "-gpus-per-node", "8", "-plot", p)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, "utilization")
		require.Contains(t, out, "bounded slowdown")
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}

func TestProgressOnlyOnTerminal(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"-trace", "testdata/small.swf", "-json"}, &out, &errb, true, fixedClock()))
	require.Contains(t, errb.String(), "jobs")
	require.True(t, strings.HasSuffix(errb.String(), "\r"), "the bar is erased at the end: %q", errb.String())
	_, _, stderr := runCLI(t, "-trace", "testdata/small.swf", "-json")
	require.Empty(t, stderr)
}

func TestErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-trace", "testdata/missing.swf"},
		{"-trace", "testdata/small.swf", "-backfill", "sometimes"},
		{"-trace", "testdata/small.swf", "-backfill-order", "longest"},
		{"-trace", "testdata/small.swf", "-format", "xml"},
		{"-trace", "testdata/small.swf", "-gpus", "4", "-nodes", "2", "-gpus-per-node", "2"},
		{"-trace", "testdata/small.swf", "-nodes", "2"},
		{"-trace", "testdata/small.swf", "-plot", "out.pdf"},
		{"-trace", "testdata/small.swf", "-swf-procs", "asked"},
		{"-trace", "testdata/small.csv"},
		{"-trace", "testdata/small.swf", "-bogus"},
		{"-trace", "testdata/small.swf", "extra"},
	} {
		code, out, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%v", args)
		require.Empty(t, out)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "%v: %q", args, stderr)
	}
}

// Times beyond what a duration holds (about 292 years) are refused with
// the line they are on, instead of wrapping around (a run of 2e10 s came
// out as 1.55e9 s, one of 1e10 s as a negative run); a job of more GPUs
// than an int can round up to whole nodes is skipped as too large.
func TestHugeTraceValues(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	for _, tc := range []struct{ name, line, want string }{
		{"run.swf", "1 0 -1 20000000000 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1", "line 2: run time 20000000000 s is out of range"},
		{"neg.swf", "1 0 -1 10000000000 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1", "line 2: run time 10000000000 s is out of range"},
		{"submit.swf", "1 20000000000 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1", "line 2: submit time 20000000000 s is out of range"},
	} {
		p := write(tc.name, "; MaxProcs: 4\n"+tc.line+"\n2 0 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n")
		code, out, stderr := runCLI(t, "-trace", p, "-json")
		require.Equal(t, 2, code, tc.name)
		require.Empty(t, out)
		require.Contains(t, stderr, tc.want)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "%q", stderr)
	}
	// Each time fits, but together they overflow: a submit of 5e9 s and
	// a run of 5e9 s finish past 9.2e9 s; submits of ±9e9 s span 1.8e10.
	// Submits all at 9,223,372,000 s span nothing, but their runs of
	// 100 s end past the last 9,223,372,036 s: they wrapped around, and
	// the metrics came out as makespan 0 and a mean wait of -100 s.
	for _, tc := range []struct{ name, text string }{
		{"sum.swf", "; MaxProcs: 4\n1 5000000000 -1 5000000000 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"},
		{"span.csv", "id,submit,gpus,run\na,-9000000000,1,10\nb,9000000000,1,10\n"},
		{"late.swf", "; MaxProcs: 4\n" +
			"1 9223372000 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n" +
			"2 9223372000 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1\n"},
		{"late.csv", "id,submit,gpus,run\na,9223372000,1,10\nb,9223372030,1,10\n"},
	} {
		args := []string{"-trace", write(tc.name, tc.text), "-json"}
		if strings.HasSuffix(tc.name, ".csv") {
			args = append(args, "-gpus", "4")
		}
		code, out, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, "%s: %s", tc.name, out)
		require.Empty(t, out)
		require.Contains(t, stderr, "times would overflow")
		require.Equal(t, 1, strings.Count(stderr, "\n"), "%q", stderr)
	}
	// Late but within range: the metrics are right.
	p := write("late-ok.swf", "; MaxProcs: 4\n"+
		"1 9223371000 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n"+
		"2 9223371000 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1\n")
	code, out, stderr := runCLI(t, "-trace", p, "-json", "-backfill", "none")
	require.Equal(t, 0, code, stderr)
	var late map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &late))
	require.InDelta(t, 200, late["makespan"], 1e-9)
	require.InDelta(t, 50, late["meanWait"], 1e-9)
	require.InDelta(t, 0.625, late["utilization"], 1e-9)
	p = write("huge.csv", "id,submit,gpus,run\na,0,9223372036854775807,10\nb,0,1,10\n")
	code, out, stderr = runCLI(t, "-trace", p, "-nodes", "2", "-gpus-per-node", "8", "-json")
	require.Equal(t, 0, code, stderr)
	var sum struct {
		Jobs      int            `json:"jobs"`
		SkippedBy map[string]int `json:"skippedBy"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	require.Equal(t, 1, sum.Jobs)
	require.Equal(t, 1, sum.SkippedBy["too-large"])
}

// TestHugeCluster: a cluster size past what the simulator takes, from a
// flag or from the trace's header, is refused in one line, exit 2. It ran
// out of memory, or panicked when nodes × GPUs per node wrapped around.
func TestHugeCluster(t *testing.T) {
	dir := t.TempDir()
	job := "1 0 -1 100 2 -1 -1 2 200 -1 1 1 1 1 1 -1 -1 -1\n"
	small := filepath.Join(dir, "small.swf")
	require.NoError(t, os.WriteFile(small, []byte("; MaxProcs: 4\n"+job), 0o644))
	huge := filepath.Join(dir, "huge.swf")
	require.NoError(t, os.WriteFile(huge, []byte("; MaxProcs: 99999999999\n"+job), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-trace", huge}, "header MaxProcs 99999999999: more nodes than the simulator takes (at most 1048576)"},
		{[]string{"-trace", small, "-gpus", "4000000000"}, "-gpus 4000000000: more nodes"},
		{[]string{"-trace", small, "-nodes", "288230376151711744", "-gpus-per-node", "64"}, "-nodes 288230376151711744: more nodes"},
	} {
		code, out, stderr := runCLI(t, append(tc.args, "-json")...)
		require.Equal(t, 2, code, "%v", tc.args)
		require.Empty(t, out)
		require.Contains(t, stderr, tc.want)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "%q", stderr)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"-trace", "testdata/small.swf", "-h"}} {
		code, out, stderr := runCLI(t, args...)
		require.Equal(t, 0, code, "%v", args)
		require.Empty(t, out, "%v", args)
		require.True(t, strings.HasPrefix(stderr, "usage: simulate -trace FILE [-format swf|csv] [-gpus N | -nodes N -gpus-per-node G]\n"), "%v: %q", args, stderr)
		require.Contains(t, stderr, "[-backfill easy|conservative|none] [-backfill-order priority|shortest]")
		require.Contains(t, stderr, "[-jobs N] [-json] [-plot out.svg] [-swf-procs allocated|requested]")
		require.Contains(t, stderr, "[-config policy.json | -compare a.json,b.json,...]")
		for _, f := range []string{"trace", "format", "gpus", "nodes", "gpus-per-node", "backfill", "backfill-order", "jobs", "json", "plot", "swf-procs", "config", "cluster", "teams", "compare"} {
			require.Regexp(t, `(?m)^  -`+regexp.QuoteMeta(f)+`( |$)`, stderr, "%v: flag %s", args, f)
		}
		require.Contains(t, stderr, `(default "easy")`)
		require.NotContains(t, stderr, "help requested")
	}
}

// TestNegativeSizeNamesFlag: a negative -gpus, -nodes, -gpus-per-node or
// -jobs is refused in a line that names the flag and the value given,
// not one that lists all four.
func TestNegativeSizeNamesFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-gpus", "-1"}, "simulate: -gpus must be >= 0, got -1\n"},
		{[]string{"-nodes", "-2", "-gpus-per-node", "8"}, "simulate: -nodes must be >= 0, got -2\n"},
		{[]string{"-nodes", "2", "-gpus-per-node", "-8"}, "simulate: -gpus-per-node must be >= 0, got -8\n"},
		{[]string{"-jobs", "-5"}, "simulate: -jobs must be >= 0, got -5\n"},
	} {
		code, out, stderr := runCLI(t, append([]string{"-trace", "testdata/small.swf"}, tc.args...)...)
		require.Equal(t, 2, code, "%v", tc.args)
		require.Empty(t, out)
		require.Equal(t, tc.want, stderr, "%v", tc.args)
	}
}

// TestTableTeamNames: a team name with a line break or a tab (a quoted
// CSV field may hold one) is printed quoted, on its own row of the team
// table, instead of breaking the row in two or shifting its columns.
func TestTableTeamNames(t *testing.T) {
	p := filepath.Join(t.TempDir(), "teams.csv")
	require.NoError(t, os.WriteFile(p, []byte("id,submit,gpus,run,team\n"+
		"a,0,1,10,plain\nb,0,1,10,\"two\nlines\"\nc,0,1,10,\"tab\there\"\nd,0,1,10,bad\xffbyte\n"), 0o644))
	code, out, stderr := runCLI(t, "-trace", p, "-gpus", "4")
	require.Equal(t, 0, code, stderr)
	_, teams, ok := strings.Cut(out, "\n\n")
	require.True(t, ok, out)
	lines := strings.Split(strings.TrimSuffix(teams, "\n"), "\n")
	require.Len(t, lines, 5, teams) // the heading and four teams
	require.Contains(t, teams, `"two\nlines"`)
	require.Contains(t, teams, `"tab\there"`)
	require.Contains(t, teams, `"bad\xffbyte"`)
	for _, l := range lines[1:] {
		require.Len(t, strings.Fields(l), 7, "%q", l)
	}
}

// failWriter fails every write, as a closed pipe does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A failure to write the results exits 1 with one line that says what
// failed, for the table and for JSON.
func TestWriteFailure(t *testing.T) {
	for _, args := range [][]string{
		{"-trace", "testdata/small.swf"},
		{"-trace", "testdata/small.swf", "-json"},
	} {
		var errb bytes.Buffer
		code := run(args, failWriter{}, &errb, false, fixedClock())
		require.Equal(t, 1, code, "%v", args)
		require.Equal(t, "simulate: write output: broken pipe\n", errb.String(), "%v", args)
	}
}

// TestJSONContractValues checks the documented keys of -json against the
// hand-worked EASY run of testdata/small.swf on its header's 4 processors:
// job 1 (3 procs, 10 s) starts at 0, job 2 (2, 10 s) is reserved for 10,
// job 4 (1, 30 s) backfills at 2, job 3 (4, 5 s) waits until 32. Waits are
// 0, 10, 31 and 0 s; bounded slowdowns max(1, (wait+run)/max(run, 10)) are
// 1, 2, 3.6 (job 3 runs 5 s, under the 10 s bound) and 1. The output is
// one object and every documented key is a number.
func TestJSONContractValues(t *testing.T) {
	code, out, stderr := runCLI(t, "-trace", "testdata/small.swf", "-json")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	dec := json.NewDecoder(strings.NewReader(out))
	var m map[string]any
	require.NoError(t, dec.Decode(&m))
	require.False(t, dec.More(), "one object")
	for _, k := range []string{"jobs", "skipped", "makespan", "utilization", "meanWait", "meanBoundedSlowdown", "maxWait", "stepP50", "stepP99"} {
		require.IsType(t, float64(0), m[k], k)
	}
	require.InDelta(t, 37, m["makespan"], 1e-9)
	require.InDelta(t, 41.0/4, m["meanWait"], 1e-9)
	require.InDelta(t, 31, m["maxWait"], 1e-9)
	require.InDelta(t, (1+2+3.6+1)/4, m["meanBoundedSlowdown"], 1e-9)
}

// TestSWFFieldFallbacks: without MaxProcs an SWF trace runs on its
// header's MaxNodes; processors come from field 8 when field 5 is
// missing, and the time limit is field 9, the run time when missing.
func TestSWFFieldFallbacks(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		limit  string // field 9 of the second job
		killed float64
	}{{"-1", 0}, {"5", 1}} {
		path := filepath.Join(dir, "fallback.swf")
		log := "; MaxNodes: 4\n" +
			"1 0 -1 10 -1 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1\n" + // 2 procs from field 8
			"2 0 -1 10 4 -1 -1 -1 " + tc.limit + " -1 1 1 1 -1 -1 -1 -1 -1\n"
		require.NoError(t, os.WriteFile(path, []byte(log), 0o644))
		code, out, stderr := runCLI(t, "-trace", path, "-json")
		require.Equal(t, 0, code, stderr)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		require.EqualValues(t, 4, m["gpus"], "MaxNodes when MaxProcs is missing")
		require.EqualValues(t, 2, m["jobs"])
		require.EqualValues(t, 0, m["skipped"])
		require.EqualValues(t, tc.killed, m["killedAtLimit"], "field 9 %s", tc.limit)
		if tc.limit == "-1" {
			// 2 + 4 processors on 4: the second job waits for the first.
			require.InDelta(t, 20, m["makespan"], 1e-9)
			require.InDelta(t, (2*10+4*10)/(4*20.0), m["utilization"], 1e-9)
		}
	}
}
