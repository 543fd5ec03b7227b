package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/measure"
)

// allocated returns the bytes the heap allocated while f ran.
func allocated(f func()) uint64 {
	bytes, _ := measure.Allocated(f)
	return bytes
}

// reproInput returns the path of a reproduction input in the shared folder
// beside the repository (../shared/repro/amplify), skipping the test when
// it is absent.
func reproInput(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the working directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "repro", "amplify", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("reproduction input %s not available: %v", name, err)
	}
	return p
}

// simulateJSON runs the command and decodes its -json output, returning
// it with the bytes the run allocated.
func simulateJSON(t *testing.T, args ...string) (map[string]any, uint64) {
	t.Helper()
	var out, errb bytes.Buffer
	code := 0
	alloc := allocated(func() { code = run(append(args, "-json"), &out, &errb, false, fixedClock()) })
	require.Equal(t, 0, code, errb.String())
	var m map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	return m, alloc
}

// An endless input stops at the line limit with an error that names it,
// exit status 2.
func TestDevZeroTrace(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	for _, format := range []string{"swf", "csv"} {
		code, _, stderr := runCLI(t, "-trace", "/dev/zero", "-format", format, "-gpus", "4")
		require.Equal(t, 2, code, stderr)
		require.Regexp(t, regexp.MustCompile(`^simulate: /dev/zero: `+format+`: line 1: line longer than 1048576 bytes\n$`), stderr)
	}
}

// A 2.6 KB SWF log whose header claims 1,048,576 processors, with 50 small
// jobs: the million nodes are set up once (about 100 MB), and no Step is
// shown more nodes than the jobs hold. Each Step shown the whole pool
// allocated over 100 MB, 50 of them several GB.
func TestMaxProcsHeaderAmplifier(t *testing.T) {
	if testing.Short() {
		t.Skip("sets up a million nodes")
	}
	m, alloc := simulateJSON(t, "-trace", reproInput(t, "maxprocs1M_50jobs.swf"))
	require.EqualValues(t, 50, m["jobs"])
	require.EqualValues(t, 50, m["completed"])
	require.EqualValues(t, 1<<20, m["gpus"])
	t.Logf("allocated %d bytes", alloc)
	require.Less(t, alloc, uint64(400<<20), "allocated %d bytes", alloc)
}

// 20,000 CSV jobs of 2,000 teams on 64 GPUs allocate about what the same
// jobs of one team do: team bookkeeping costs per team once, not per team
// at every event.
func TestManyTeamsAmplifier(t *testing.T) {
	p := reproInput(t, "csv_20kjobs_2000teams.csv")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	one := filepath.Join(t.TempDir(), "oneteam.csv")
	require.NoError(t, os.WriteFile(one, regexp.MustCompile(`team\d+`).ReplaceAll(data, []byte("team0")), 0o600))

	many, allocMany := simulateJSON(t, "-trace", p, "-gpus", "64")
	single, allocOne := simulateJSON(t, "-trace", one, "-gpus", "64")
	require.Len(t, many["teams"], 2000)
	require.Len(t, single["teams"], 1)
	t.Logf("allocated %d bytes with one team, %d with 2,000", allocOne, allocMany)
	// Per team: its counters, ledger record, summary, and its share at
	// each of the series' 500 points (4 KB), which the plot reads.
	const perTeam = 8 << 10
	require.LessOrEqual(t, allocMany, allocOne+allocOne/4+perTeam*2000)
}
