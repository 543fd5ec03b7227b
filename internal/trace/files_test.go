package trace

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedTraces returns the shared traces folder beside the repository,
// found by walking up from the working directory to the directory holding
// go.mod. It skips the test when the folder is absent.
func sharedTraces(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("no go.mod above the working directory; cannot locate the shared traces folder")
		}
		dir = parent
	}
	traces := filepath.Join(dir, "..", "shared", "traces")
	if fi, err := os.Stat(traces); err != nil || !fi.IsDir() {
		tb.Skipf("the shared traces folder beside the repository is absent (%s)", traces)
	}
	return traces
}

// sharedFile returns the path of a file in the shared traces folder,
// skipping the test when it is absent.
func sharedFile(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(sharedTraces(tb), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("trace %s is absent from the shared traces folder", rel)
	}
	return p
}

// The expected counts are those stated in the traces' SOURCES.md.
func TestSharedSWF(t *testing.T) {
	tests := []struct {
		file               string
		records, usable    int
		maxProcs, maxNodes int
		maxUsed            int
	}{
		{"swf/KTH-SP2-1996-2-predictsim-filtered.swf", 28481, 28481, 100, 100, 100},
		{"swf/SDSC-SP2-1998-first4961-raw.swf", 4961, 4606, 128, 128, 100},
		{"swf/HPC2N-2002-2.2-first3170-alea.swf", 3170, 3145, 240, 240, 128},
		{"swf/lublin_256.swf", 10000, 10000, 0, 256, 256},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			tr, err := Read(sharedFile(t, tc.file), "")
			noErr(t, err)
			equal(t, tc.usable, len(tr.Jobs), "usable jobs")
			equal(t, tc.records, len(tr.Jobs)+tr.Skipped.Total(), "records")
			equal(t, tc.maxProcs, tr.MaxProcs, "MaxProcs")
			equal(t, tc.maxNodes, tr.MaxNodes, "MaxNodes")
			maxUsed := 0
			for _, j := range tr.Jobs {
				maxUsed = max(maxUsed, j.Procs)
			}
			equal(t, tc.maxUsed, maxUsed, "max processors used")
			checkJobs(t, tr)
		})
	}
}

func TestSharedPhilly(t *testing.T) {
	tr, err := Read(sharedFile(t, "gpu/philly-pollux-osdi21-normalized.csv"), "")
	noErr(t, err)
	equal(t, 82247, len(tr.Jobs), "rows")
	equal(t, 0, tr.Skipped.Total(), "skipped")
	hist := map[int]int{}
	teams := map[string]bool{}
	var minRun, maxRun int64 = 1 << 62, 0
	for _, j := range tr.Jobs {
		hist[j.Procs]++
		teams[j.Team] = true
		minRun, maxRun = min(minRun, j.Run), max(maxRun, j.Run)
	}
	want := map[int]int{1: 76627, 2: 1818, 4: 1870, 8: 1643, 12: 7, 16: 199, 24: 7, 32: 67, 64: 6, 128: 3}
	equal(t, want, hist, "GPU count histogram")
	equal(t, 15, len(teams), "teams (virtual clusters)")
	equal(t, int64(1), minRun, "shortest duration")
	equal(t, int64(4628226), maxRun, "longest duration")
	equal(t, int64(0), tr.Jobs[0].Submit, "first submit")
	checkJobs(t, tr)
}

func TestSharedTiresias(t *testing.T) {
	tr, err := Read(sharedFile(t, "gpu/tiresias/60_job.csv"), "csv")
	noErr(t, err)
	equal(t, 60, len(tr.Jobs), "jobs")
	checkJobs(t, tr)
}

func BenchmarkReadKTH(b *testing.B) {
	p := sharedFile(b, "swf/KTH-SP2-1996-2-predictsim-filtered.swf")
	for b.Loop() {
		if _, err := Read(p, ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadPhilly(b *testing.B) {
	p := sharedFile(b, "gpu/philly-pollux-osdi21-normalized.csv")
	for b.Loop() {
		if _, err := Read(p, ""); err != nil {
			b.Fatal(err)
		}
	}
}
