package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// busyTrace writes a CSV trace of n jobs of three teams that keeps 4
// nodes of 8 GPUs busy, so that policies differ.
func busyTrace(t *testing.T, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 33))
	var b strings.Builder
	b.WriteString("job_id,submit_time,gpus,duration,team\n")
	at := 0
	for i := range n {
		at += rng.IntN(300)
		gpus := []int{1, 1, 2, 4, 8, 16, 32}[rng.IntN(7)]
		fmt.Fprintf(&b, "%d,%d,%d,%d,%s\n", i, at, gpus, 60+rng.IntN(3600), []string{"a", "b", "c"}[rng.IntN(3)])
	}
	p := filepath.Join(t.TempDir(), "busy.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

var comparePolicies = []string{"testdata/fcfs.policy.json", "testdata/easy.policy.json",
	"testdata/conservative.policy.json", "testdata/fairshare.policy.json"}

// TestCompareEqualsSingleRuns: -compare prints, for each policy, the
// figures a run of that policy alone prints: the same JSON object in the
// array of -json, and the same figures in the table's column.
func TestCompareEqualsSingleRuns(t *testing.T) {
	tr := busyTrace(t, 150)
	base := []string{"-trace", tr, "-nodes", "4", "-gpus-per-node", "8", "-teams", "testdata/teams3.json"}
	code, out, stderr := runCLI(t, append(base, "-compare", strings.Join(comparePolicies, ","), "-json")...)
	require.Equal(t, 0, code, stderr)
	var all []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &all))
	require.Len(t, all, len(comparePolicies))
	code, table, stderr := runCLI(t, append(base, "-compare", strings.Join(comparePolicies, ","))...)
	require.Equal(t, 0, code, stderr)
	cols := tableColumns(t, table)
	distinct := map[float64]bool{}
	for k, f := range comparePolicies {
		code, out, stderr := runCLI(t, append(base, "-config", f, "-json")...)
		require.Equal(t, 0, code, stderr)
		var one map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &one))
		require.Equal(t, one, all[k], f)
		distinct[one["meanWait"].(float64)] = true

		want := map[string]string{
			"utilization":                     fmt.Sprintf("%.4f", one["utilization"]),
			"mean wait (s)":                   fmt.Sprintf("%.1f", one["meanWait"]),
			"p95 wait (s)":                    fmt.Sprintf("%.1f", one["p95Wait"]),
			"max wait (s)":                    fmt.Sprintf("%.1f", one["maxWait"]),
			"mean bounded slowdown":           fmt.Sprintf("%.4f", one["meanBoundedSlowdown"]),
			"makespan (s)":                    fmt.Sprintf("%.0f", one["makespan"]),
			"preemptions":                     fmt.Sprint(one["preemptions"]),
			"promises kept / made":            fmt.Sprintf("%v / %v", one["promisesKept"], one["promised"]),
			"Jain's index over teams":         fmt.Sprintf("%.4f", one["jain"]),
			"completed / killed / unfinished": fmt.Sprintf("%v / %v / %v", one["completed"], one["killedAtLimit"], one["unfinished"]),
		}
		for _, tm := range one["teams"].([]any) {
			tm := tm.(map[string]any)
			want[fmt.Sprintf("share %s (entitled %.4f)", tm["team"], tm["entitled"])] = fmt.Sprintf("%.4f", tm["share"])
		}
		require.Len(t, cols[k], len(want), "column %d", k)
		for label, v := range want {
			require.Equal(t, v, cols[k][label], "%s: %s", f, label)
		}
	}
	// The policies differ on this trace: the test compares real figures.
	require.Greater(t, len(distinct), 2)
}

// tableColumns reads the comparison table: per column, each row's label
// and figure.
func tableColumns(t *testing.T, table string) []map[string]string {
	t.Helper()
	_, body, ok := strings.Cut(table, "\n\n")
	require.True(t, ok, table)
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	heads := regexp.MustCompile(`\[\d+\] \S+`).FindAllString(lines[0], -1)
	cols := make([]map[string]string, len(heads))
	for k := range cols {
		cols[k] = map[string]string{}
	}
	cell := regexp.MustCompile(`\S+( / \S+)*`)
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		// The label ends where two spaces start the figures.
		i := strings.Index(l, "  ")
		require.Positive(t, i, l)
		label, rest := l[:i], strings.TrimSpace(l[i:])
		cells := cell.FindAllString(rest, -1)
		require.Len(t, cells, len(heads), l)
		for k, c := range cells {
			cols[k][label] = c
		}
	}
	return cols
}

// TestComparePlot: -compare -plot draws one chart of every policy.
func TestComparePlot(t *testing.T) {
	tr := busyTrace(t, 80)
	for _, ext := range []string{".png", ".svg"} {
		p := filepath.Join(t.TempDir(), "cmp"+ext)
		code, _, stderr := runCLI(t, "-trace", tr, "-nodes", "4", "-gpus-per-node", "8",
			"-compare", strings.Join(comparePolicies, ","), "-plot", p)
		require.Equal(t, 0, code, stderr)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Greater(t, len(data), 1000)
		if ext == ".svg" {
			for _, name := range []string{"fcfs", "easy", "conservative", "fairshare", "mean wait", "p95 wait"} {
				require.Contains(t, string(data), name)
			}
		}
	}
}

// TestClusterAndTeamsFiles: a cluster file of two 8-GPU nodes runs as
// -nodes 2 -gpus-per-node 8 does, and a teams file sets the shares each
// team is entitled to.
func TestClusterAndTeamsFiles(t *testing.T) {
	code, out, stderr := runCLI(t, "-trace", "testdata/small.csv", "-cluster", "testdata/cluster.json", "-teams", "testdata/teams.json", "-json")
	require.Equal(t, 0, code, stderr)
	var c map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &c))
	code, out, stderr = runCLI(t, "-trace", "testdata/small.csv", "-nodes", "2", "-gpus-per-node", "8", "-json")
	require.Equal(t, 0, code, stderr)
	var n map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &n))
	for _, k := range []string{"jobs", "gpus", "makespan", "utilization", "meanWait", "p95Wait", "meanBoundedSlowdown"} {
		require.Equal(t, n[k], c[k], k)
	}
	teams := c["teams"].([]any)
	require.InDelta(t, 0.75, teams[0].(map[string]any)["entitled"], 1e-12)
	require.InDelta(t, 0.25, teams[1].(map[string]any)["entitled"], 1e-12)
	require.InDelta(t, 0.5, n["teams"].([]any)[0].(map[string]any)["entitled"], 1e-12)
	require.NotEqual(t, n["jain"], c["jain"])
}

// TestFileErrors: bad or missing files and flags that do not go
// together exit 2 with one line that names the file and the field.
func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	badPolicy := write("bad.policy.json", `{"backfill": "eager"}`)
	badCluster := write("bad-cluster.json", `{"nodes": [{"name": "n0", "gpus": 0}]}`)
	badTeams := write("bad-teams.json", `[{"name": "a", "share": -1}]`)
	tr := []string{"-trace", "testdata/small.csv", "-gpus", "16"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(tr, "-config", badPolicy), badPolicy + `: config: backfill: unknown value "eager"`},
		{append(tr, "-compare", "testdata/easy.policy.json,"+badPolicy), badPolicy + ": config: backfill"},
		{append(tr, "-config", filepath.Join(dir, "none.json")), "no such file"},
		{[]string{"-trace", "testdata/small.csv", "-cluster", badCluster}, badCluster + `: cluster: nodes[0] "n0": gpus must be in 1..64, got 0`},
		{append(tr, "-teams", badTeams), badTeams + `: teams: teams[0] "a": share must be >= 0, got -1`},
		{append(tr, "-config", "testdata/easy.policy.json", "-backfill", "none"), "-backfill and -backfill-order go without -config and -compare"},
		{append(tr, "-compare", "testdata/easy.policy.json", "-backfill-order", "shortest"), "-backfill and -backfill-order go without -config and -compare"},
		{append(tr, "-config", "testdata/easy.policy.json", "-compare", "testdata/easy.policy.json"), "either -config or -compare"},
		{append(tr, "-cluster", "testdata/cluster.json"), "either -cluster or -gpus or -nodes"},
		{append(tr, "-compare", " , "), "-compare needs policy files"},
	} {
		code, out, stderr := runCLI(t, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Empty(t, out)
		require.Contains(t, stderr, tc.want, "%v", tc.args)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	}
}
