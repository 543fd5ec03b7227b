package trace

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestSWFRoundTrip writes random SWF logs (header comments, blank lines,
// tabs, CRLF, -1 for unknown values, times written as decimals) and
// reads them back: every data line is either a job with the fields the
// package documentation maps, or counted once as skipped for the
// documented cause; nothing is lost, and the header's MaxProcs and
// MaxNodes come through.
func TestSWFRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		var want []Job
		noProcs, noRun, noSubmit, line, data := 0, 0, 0, 0, 0
		maxProcs := rapid.IntRange(-1, 512).Draw(t, "maxProcs")
		maxNodes := rapid.IntRange(-1, 512).Draw(t, "maxNodes")
		emit := func(s string) {
			line++
			b.WriteString(s)
			b.WriteString(rapid.SampledFrom([]string{"\n", "\r\n"}).Draw(t, "eol"))
		}
		emit("; Version: 2.2")
		if maxProcs >= 0 {
			emit(fmt.Sprintf("; MaxProcs: %d", maxProcs))
		}
		if maxNodes >= 0 {
			emit(fmt.Sprintf(";MaxNodes:\t%d", maxNodes))
		}
		num := func(v int64) string {
			if v > 0 && rapid.IntRange(0, 4).Draw(t, "decimal") == 0 {
				return strconv.FormatInt(v, 10) + ".0"
			}
			return strconv.FormatInt(v, 10)
		}
		for i := range rapid.IntRange(0, 40).Draw(t, "lines") {
			switch rapid.IntRange(0, 9).Draw(t, "kind") {
			case 0:
				emit(rapid.SampledFrom([]string{"", "  \t", "; a comment", "  ; Note: indented"}).Draw(t, "filler"))
				continue
			}
			submit := rapid.Int64Range(-5, 1e6).Draw(t, "submit")
			run := rapid.Int64Range(-1, 1e6).Draw(t, "run")
			procs := rapid.Int64Range(-1, 300).Draw(t, "procs")
			req := rapid.Int64Range(-1, 300).Draw(t, "reqProcs")
			reqTime := rapid.Int64Range(-1, 2e6).Draw(t, "reqTime")
			group := rapid.Int64Range(-1, 20).Draw(t, "group")
			id := int64(i + 1)
			f := []string{num(id), num(submit), "-1", num(run), strconv.FormatInt(procs, 10), "-1", "-1",
				strconv.FormatInt(req, 10), num(reqTime), "-1", "1", "7", strconv.FormatInt(group, 10), "-1", "-1", "-1", "-1", "-1"}
			sep := rapid.SampledFrom([]string{" ", "\t", "   "}).Draw(t, "sep")
			emit(rapid.SampledFrom([]string{"", " ", "\t"}).Draw(t, "indent") + strings.Join(f, sep))
			data++
			p := procs
			if p <= 0 {
				p = req
			}
			switch {
			case p <= 0:
				noProcs++
				continue
			case run <= 0:
				noRun++
				continue
			case submit < 0:
				noSubmit++
				continue
			}
			j := Job{ID: strconv.FormatInt(id, 10), Submit: submit, Run: run, Limit: reqTime, Procs: int(p),
				ReqProcs: int(req), Tier: DefaultTier, Kind: KindTraining, Line: line}
			if j.Limit <= 0 {
				j.Limit = run
			}
			if req <= 0 {
				j.ReqProcs = j.Procs
			}
			if group >= 0 {
				j.Team = strconv.FormatInt(group, 10)
			}
			want = append(want, j)
		}
		sortJobs(want)
		if len(want) == 0 {
			want = nil
		}
		tr, err := ReadSWF(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("%v reading\n%s", err, b.String())
		}
		if fmt.Sprint(want) != fmt.Sprint(tr.Jobs) {
			t.Fatalf("jobs:\n want %v\n  got %v", want, tr.Jobs)
		}
		if got := len(tr.Jobs) + tr.Skipped.Total(); got != data {
			t.Fatalf("%d data lines, %d jobs and %d skipped", data, len(tr.Jobs), tr.Skipped.Total())
		}
		if tr.Skipped.Count(SkipNoProcessors) != noProcs || tr.Skipped.Count(SkipNoRuntime) != noRun || tr.Skipped.Count(SkipNoSubmitTime) != noSubmit {
			t.Fatalf("skipped %v, want %d no-processors, %d no-runtime and %d no-submit-time", tr.Skipped, noProcs, noRun, noSubmit)
		}
		if tr.MaxProcs != max(maxProcs, 0) || tr.MaxNodes != max(maxNodes, 0) {
			t.Fatalf("MaxProcs %d, MaxNodes %d; want %d, %d", tr.MaxProcs, tr.MaxNodes, max(maxProcs, 0), max(maxNodes, 0))
		}
	})
}
