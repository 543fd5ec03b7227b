package trace

import (
	"errors"
	"strings"
	"testing"
)

// swfLine builds an 18-field SWF record with the fields that matter.
func swfLine(id, submit, run, procs, reqProcs, reqTime, group string) string {
	f := []string{id, submit, "-1", run, procs, "-1", "-1", reqProcs, reqTime, "-1", "1", "1", group, "-1", "-1", "-1", "-1", "-1"}
	return strings.Join(f, " ")
}

func TestReadSWF(t *testing.T) {
	job := func(id string, submit, run, limit int64, procs int, team string, line int) Job {
		return Job{ID: id, Submit: submit, Run: run, Limit: limit, Procs: procs, ReqProcs: procs,
			Team: team, Tier: DefaultTier, Kind: KindTraining, Line: line}
	}
	requested := func(j Job, req int) Job { j.ReqProcs = req; return j }
	tests := []struct {
		name               string
		in                 string
		maxProcs, maxNodes int
		jobs               []Job
		skipped            Skips
	}{
		{
			name: "header MaxProcs and MaxNodes",
			in: "; Version: 2.2\n;  MaxNodes: 64\n; MaxProcs: 128\n; Note: x: y\n" +
				swfLine("1", "0", "10", "4", "4", "20", "7") + "\n",
			maxProcs: 128, maxNodes: 64,
			jobs:    []Job{job("1", 0, 10, 20, 4, "7", 5)},
			skipped: Skips{},
		},
		{
			name:     "no MaxProcs",
			in:       "; MaxNodes: 256\n" + swfLine("1", "5", "10", "1", "-1", "-1", "-1") + "\n",
			maxNodes: 256,
			jobs:     []Job{job("1", 5, 10, 10, 1, "", 2)},
			skipped:  Skips{},
		},
		{
			name:    "field 8 when field 5 is missing",
			in:      swfLine("1", "0", "10", "-1", "16", "30", "2") + "\n" + swfLine("2", "1", "10", "0", "8", "30", "2"),
			jobs:    []Job{job("1", 0, 10, 30, 16, "2", 1), job("2", 1, 10, 30, 8, "2", 2)},
			skipped: Skips{},
		},
		{
			name: "requested processors kept beside the allocation",
			in: swfLine("1", "0", "10", "8", "7", "30", "2") + "\n" + swfLine("2", "0", "10", "3", "4", "30", "2") + "\n" +
				swfLine("3", "0", "10", "5", "-1", "30", "2"),
			jobs:    []Job{requested(job("1", 0, 10, 30, 8, "2", 1), 7), requested(job("2", 0, 10, 30, 3, "2", 2), 4), job("3", 0, 10, 30, 5, "2", 3)},
			skipped: Skips{},
		},
		{
			name:    "requested time falls back to run time",
			in:      swfLine("1", "0", "10", "2", "2", "-1", "0") + "\n" + swfLine("2", "0", "15", "2", "2", "0", "0"),
			jobs:    []Job{job("1", 0, 10, 10, 2, "0", 1), job("2", 0, 15, 15, 2, "0", 2)},
			skipped: Skips{},
		},
		{
			name: "skips counted by cause",
			in: swfLine("1", "0", "-1", "-1", "-1", "10", "1") + "\n" + // no processors (counted first)
				swfLine("2", "0", "-1", "4", "4", "10", "1") + "\n" + // no run time
				swfLine("3", "0", "0", "4", "4", "10", "1") + "\n" + // no run time
				swfLine("4", "0", "5", "0", "-1", "10", "1") + "\n" + // no processors
				swfLine("5", "0", "5", "4", "4", "10", "1") + "\n",
			jobs:    []Job{job("5", 0, 5, 10, 4, "1", 5)},
			skipped: Skips{{SkipNoProcessors, 2}, {SkipNoRuntime, 2}},
		},
		{
			name:    "floats are rounded",
			in:      swfLine("1.0", "3600.0", "9.5", "4.0", "-1.0", "1e3", "-1"),
			jobs:    []Job{job("1", 3600, 10, 1000, 4, "", 1)},
			skipped: Skips{},
		},
		{
			name: "sorted stably by submit",
			in: swfLine("1", "50", "1", "1", "1", "1", "-1") + "\n" + swfLine("2", "10", "1", "1", "1", "1", "-1") + "\n" +
				swfLine("3", "50", "1", "1", "1", "1", "-1") + "\n" + swfLine("4", "10", "1", "1", "1", "1", "-1"),
			jobs: []Job{job("2", 10, 1, 1, 1, "", 2), job("4", 10, 1, 1, 1, "", 4),
				job("1", 50, 1, 1, 1, "", 1), job("3", 50, 1, 1, 1, "", 3)},
			skipped: Skips{},
		},
		{
			name:     "blank, whitespace-only and CRLF lines",
			in:       "\uFEFF; MaxProcs: 8\r\n\r\n" + swfLine("1", "0", "1", "1", "1", "1", "-1") + "\r\n \t \n",
			maxProcs: 8,
			jobs:     []Job{job("1", 0, 1, 1, 1, "", 3)},
			skipped:  Skips{},
		},
		{
			name:    "empty input",
			in:      "",
			skipped: Skips{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ReadSWF(strings.NewReader(tc.in))
			noErr(t, err)
			equal(t, tc.maxProcs, tr.MaxProcs, "MaxProcs")
			equal(t, tc.maxNodes, tr.MaxNodes, "MaxNodes")
			equal(t, tc.jobs, tr.Jobs, "jobs")
			equal(t, tc.skipped, tr.Skipped, "skipped")
			checkJobs(t, tr)
		})
	}
}

func TestReadSWFErrors(t *testing.T) {
	good := swfLine("1", "0", "10", "1", "1", "10", "1")
	tests := []struct {
		name string
		in   string
		msg  string
		is   error
	}{
		{"not a number", "; c\n" + good + "\n" + swfLine("2", "0", "abc", "1", "1", "10", "1"),
			`swf: line 3: field 4 "abc": not a number`, ErrNotNumber},
		{"too few fields", good + "\n1 2 3\n", "swf: line 2: 3 fields, want 18", nil},
		{"too many fields", good + " 7\n", "swf: line 1: 19 fields, want 18", nil},
		{"fractional processors", swfLine("1", "0", "10", "1.5", "1", "10", "1"),
			`swf: line 1: field 5 "1.5": not a whole number`, ErrNotWhole},
		{"infinity", swfLine("1", "Inf", "10", "1", "1", "10", "1"),
			`swf: line 1: field 2 "Inf": not a number`, ErrNotNumber},
		{"hex", swfLine("1", "0x10", "10", "1", "1", "10", "1"),
			`swf: line 1: field 2 "0x10": not a number`, ErrNotNumber},
		{"out of range", swfLine("1", "1e30", "10", "1", "1", "10", "1"),
			`swf: line 1: field 2 "1e30": out of range`, ErrRange},
		{"bad header", "; MaxProcs: many\n", `swf: line 1: MaxProcs "many": not a number`, ErrNotNumber},
		{"long line", strings.Repeat("1", MaxLineBytes+1), "swf: line 1: line longer than 1048576 bytes", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ReadSWF(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error, got %+v", tr)
			}
			equal(t, tc.msg, err.Error(), "message")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%T is not a *ParseError", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error %v is not %v", err, tc.is)
			}
		})
	}
}
