package trace

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	job := func(id string, submit, run, limit int64, procs int, team string, tier int, kind string, line int) Job {
		return Job{ID: id, Submit: submit, Run: run, Limit: limit, Procs: procs, ReqProcs: procs,
			Team: team, Tier: tier, Kind: kind, Line: line}
	}
	const tr, inf = KindTraining, KindInference
	tests := []struct {
		name    string
		in      string
		jobs    []Job
		skipped Skips
	}{
		{
			name: "positional, no header",
			in:   "a,0,2,60\nb,5,1,30,90\nc,6,4,10,,team-x,1,inference\n",
			jobs: []Job{
				job("a", 0, 60, 60, 2, "", 3, tr, 1),
				job("b", 5, 30, 90, 1, "", 3, tr, 2),
				job("c", 6, 10, 10, 4, "team-x", 1, inf, 3),
			},
			skipped: Skips{},
		},
		{
			name:    "numeric ids without header",
			in:      "7,0,1,5\n8,1,1,5\n",
			jobs:    []Job{job("7", 0, 5, 5, 1, "", 3, tr, 1), job("8", 1, 5, 5, 1, "", 3, tr, 2)},
			skipped: Skips{},
		},
		{
			name:    "header in project order",
			in:      "id,submit,gpus,duration,timeLimit,team,tier,kind\nj1,0,8,100,200,a,0,Training\n",
			jobs:    []Job{job("j1", 0, 100, 200, 8, "a", 0, tr, 2)},
			skipped: Skips{},
		},
		{
			name: "normalized Philly header",
			in:   "job_id,submit_time,gpus,duration,team\n31566,0,8,2240194,7f04ca\n62255,9408090,1,72.0,11cb48\n",
			jobs: []Job{
				job("31566", 0, 2240194, 2240194, 8, "7f04ca", 3, tr, 2),
				job("62255", 9408090, 72, 72, 1, "11cb48", 3, tr, 3),
			},
			skipped: Skips{},
		},
		{
			name: "columns in any order, unknown ones ignored, no id",
			in:   "Kind, Team ,model,Duration,GPUs,Submit_Time\ninference,b,resnet,66.0,2,10\n,,vgg,1.4,1,3.6\n",
			jobs: []Job{
				job("1", 4, 1, 1, 1, "", 3, tr, 3),
				job("0", 10, 66, 66, 2, "b", 3, inf, 2),
			},
			skipped: Skips{},
		},
		{
			name:    "skips counted by cause",
			in:      "id,submit,gpus,duration\na,0,0,10\nb,0,-1,0\nc,0,1,0\nd,0,1,-5\ne,0,1,1\n",
			jobs:    []Job{job("e", 0, 1, 1, 1, "", 3, tr, 6)},
			skipped: Skips{{SkipNoProcessors, 2}, {SkipNoRuntime, 2}},
		},
		{
			name:    "time limit <= 0 falls back to duration",
			in:      "a,0,1,30,0\nb,0,1,30,-1\n",
			jobs:    []Job{job("a", 0, 30, 30, 1, "", 3, tr, 1), job("b", 0, 30, 30, 1, "", 3, tr, 2)},
			skipped: Skips{},
		},
		{
			name:    "comments, blank lines, quotes, spaces, CRLF, BOM",
			in:      "\uFEFFid,submit,gpus,duration\r\n# comment\r\n\r\n  \r\n\"x,1\", 2 , 3 ,4 \r\n",
			jobs:    []Job{job("x,1", 2, 4, 4, 3, "", 3, tr, 5)},
			skipped: Skips{},
		},
		{
			name: "sorted stably by submit",
			in:   "a,9,1,1\nb,1,1,1\nc,9,1,1\nd,1,1,1\n",
			jobs: []Job{job("b", 1, 1, 1, 1, "", 3, tr, 2), job("d", 1, 1, 1, 1, "", 3, tr, 4),
				job("a", 9, 1, 1, 1, "", 3, tr, 1), job("c", 9, 1, 1, 1, "", 3, tr, 3)},
			skipped: Skips{},
		},
		{name: "empty", in: "", skipped: Skips{}},
		{name: "header only", in: "submit,gpus,duration\n", skipped: Skips{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCSV(strings.NewReader(tc.in))
			noErr(t, err)
			equal(t, tc.jobs, got.Jobs, "jobs")
			equal(t, tc.skipped, got.Skipped, "skipped")
			equal(t, 0, got.MaxProcs, "MaxProcs")
			checkJobs(t, got)
		})
	}
}

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		msg  string
		is   error
	}{
		{"not a number", "a,0,1,10\nb,0,x,10\n", `csv: line 2: column gpus "x": not a number`, ErrNotNumber},
		{"header then bad duration", "job_id,submit_time,gpus,duration,team\n1,0,1,abc,t\n",
			`csv: line 2: column duration "abc": not a number`, ErrNotNumber},
		{"fractional gpus", "a,0,0.5,10\n", `csv: line 1: column gpus "0.5": not a whole number`, ErrNotWhole},
		{"empty gpus", "a,0,,10\n", `csv: line 1: column gpus "": not a number`, ErrNotNumber},
		{"too few fields", "a,0,1\n", "csv: line 1: 3 fields, want 4 to 8", nil},
		{"too many fields", "a,0,1,1,1,t,1,training,x\n", "csv: line 1: 9 fields, want 4 to 8", nil},
		{"row shorter than header", "id,submit,gpus,duration\na,0,1\n", "csv: line 2: 3 fields, want 4 as in the header", nil},
		{"header lacks a column", "timestamp,duration,num_gpus\n", "csv: line 1: header has no submit column", nil},
		{"duplicate column", "gpus,submit,num_gpus,duration\n", `csv: line 1: column gpus "num_gpus": duplicate column (also field 1)`, nil},
		{"bad kind", "a,0,1,1,1,t,1,batch\n", `csv: line 1: column kind "batch": want training or inference`, nil},
		{"negative tier", "a,0,1,1,1,t,-1\n", `csv: line 1: column tier "-1": want a tier >= 0`, nil},
		{"bad quote", "a,0,1,1\n\"b,0,1,1\n", "csv: line 2: extraneous or missing \" in quoted-field", nil},
		{"unknown header", "foo,bar,baz,qux\n", `csv: line 1: column submit "bar": not a number`, ErrNotNumber},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCSV(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error, got %+v", got)
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

// A byte order mark at the start of a CSV file is ignored whatever the
// first line holds. It used to be trimmed from the first field only after
// the CSV reader had split the line, so a file that opened with a mark
// and a comment, or a mark and a quoted field, failed to read.
func TestReadCSVByteOrderMarkBeforeCommentOrQuote(t *testing.T) {
	for _, in := range []string{
		"\uFEFF# exported by a spreadsheet\na,0,1,10\n",
		"\uFEFF\"a\",0,1,10\n",
		"\uFEFF\n\"a\",\"0\",\"1\",\"10\"\n",
	} {
		tr, err := ReadCSV(strings.NewReader(in))
		noErr(t, err)
		equal(t, 1, len(tr.Jobs), fmt.Sprintf("jobs of %q", in))
		equal(t, "a", tr.Jobs[0].ID, fmt.Sprintf("id in %q", in))
		equal(t, int64(10), tr.Jobs[0].Run, fmt.Sprintf("run in %q", in))
	}
}
