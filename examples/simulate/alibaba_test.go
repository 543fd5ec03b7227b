package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const alibabaPods = "testdata/alibaba/openb_pod_list_default.csv"

// TestAlibabaReplay: the pod list replays on the node list beside it.
// Pod a holds 2 of n0's 8 GPUs and all its CPU for 100 s; pod b, of 8
// GPUs, waits for it and strands n0's other 6 GPUs meanwhile: 600
// GPU-seconds. The pod that shares a GPU, the pod of no GPU and the node
// of no GPU are left out and counted.
func TestAlibabaReplay(t *testing.T) {
	code, out, stderr := runCLI(t, "-trace", alibabaPods, "-format", "alibaba", "-json")
	require.Equal(t, 0, code, stderr)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.EqualValues(t, 2, m["jobs"])
	require.EqualValues(t, 8, m["gpus"])
	require.Equal(t, map[string]any{"fractional-gpu": 1.0, "cpu-only": 1.0}, m["skippedBy"])
	require.InDelta(t, 100, m["maxWait"], 1e-9)
	require.InDelta(t, 600.0/3600, m["strandedGPUHours"], 1e-12)

	code, out, stderr = runCLI(t, "-trace", alibabaPods, "-format", "alibaba")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "GPU-hours stranded by CPU or memory       0.2 (")
	require.Contains(t, out, "left out                                  cpu-only 1, fractional-gpu 1, nodes of no GPU 1")
	require.Contains(t, out, "at the longest queue                      hour 0: GPUs 0.250, CPU 1.000, memory 0.016 held; 6 of 8 GPUs stranded; 1 pending, reserved 1\n")

	// Two copies, the second arriving a second after the first's span.
	code, out, stderr = runCLI(t, "-trace", alibabaPods, "-format", "alibaba", "-alibaba-copies", "2", "-json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.EqualValues(t, 4, m["jobs"])
	require.InDelta(t, 2*600.0/3600, m["strandedGPUHours"], 1e-12)

	// Pods that never leave: a holds n0's CPU to the end, b never starts.
	code, out, stderr = runCLI(t, "-trace", alibabaPods, "-format", "alibaba", "-alibaba-lifetime", "forever", "-json")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.EqualValues(t, 2, m["jobs"])

	// A comparison on it adds the stranded GPU-hours of each policy.
	code, out, stderr = runCLI(t, "-trace", alibabaPods, "-format", "alibaba", "-compare", "testdata/easy.policy.json,testdata/fcfs.policy.json")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `GPU-hours stranded by CPU or memory +0\.2 +0\.2\n`, out)

	p := filepath.Join(t.TempDir(), "ali.svg")
	code, _, stderr = runCLI(t, "-trace", alibabaPods, "-format", "alibaba", "-plot", p)
	require.Equal(t, 0, code, stderr)
	svg, err := os.ReadFile(p)
	require.NoError(t, err)
	for _, s := range []string{"Allocation", "stranded", "Pending jobs by reason", "reserved", "CPU", "memory"} {
		require.Contains(t, string(svg), s)
	}
}

// TestAlibabaErrors: a bad node list or pod list, or flags that do not go
// with -format alibaba, exit 2 with one line naming the file and line.
func TestAlibabaErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "nodes.csv")
	require.NoError(t, os.WriteFile(bad, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,x,T4\n"), 0o644))
	badPods := filepath.Join(dir, "pods.csv")
	require.NoError(t, os.WriteFile(badPods, []byte("name,cpu_milli\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-trace", alibabaPods, "-format", "alibaba", "-alibaba-nodes", bad}, bad + `: alibaba: line 2: column gpu "x": not a number`},
		{[]string{"-trace", badPods, "-format", "alibaba", "-alibaba-nodes", "testdata/alibaba/openb_node_list_gpu_node.csv"}, badPods + ": alibaba: line 1: header has no memory_mib column"},
		{[]string{"-trace", badPods, "-format", "alibaba"}, "openb_node_list_gpu_node.csv: no such file"},
		{[]string{"-trace", alibabaPods, "-format", "alibaba", "-gpus", "8"}, "-format alibaba runs on the trace's node list"},
		{[]string{"-trace", alibabaPods, "-alibaba-lifetime", "forever"}, "go with -format alibaba"},
		{[]string{"-trace", alibabaPods, "-format", "alibaba", "-alibaba-lifetime", "always"}, "-alibaba-lifetime must be trace or forever"},
		{[]string{"-trace", alibabaPods, "-format", "alibaba", "-alibaba-copies", "0"}, "-alibaba-copies must be in 1..1000, got 0"},
		{[]string{"-trace", alibabaPods, "-alibaba-copies", "2"}, "go with -format alibaba"},
	} {
		code, out, stderr := runCLI(t, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Empty(t, out)
		require.Contains(t, stderr, tc.want, "%v", tc.args)
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	}
}
