package trace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func FuzzReadSWF(f *testing.F) {
	f.Add([]byte("; MaxProcs: 128\n; MaxNodes: 64\n" + swfLine("1", "0", "10", "4", "4", "20", "7") + "\n"))
	f.Add([]byte(swfLine("1", "0", "-1", "-1", "16", "-1", "-1") + "\n \t\n"))
	f.Add([]byte(swfLine("1.5", "3600.0", "1e3", "-1.0", "2", "0", "3")))
	f.Add([]byte("1 2 3\n"))
	f.Add([]byte("; MaxProcs: x\n"))
	f.Add([]byte(swfLine("1", "0", "10", "2", "2", "20", "1") + "\n" + strings.Repeat("\n", 4096)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr *Trace
		var err error
		checkAllocs(t, len(data), func() { tr, err = ReadSWF(bytes.NewReader(data)) })
		if err != nil {
			var pe *ParseError
			if tr != nil || !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v with trace %v", err, tr)
			}
			return
		}
		checkJobs(t, tr)
	})
}

func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("a,0,2,60\nb,5,1,30,90\nc,6,4,10,,team-x,1,inference\n"))
	f.Add([]byte("job_id,submit_time,gpus,duration,team\n31566,0,8,2240194,7f04ca\n"))
	f.Add([]byte("kind,duration,gpus,submit\ninference,66.0,0,1\n,1,1,-1\n"))
	f.Add([]byte("\"x,1\",2,3,4\n# c\n\n"))
	f.Add([]byte("a,0,1\n"))
	f.Add([]byte(strings.Repeat("a,0,1,1\n", 512)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr *Trace
		var err error
		checkAllocs(t, len(data), func() { tr, err = ReadCSV(bytes.NewReader(data)) })
		if err != nil {
			var pe *ParseError
			if tr != nil || !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v with trace %v", err, tr)
			}
			return
		}
		checkJobs(t, tr)
	})
}

// Allocation bounds of a read of n bytes: fixed buffers (the SWF
// scanner's 64 KiB, the CSV reader's few KiB) plus a job, its strings and
// the growth of the job list for each short line. The shortest usable
// line, "a,0,1,1\n", costs about 80 bytes per input byte in a long list.
const (
	allocFixed   = 128 << 10
	allocPerByte = 128
)

// checkAllocs runs read and fails when it allocates beyond the bounds for
// an input of n bytes.
func checkAllocs(t *testing.T, n int, read func()) {
	t.Helper()
	if a := allocated(read); a > allocFixed+allocPerByte*uint64(n) {
		t.Fatalf("allocated %d bytes for %d bytes of input (bound %d + %d per byte)", a, n, allocFixed, allocPerByte)
	}
}

// Jobs written in the positional CSV format read back as written, in
// (submit, line) order, with the unusable ones counted.
func TestCSVRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 50).Draw(t, "n")
		var b strings.Builder
		var want []Job
		noProcs, noRun := 0, 0
		for i := range n {
			j := Job{
				ID:     fmt.Sprintf("job-%d", i),
				Submit: rapid.Int64Range(-10, 1000).Draw(t, "submit"),
				Run:    rapid.Int64Range(-2, 1e9).Draw(t, "run"),
				Limit:  rapid.Int64Range(-2, 1e9).Draw(t, "limit"),
				Procs:  rapid.IntRange(-1, 512).Draw(t, "procs"),
				Team:   rapid.SampledFrom([]string{"", "a", "team b"}).Draw(t, "team"),
				Tier:   rapid.IntRange(0, 5).Draw(t, "tier"),
				Kind:   rapid.SampledFrom([]string{KindTraining, KindInference}).Draw(t, "kind"),
				Line:   i + 1,
			}
			fmt.Fprintf(&b, "%s,%d,%d,%d,%d,%s,%d,%s\n", j.ID, j.Submit, j.Procs, j.Run, j.Limit, j.Team, j.Tier, j.Kind)
			switch {
			case j.Procs <= 0:
				noProcs++
				continue
			case j.Run <= 0:
				noRun++
				continue
			}
			if j.Limit <= 0 {
				j.Limit = j.Run
			}
			j.ReqProcs = j.Procs
			want = append(want, j)
		}
		sortJobs(want)
		tr, err := ReadCSV(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			want = nil
		}
		if fmt.Sprint(want) != fmt.Sprint(tr.Jobs) {
			t.Fatalf("jobs:\n want %v\n  got %v", want, tr.Jobs)
		}
		if tr.Skipped.Count(SkipNoProcessors) != noProcs || tr.Skipped.Count(SkipNoRuntime) != noRun {
			t.Fatalf("skipped %v, want %d no-processors and %d no-runtime", tr.Skipped, noProcs, noRun)
		}
	})
}
