package scheduler

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// TestDecodeCluster: a cluster file reads as the cluster of a snapshot
// with the same text does.
func TestDecodeCluster(t *testing.T) {
	text := `{"levels": ["spine", "leaf"], "nodes": [
	  {"name": "n0", "gpus": 8, "gpuType": "H100", "domains": {"spine": "s0", "leaf": "l0"},
	   "cpuMillis": 96000, "memoryMiB": 1048576},
	  {"name": "n1", "gpus": 4, "domains": {"spine": "s0", "leaf": "l1"}, "state": "draining", "unhealthyGPUs": [3]}]}`
	c, err := DecodeCluster(strings.NewReader(text))
	require.NoError(t, err)
	snap, err := DecodeSnapshot(strings.NewReader(`{"now": "2026-12-02T00:00:00Z", "cluster": ` + text + `}`))
	require.NoError(t, err)
	require.Equal(t, snap.Cluster, c)
	require.Equal(t, 96000, c.Nodes[0].CPUMillis)
	require.Equal(t, 1048576, c.Nodes[0].MemoryMiB)
	require.Equal(t, topology.Draining, c.Nodes[1].State)
}

// TestDecodeClusterErrors: each bad file is one error line that names
// the field.
func TestDecodeClusterErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"nodes": [{"name": "n0", "gpus": "8"}]}`, `cluster: nodes[0] "n0": gpus: want an integer, got string`},
		{`{"nodes": [{"name": "n0", "gpus": 0}]}`, `cluster: nodes[0] "n0": gpus must be in 1..64, got 0`},
		{`{"nodes": [{"name": "n0", "gpus": 8}, {"name": "n0", "gpus": 8}]}`, `cluster: nodes[1] "n0": duplicate node name (also nodes[0])`},
		{`{"nodes": [{"name": "n0", "gpus": 8, "cpuMillis": -1}]}`, `cluster: nodes[0] "n0": cpuMillis must be >= 0, got -1`},
		{`{"levels": ["rack"], "nodes": [{"name": "n0", "gpus": 8}]}`, `cluster: nodes[0] "n0": domains: no domain for level "rack"`},
		{`{"nodes": [{"name": "n0", "gpus": 8, "state": "gone"}]}`, `cluster: nodes[0] "n0": state: unknown`},
		{`{"nodes": [], "x": 1}`, `cluster: json: unknown field "x"`},
		{`{"nodes": null}`, `cluster: nodes`},
		{`[]`, `cluster: json: want an object, got array`},
		{`{"nodes": []} {}`, `cluster: json: trailing data`},
		{`{"nodes": [`, `cluster: json:`},
	} {
		_, err := DecodeCluster(strings.NewReader(tc.in))
		require.Error(t, err, tc.in)
		require.Contains(t, err.Error(), tc.want, tc.in)
		require.NotContains(t, err.Error(), "\n")
	}
}

// TestDecodeTeams: a teams file reads as the teams of a snapshot with the
// same text do, and is checked as they are.
func TestDecodeTeams(t *testing.T) {
	text := `[{"name": "a", "share": 40, "usage": 86400, "quota": {"gpus": 100, "borrowLimit": 20}},
	  {"name": "b", "share": 60, "parent": "a"}]`
	ts, err := DecodeTeams(strings.NewReader(text))
	require.NoError(t, err)
	snap, err := DecodeSnapshot(strings.NewReader(`{"now": "2026-12-02T00:00:00Z", "teams": ` + text + `}`))
	require.NoError(t, err)
	require.Equal(t, snap.Teams, ts)
	for _, tc := range []struct{ in, want string }{
		{`[{"name": "a", "share": -1}]`, `teams: teams[0] "a": share must be >= 0, got -1`},
		{`[{"name": "a", "share": "1"}]`, `teams: teams[0] "a": share: want a number, got string`},
		{`[{"name": "a"}, {"name": "a"}]`, `teams: teams[1] "a": duplicate team name (also teams[0])`},
		{`[{"name": "a", "parent": "z"}]`, `teams: teams[0] "a": parent: unknown team "z"`},
		{`[{"name": "a", "quota": {"gpus": -2}}]`, `teams: teams[0] "a": quota.gpus must be >= 0, got -2`},
		{`[{"name": "a", "x": 1}]`, `teams: teams[0] "a": unknown field "x"`},
		{`{}`, `teams: json: want an array, got object`},
	} {
		_, err := DecodeTeams(strings.NewReader(tc.in))
		require.Error(t, err, tc.in)
		require.Contains(t, err.Error(), tc.want, tc.in)
	}
}

// FuzzDecodeClusterAllocs: decoding any cluster or teams file allocates
// within the bounds of snapshots, valid or not.
func FuzzDecodeClusterAllocs(f *testing.F) {
	for _, s := range []string{`{"nodes":[` + strings.Repeat(`{},`, 500) + `{}]}`,
		`{"levels":[` + strings.Repeat(`"a",`, 500) + `"a"]}`, `[` + strings.Repeat(`{},`, 500) + `{}]`,
		`{"nodes":[{"name":"n0","gpus":8,"unhealthyGPUs":[` + strings.Repeat(`0,`, 500) + `0]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeAllocs(t, data, func(r io.Reader) { _, _ = DecodeCluster(r) })
		checkDecodeAllocs(t, data, func(r io.Reader) { _, _ = DecodeTeams(r) })
	})
}
