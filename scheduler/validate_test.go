package scheduler

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// snapJSON is a valid snapshot document around the given job objects: two
// 8-GPU nodes in one spine, two leaves.
func snapJSON(jobs ...string) string {
	return snapWith(`"teams":[{"name":"t","share":1}]`, jobs...)
}

// snapWith is snapJSON with other top-level members (teams) spliced in.
func snapWith(extra string, jobs ...string) string {
	s := `{"now":"2026-12-02T00:00:00Z","cluster":{"levels":["spine","leaf"],"nodes":[` +
		`{"name":"n0","gpus":8,"domains":{"spine":"s0","leaf":"l0"}},` +
		`{"name":"n1","gpus":8,"domains":{"spine":"s0","leaf":"l1"}}]}`
	if extra != "" {
		s += "," + extra
	}
	return s + `,"jobs":[` + strings.Join(jobs, ",") + `]}`
}

// baseSnap is a valid Go snapshot: two 8-GPU nodes and one pending job.
func baseSnap() *Snapshot {
	return &Snapshot{
		Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
		Cluster: topology.Cluster{Levels: []string{"spine"}, Nodes: []topology.Node{
			{Name: "n0", GPUs: 8, Domains: map[string]string{"spine": "s0"}},
			{Name: "n1", GPUs: 8, Domains: map[string]string{"spine": "s0"}},
		}},
		Teams: []Team{{Name: "t", Share: 1}},
		Jobs:  []Job{{ID: "A", Team: "t", Tier: P3, Members: 1, GPUsPerMember: 1}},
	}
}

func TestValidationErrors(t *testing.T) {
	running := func(alloc string) string {
		return `{"id":"A","members":1,"gpusPerMember":2,"state":"running","allocation":` + alloc + `}`
	}
	tests := []struct {
		name string
		json string           // decoded with DecodeSnapshot, when set
		snap func() *Snapshot // else checked with Validate
		// field is the exact Field of the *ValidationError; msg a part of
		// its message.
		field, msg string
	}{
		{name: "bad JSON", json: `{"now": }`, field: "json", msg: "line 1, column 9, offset 8"},
		{name: "bad JSON on a later line", json: "{\n  \"now\": \"x\",\n  ]", field: "json", msg: "line 3, column 3"},
		{name: "empty input", json: "", field: "json", msg: "empty input"},
		{name: "truncated", json: `{"now": "2026-12-02T00:00:00Z"`, field: "json", msg: "unexpected end of input"},
		{name: "not an object", json: `[1]`, field: "json", msg: "want an object, got array"},
		{name: "trailing garbage", json: snapJSON() + ` x`, field: "json", msg: "trailing data after the object (line 1, column"},
		{name: "trailing object", json: snapJSON() + `{}`, field: "json", msg: "trailing data"},
		// Two IDs that differ only in bytes that are not UTF-8 would both
		// decode to "x\uFFFD" and be reported as one ID repeated.
		{name: "job IDs not UTF-8", json: snapJSON(`{"id":"x`+"\xfe"+`","members":1,"gpusPerMember":1}`, `{"id":"x`+"\xff"+`","members":1,"gpusPerMember":1}`),
			field: "json", msg: "invalid UTF-8 (line 1, column 248, offset 247)"},
		{name: "usage beyond the float range", json: snapWith(`"teams":[{"name":"t","share":1,"usage":-1e400}]`), field: `teams[0] "t": usage`, msg: "want a number within ±1.7976931348623157e+308, got -1e400"},
		{name: "GPUs written with an exponent", json: `{"cluster":{"nodes":[{"name":"n0","gpus":1e400}]}}`, field: `cluster: nodes[0] "n0": gpus`, msg: "want an integer, got number 1e400"},
		{name: "GPUs beyond the integer range", json: `{"cluster":{"nodes":[{"name":"n0","gpus":99999999999999999999}]}}`, field: `cluster: nodes[0] "n0": gpus`,
			msg: fmt.Sprintf("want an integer from %d to %d, got 99999999999999999999", math.MinInt, math.MaxInt)},
		{name: "members below the integer range", json: snapJSON(`{"id":"A","members":-99999999999999999999,"gpusPerMember":1}`), field: `jobs[0] "A": members`,
			msg: fmt.Sprintf("want an integer from %d to %d, got -99999999999999999999", math.MinInt, math.MaxInt)},
		{name: "members with a fraction", json: snapJSON(`{"id":"A","members":1.5,"gpusPerMember":1}`), field: `jobs[0] "A": members`, msg: "want an integer, got number 1.5"},
		// Escaped, the same two IDs would decode to "\uFFFD" too.
		{name: "job IDs with lone surrogates", json: snapJSON(`{"id":"\ud800","members":1,"gpusPerMember":1}`, `{"id":"\udc00","members":1,"gpusPerMember":1}`),
			field: "json", msg: `lone surrogate \ud800 names no character (line 1, column 247, offset 246)`},
		{name: "a surrogate written in UTF-8", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n` + "\xed\xa0\x80" + `","gpus":8}]}}`,
			field: "json", msg: "invalid UTF-8 (line 1, column 61, offset 60)"},
		{name: "unknown top-level field", json: `{"foo": 1}`, field: "json", msg: `unknown field "foo"`},
		{name: "top-level field in the wrong case", json: `{"Now": "2026-12-02T00:00:00Z"}`, field: "json", msg: `unknown field "Now"`},
		{name: "unknown cluster field", json: `{"cluster": {"nodes": [], "racks": []}}`, field: "cluster", msg: `unknown field "racks"`},
		{name: "unknown node field", json: `{"cluster": {"nodes": [{"name": "n0", "gpu": 8}]}}`, field: `cluster: nodes[0] "n0"`, msg: `unknown field "gpu"`},
		{name: "unknown job field", json: snapJSON(`{"id":"A","gpusPerMember":1,"bogus":true}`), field: `jobs[0] "A"`, msg: `unknown field "bogus"`},
		{name: "job field in the wrong case", json: snapJSON(`{"id":"A","gpusPerMember":1,"Tier":0}`), field: `jobs[0] "A"`, msg: `unknown field "Tier"`},
		{name: "unknown topology field", json: snapJSON(`{"id":"A","gpusPerMember":1,"topology":{"require":"spine"}}`), field: `jobs[0] "A": topology`, msg: `unknown field "require"`},
		{name: "unknown allocation field", json: snapJSON(`{"id":"A","gpusPerMember":1,"state":"running","allocation":[{"node":"n0","gpus":[0]},{"node":"n0","gpu":[1]}]}`), field: `jobs[0] "A": allocation[1]`, msg: `unknown field "gpu"`},
		{name: "duplicate top-level key", json: `{"now":"2026-12-02T00:00:00Z","now":"2026-12-03T00:00:00Z","cluster":{"nodes":[]}}`, field: "json", msg: `duplicate field "now"`},
		{name: "duplicate cluster key", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8}],"nodes":[{"name":"n1","gpus":4}]}}`, field: "cluster", msg: `duplicate field "nodes"`},
		{name: "duplicate job key", json: snapJSON(`{"id":"A","gpusPerMember":1,"id":"B"}`), field: `jobs[0] "B"`, msg: `duplicate field "id"`},
		{name: "duplicate domain", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"levels":["rack"],"nodes":[{"name":"n0","gpus":8,"domains":{"rack":"r0","rack":"r1"}}]}}`, field: `cluster: nodes[0] "n0": domains`, msg: `duplicate field "rack"`},
		{name: "duplicate allocation key", json: snapJSON(`{"id":"A","gpusPerMember":1,"state":"running","allocation":[{"node":"n0","gpus":[0],"node":"n1"}]}`), field: `jobs[0] "A": allocation[0]`, msg: `duplicate field "node"`},
		{name: "empty allocation entry", json: snapJSON(running(`[{"node":"n0","gpus":[]},{"node":"n1","gpus":[0,1]}]`)), field: `jobs[0] "A": allocation[0].gpus`, msg: "holds no GPUs"},
		{name: "unknown quota field", json: snapWith(`"teams":[{"name":"t","quota":{"gpu":1}}]`), field: `teams[0] "t": quota`, msg: `unknown field "gpu"`},
		{name: "wrong type", json: snapJSON(`{"id":"A","members":"two","gpusPerMember":1}`), field: `jobs[0] "A": members`, msg: "want an integer, got string"},
		{name: "fractional count", json: snapJSON(`{"id":"A","gpusPerMember":1.5}`), field: `jobs[0] "A": gpusPerMember`, msg: "want an integer, got number 1.5"},
		{name: "wrong type in an allocation", json: snapJSON(`{"id":"A","gpusPerMember":1,"allocation":[{"node":"n0","gpus":["0"]}]}`), field: `jobs[0] "A": allocation[0].gpus`, msg: "want an integer"},
		{name: "wrong type in a later allocation entry", json: snapJSON(`{"id":"A","members":2,"gpusPerMember":1,"state":"running","allocation":[{"node":"n0","gpus":[0]},{"node":"n0","gpus":[1.5]}]}`), field: `jobs[0] "A": allocation[1].gpus`, msg: "want an integer, got number 1.5"},
		{name: "wrong type in a later node", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8},{"name":"n1","gpus":8,"unhealthyGPUs":["x"]}]}}`, field: `cluster: nodes[1] "n1": unhealthyGPUs`, msg: "want an integer"},
		{name: "wrong type without an id", json: snapJSON(`{"id":7}`), field: `jobs[0]: id`, msg: "want a string, got number"},
		{name: "zero members", json: snapJSON(`{"id":"A","members":0,"gpusPerMember":1}`), field: `jobs[0] "A": members`, msg: "must be >= 1, got 0"},
		{name: "negative members", json: snapJSON(`{"id":"A","members":-3,"gpusPerMember":1}`), field: `jobs[0] "A": members`, msg: "must be >= 1, got -3"},
		{name: "zero gpusPerMember", json: snapJSON(`{"id":"A"}`, `{"id":"C","gpusPerMember":0}`), field: `jobs[0] "A": gpusPerMember`, msg: "must be >= 1, got 0"},
		{name: "negative gpusPerMember", json: snapJSON(`{"id":"A","gpusPerMember":1}`, `{"id":"C","gpusPerMember":-1}`), field: `jobs[1] "C": gpusPerMember`, msg: "must be >= 1, got -1"},
		{name: "negative timeLimit", json: snapJSON(`{"id":"A","gpusPerMember":1,"timeLimit":"-1h"}`), field: `jobs[0] "A": timeLimit`, msg: "must be >= 0, got -1h"},
		{name: "bad timeLimit", json: snapJSON(`{"id":"X","gpusPerMember":1,"timeLimit":"12x"}`), field: `jobs[0] "X": timeLimit`, msg: `bad duration "12x"`},
		{name: "negative checkpointGrace", json: snapJSON(`{"id":"A","gpusPerMember":1,"checkpointGrace":"-5m"}`), field: `jobs[0] "A": checkpointGrace`, msg: "must be >= 0"},
		{name: "duplicate node names", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8},{"name":"n0","gpus":4}]}}`, field: "cluster", msg: `nodes[1] "n0": duplicate node name`},
		{name: "duplicate job ids", json: snapJSON(`{"id":"A","gpusPerMember":1}`, `{"id":"A","gpusPerMember":2}`), field: `jobs[1] "A"`, msg: "duplicate job id"},
		{name: "duplicate job ids out of order", json: snapJSON(`{"id":"B","gpusPerMember":1}`, `{"id":"A","gpusPerMember":1}`, `{"id":"B","gpusPerMember":2}`), field: `jobs[2] "B"`, msg: "duplicate job id (also jobs[0])"},
		{name: "duplicate job ids in order", json: snapJSON(`{"id":"A","gpusPerMember":1}`, `{"id":"B","gpusPerMember":1}`, `{"id":"B","gpusPerMember":2}`), field: `jobs[2] "B"`, msg: "duplicate job id (also jobs[1])"},
		{name: "allocation on an unknown node", json: snapJSON(running(`[{"node":"n9","gpus":[0,1]}]`)), field: `jobs[0] "A": allocation[0].node`, msg: `unknown node "n9"`},
		{name: "GPU index out of range", json: snapJSON(running(`[{"node":"n0","gpus":[7,8]}]`)), field: `jobs[0] "A": allocation[0].gpus`, msg: "GPU index 8 out of range 0..7"},
		{name: "negative GPU index", json: snapJSON(running(`[{"node":"n0","gpus":[-1,0]}]`)), field: `jobs[0] "A": allocation[0].gpus`, msg: "GPU index -1 out of range"},
		{name: "GPU claimed by two jobs", json: snapJSON(running(`[{"node":"n0","gpus":[0,1]}]`),
			`{"id":"B","gpusPerMember":2,"state":"evicting","allocation":[{"node":"n0","gpus":[1,2]}]}`),
			field: `jobs[1] "B": allocation[0].gpus`, msg: `GPU 1 of node "n0" is claimed twice`},
		{name: "GPU claimed twice within one job", json: snapJSON(`{"id":"A","members":2,"gpusPerMember":2,"state":"running","allocation":[{"node":"n0","gpus":[0,1]},{"node":"n0","gpus":[1,2]}]}`),
			field: `jobs[0] "A": allocation[1].gpus`, msg: `GPU 1 of node "n0" is claimed twice by this job`},
		{name: "allocation smaller than the gang", json: snapJSON(`{"id":"A","members":2,"gpusPerMember":2,"state":"running","allocation":[{"node":"n0","gpus":[0,1]}]}`),
			field: `jobs[0] "A": allocation`, msg: "holds 2 GPUs, want members × gpusPerMember = 4"},
		{name: "allocation not whole members", json: snapJSON(`{"id":"A","members":2,"gpusPerMember":2,"state":"running","allocation":[{"node":"n0","gpus":[0]},{"node":"n1","gpus":[0,1,2]}]}`),
			field: `jobs[0] "A": allocation[0].gpus`, msg: "not a whole number of members"},
		{name: "running job without allocation", json: snapJSON(`{"id":"A","gpusPerMember":1,"state":"running"}`), field: `jobs[0] "A": allocation`, msg: "must be given for a running job"},
		{name: "evicting job without allocation", json: snapJSON(`{"id":"A","gpusPerMember":1,"state":"evicting"}`), field: `jobs[0] "A": allocation`, msg: "must be given for an evicting job"},
		{name: "pending job with allocation", json: snapJSON(`{"id":"A","gpusPerMember":1,"allocation":[{"node":"n0","gpus":[0]}]}`), field: `jobs[0] "A": allocation`, msg: "a pending job holds no allocation"},
		{name: "unknown team parent", json: snapWith(`"teams":[{"name":"t","share":1,"parent":"org"}]`), field: `teams[0] "t": parent`, msg: `unknown team "org"`},
		{name: "team cycle", json: snapWith(`"teams":[{"name":"a","parent":"b"},{"name":"b","parent":"a"}]`), field: `teams[0] "a": parent`, msg: "cycle"},
		{name: "team is its own parent", json: snapWith(`"teams":[{"name":"a","parent":"a"}]`), field: `teams[0] "a": parent`, msg: "cycle"},
		{name: "negative share", json: snapWith(`"teams":[{"name":"a","share":-40}]`), field: `teams[0] "a": share`, msg: "must be >= 0, got -40"},
		{name: "negative quota", json: snapWith(`"teams":[{"name":"a","share":1,"quota":{"gpus":-1}}]`), field: `teams[0] "a": quota.gpus`, msg: "must be >= 0"},
		{name: "bad job state", json: snapJSON(`{"id":"A","gpusPerMember":1,"state":"done"}`), field: `jobs[0] "A": state`, msg: `unknown value "done" (want "pending", "running" or "evicting")`},
		{name: "empty job state", json: snapJSON(`{"id":"A","gpusPerMember":1,"state":""}`), field: `jobs[0] "A": state`, msg: `unknown value ""`},
		{name: "bad kind", json: snapJSON(`{"id":"A","gpusPerMember":1,"kind":"batch"}`), field: `jobs[0] "A": kind`, msg: `unknown value "batch" (want "training" or "inference")`},
		{name: "bad placement", json: snapJSON(`{"id":"A","gpusPerMember":1,"placement":"Pack"}`), field: `jobs[0] "A": placement`, msg: `unknown value "Pack" (want "pack" or "spread")`},
		{name: "tier -1", json: snapJSON(`{"id":"A","gpusPerMember":1,"tier":-1}`), field: `jobs[0] "A": tier`, msg: "must be in 0..3, got -1"},
		{name: "tier 4", json: snapJSON(`{"id":"A","gpusPerMember":1,"tier":4}`), field: `jobs[0] "A": tier`, msg: "must be in 0..3, got 4"},
		{name: "unknown required level", json: snapJSON(`{"id":"A","gpusPerMember":1,"topology":{"required":"rack"}}`), field: `jobs[0] "A": topology.required`, msg: `unknown level "rack"`},
		{name: "unknown preferred level", json: snapJSON(`{"id":"A","gpusPerMember":1,"topology":{"preferred":"nvlink"}}`), field: `jobs[0] "A": topology.preferred`, msg: `unknown level "nvlink"`},
		{name: "preferred level outside required", json: snapJSON(`{"id":"A","gpusPerMember":1,"topology":{"required":"leaf","preferred":"spine"}}`), field: `jobs[0] "A": topology.preferred`, msg: `outside required level "leaf"`},
		{name: "unknown spread level", json: snapJSON(`{"id":"A","gpusPerMember":1,"spreadLevel":"zone"}`), field: `jobs[0] "A": spreadLevel`, msg: `unknown level "zone"`},
		{name: "unknown node state", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"state":"up"}]}}`, field: `cluster: nodes[0] "n0": state`, msg: `unknown value "up" (want "ready", "draining" or "down")`},
		{name: "unhealthy GPU out of range", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"unhealthyGPUs":[8]}]}}`, field: "cluster", msg: `nodes[0] "n0": unhealthyGPUs[0]: GPU index 8 out of range 0..7`},
		{name: "node without GPUs", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0"}]}}`, field: "cluster", msg: `nodes[0] "n0": gpus must be in 1..64, got 0`},
		{name: "node missing a domain", json: `{"now":"2026-12-02T00:00:00Z","cluster":{"levels":["spine"],"nodes":[{"name":"n0","gpus":8}]}}`, field: "cluster", msg: `nodes[0] "n0": domains: no domain for level "spine"`},
		{name: "missing now", json: `{"cluster":{"nodes":[{"name":"n0","gpus":8}]}}`, field: "now", msg: "missing"},
		{name: "bad RFC 3339 now", json: `{"now":"2026-12-02 00:00:00"}`, field: "now", msg: `bad time "2026-12-02 00:00:00"`},
		{name: "comma before the fraction", json: `{"now":"2026-12-02T00:00:00,5Z"}`, field: "now", msg: `bad time`},
		{name: "offset minutes past 59", json: `{"now":"2026-12-02T00:00:00+23:60"}`, field: "now", msg: `bad time`},
		{name: "leap second not at a minute's end", json: `{"now":"2026-12-02T00:00:60Z"}`, field: "now", msg: `bad time`},
		{name: "leap second not at a UTC hour's end", json: `{"now":"2016-12-31T23:59:60-00:30"}`, field: "now", msg: `bad time`},
		{name: "zero time", json: `{"now":"0001-01-01T00:00:00Z"}`, field: "now", msg: `is the zero time, which means unset`},
		{name: "bad RFC 3339 submitted", json: snapJSON(`{"id":"A","gpusPerMember":1,"submitted":"yesterday"}`), field: `jobs[0] "A": submitted`, msg: `bad time "yesterday"`},
		{name: "bad RFC 3339 started", json: snapJSON(`{"id":"A","gpusPerMember":1,"started":"2026-13-01T00:00:00Z"}`), field: `jobs[0] "A": started`, msg: "bad time"},
		{name: "empty job id", json: snapJSON(`{"gpusPerMember":1}`), field: `jobs[0]`, msg: "id is empty"},

		{name: "Go: missing now", snap: func() *Snapshot { s := baseSnap(); s.Now = time.Time{}; return s }, field: "now", msg: "missing"},
		{name: "Go: zero members", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].Members = 0; return s }, field: `jobs[0] "A": members`, msg: "must be >= 1, got 0"},
		{name: "Go: too many members", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].Members = 1 << 21; return s }, field: `jobs[0] "A": members`, msg: "must be <="},
		{name: "Go: gpusPerMember above any node", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].GPUsPerMember = 65; return s }, field: `jobs[0] "A": gpusPerMember`, msg: "must be <= 64"},
		{name: "Go: negative timeLimit", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].TimeLimit = -time.Second; return s }, field: `jobs[0] "A": timeLimit`, msg: "must be >= 0, got -1s"},
		{name: "Go: bad state", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].State = 9; return s }, field: `jobs[0] "A": state`, msg: "unknown state 9"},
		{name: "Go: bad kind", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].Kind = 7; return s }, field: `jobs[0] "A": kind`, msg: "unknown kind 7"},
		{name: "Go: bad placement", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].Placement = 5; return s }, field: `jobs[0] "A": placement`, msg: "unknown placement 5"},
		{name: "Go: tier -1", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].Tier = TierN(-1); return s }, field: `jobs[0] "A": tier`, msg: "got -1"},
		{name: "Go: tier 4", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].Tier = TierN(4); return s }, field: `jobs[0] "A": tier`, msg: "got 4"},
		{name: "Go: bad node state", snap: func() *Snapshot { s := baseSnap(); s.Cluster.Nodes[1].State = 3; return s }, field: "cluster", msg: `nodes[1] "n1": state: unknown node state 3`},
		{name: "Go: duplicate node names", snap: func() *Snapshot { s := baseSnap(); s.Cluster.Nodes[1].Name = "n0"; return s }, field: "cluster", msg: `nodes[1] "n0": duplicate node name`},
		{name: "Go: NaN share", snap: func() *Snapshot { s := baseSnap(); s.Teams[0].Share = math.NaN(); return s }, field: `teams[0] "t": share`, msg: "must be >= 0, got NaN"},
		{name: "Go: infinite usage", snap: func() *Snapshot { s := baseSnap(); s.Teams[0].Usage = math.Inf(1); return s }, field: `teams[0] "t": usage`, msg: "must be >= 0"},
		{name: "Go: duplicate team", snap: func() *Snapshot { s := baseSnap(); s.Teams = append(s.Teams, Team{Name: "t"}); return s }, field: `teams[1] "t"`, msg: "duplicate team name"},
		{name: "Go: team cycle through three", snap: func() *Snapshot {
			s := baseSnap()
			s.Teams = []Team{{Name: "a", Parent: "c"}, {Name: "b", Parent: "a"}, {Name: "c", Parent: "b"}}
			return s
		}, field: `teams[0] "a": parent`, msg: "cycle"},
		{name: "Go: running job without allocation", snap: func() *Snapshot { s := baseSnap(); s.Jobs[0].State = Running; return s }, field: `jobs[0] "A": allocation`, msg: "must be given for a running job"},
		{name: "Go: GPU claimed twice within one job", snap: func() *Snapshot {
			s := baseSnap()
			s.Jobs[0].State, s.Jobs[0].Members = Running, 2
			s.Jobs[0].Allocation = topology.Allocation{{Node: "n0", GPUs: []int{3, 3}}}
			return s
		}, field: `jobs[0] "A": allocation[0].gpus`, msg: `GPU 3 of node "n0" is claimed twice`},
		// Nodes listed out of name order, a 4-GPU node: Validate finds
		// nodes by name without an index, Step with one.
		{name: "Go: GPU out of range, nodes unsorted", snap: func() *Snapshot {
			s := baseSnap()
			s.Cluster.Nodes[0].Name, s.Cluster.Nodes[1].GPUs = "n2", 4
			s.Jobs[0].State, s.Jobs[0].Members = Running, 2
			s.Jobs[0].Allocation = topology.Allocation{{Node: "n2", GPUs: []int{7}}, {Node: "n1", GPUs: []int{4}}}
			return s
		}, field: `jobs[0] "A": allocation[1].gpus`, msg: `GPU index 4 out of range 0..3 of node "n1"`},
		{name: "Go: allocation on a cluster without nodes", snap: func() *Snapshot {
			s := baseSnap()
			s.Cluster.Nodes = nil
			s.Jobs[0].State = Running
			s.Jobs[0].Allocation = topology.Allocation{{Node: "n0", GPUs: []int{0}}}
			return s
		}, field: `jobs[0] "A": allocation[0].node`, msg: `unknown node "n0"`},
		{name: "Go: unknown node, nodes unsorted", snap: func() *Snapshot {
			s := baseSnap()
			s.Cluster.Nodes[0].Name = "n2"
			s.Jobs[0].State = Running
			s.Jobs[0].Allocation = topology.Allocation{{Node: "n0", GPUs: []int{0}}}
			return s
		}, field: `jobs[0] "A": allocation[0].node`, msg: `unknown node "n0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.snap != nil {
				err = Validate(tt.snap())
				_, stepErr := New(Config{}).Step(tt.snap())
				require.Equal(t, err, stepErr, "Step must report what Validate reports")
			} else {
				var s *Snapshot
				s, err = DecodeSnapshot(strings.NewReader(tt.json))
				require.Nil(t, s)
			}
			require.Error(t, err)
			var ve *ValidationError
			require.True(t, errors.As(err, &ve), "want a *ValidationError, got %T: %v", err, err)
			require.Equal(t, tt.field, ve.Field, "message: %s", err)
			require.Contains(t, ve.Msg, tt.msg)
			sep := ": "
			if strings.HasPrefix(ve.Msg, "must ") || strings.HasPrefix(ve.Msg, "is ") {
				sep = " "
			}
			require.Equal(t, "snapshot: "+ve.Field+sep+ve.Msg, err.Error())
			require.NotContains(t, err.Error(), "\n")
		})
	}
}

// TestValidSnapshots checks that the bases of the table above are valid,
// so that each row fails for its own reason.
func TestValidSnapshots(t *testing.T) {
	require.NoError(t, Validate(baseSnap()))
	for _, doc := range []string{
		snapJSON(),
		snapJSON(`{"id":"A","gpusPerMember":1}`),
		snapJSON(`{"id":"A","members":1,"gpusPerMember":2,"state":"running","allocation":[{"node":"n0","gpus":[0,1]}]}`),
		snapJSON(`{"id":"A","gpusPerMember":1,"topology":{"required":"spine","preferred":"leaf"},"spreadLevel":"leaf"}`),
		snapWith(`"teams":[{"name":"a","share":1},{"name":"b","parent":"a","quota":{"gpus":1}}]`),
	} {
		_, err := DecodeSnapshot(strings.NewReader(doc))
		require.NoError(t, err, doc)
	}
}

// TestStepValidatesLikeValidate: on random small snapshots, many of them
// invalid (unknown, repeated, empty or unsorted node names, no nodes at
// all, GPUs out of range or claimed twice, wrong totals, repeated job
// IDs, bad states), Step never panics and reports exactly the error
// Validate reports, though one checks allocations through the index it
// builds and the other without one; on valid ones Step succeeds. Both
// share validateJobs, so this compares how they find nodes; the table
// above checks the rules themselves.
func TestStepValidatesLikeValidate(t *testing.T) {
	names := []string{"a", "b", "n0", "n1", "n10", "n2", "zz", ""}
	rapid.Check(t, func(t *rapid.T) {
		now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
		// Sound snapshots have unique names and IDs, nodes with GPUs,
		// known states and allocations of free GPUs on nodes that exist,
		// so that many are valid and Step's success path runs too.
		sound := rapid.Bool().Draw(t, "sound")
		s := &Snapshot{Now: now, Cluster: topology.Cluster{Levels: []string{"rack"}}}
		for i := range rapid.IntRange(0, 5).Draw(t, "nodes") {
			name := rapid.SampledFrom(names).Draw(t, "name")
			if sound || rapid.Bool().Draw(t, "distinct") {
				name = fmt.Sprintf("m%d", 5-i) // unique, in descending order
			}
			s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: name, GPUs: rapid.SampledFrom([]int{0, 1, 2, 4, 8}[b2i(sound):]).Draw(t, "gpus"),
				Domains: map[string]string{"rack": fmt.Sprint("r", rapid.IntRange(0, 1).Draw(t, "rack"))}})
		}
		nodeNames := append([]string{"x"}, names...)
		for _, n := range s.Cluster.Nodes {
			nodeNames = append(nodeNames, n.Name)
		}
		used := map[string]map[int]bool{}
		for i := range rapid.IntRange(0, 5).Draw(t, "jobs") {
			j := Job{ID: fmt.Sprint("j", rapid.IntRange(i*b2i(sound), i).Draw(t, "id")), Tier: P3, Members: rapid.IntRange(1, 2).Draw(t, "members"),
				GPUsPerMember: rapid.IntRange(1, 2).Draw(t, "perMember"), Submitted: now, TimeLimit: time.Hour,
				State: JobState(rapid.IntRange(0, 3-b2i(sound)).Draw(t, "state"))}
			if j.State != Pending && sound {
				// A consistent allocation: free GPUs of nodes that exist.
				for m := 0; m < j.Members; m++ {
					k := rapid.IntRange(0, max(len(s.Cluster.Nodes)-1, 0)).Draw(t, "node")
					if k >= len(s.Cluster.Nodes) {
						break
					}
					nd := s.Cluster.Nodes[k]
					var got []int
					for g := 0; g < nd.GPUs && len(got) < j.GPUsPerMember; g++ {
						if !used[nd.Name][g] {
							got = append(got, g)
						}
					}
					if len(got) < j.GPUsPerMember {
						break // a wrong total: Step and Validate must both say so
					}
					if used[nd.Name] == nil {
						used[nd.Name] = map[int]bool{}
					}
					for _, g := range got {
						used[nd.Name][g] = true
					}
					j.Started = now.Add(-time.Minute)
					j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: nd.Name, GPUs: got})
				}
			} else if j.State != Pending || rapid.IntRange(0, 9).Draw(t, "pendingHolds") == 0 {
				j.Started = now.Add(-time.Minute)
				for range rapid.IntRange(0, 2).Draw(t, "entries") {
					j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: rapid.SampledFrom(nodeNames).Draw(t, "on"),
						GPUs: rapid.SliceOfN(rapid.IntRange(-1, 8), 1, 3).Draw(t, "gpuIndices")})
				}
			}
			s.Jobs = append(s.Jobs, j)
		}
		want := Validate(s)
		_, got := New(Config{}).Step(s)
		if want == nil {
			if got != nil {
				t.Fatalf("Validate accepts the snapshot, Step says %v", got)
			}
			return
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Validate says %v, Step says %v", want, got)
		}
	})
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestEmptyClusterJobsAreUnsatisfiable: a cluster that declares levels
// but has no nodes is valid, and every job waits as unsatisfiable, one
// that requires a level (of which there is no domain) included.
func TestEmptyClusterJobsAreUnsatisfiable(t *testing.T) {
	snap, err := DecodeSnapshot(strings.NewReader(`{"now":"2026-12-02T00:00:00Z","cluster":{"levels":["spine"]},"jobs":[` +
		`{"id":"a","gpusPerMember":1,"topology":{"required":"spine"}},{"id":"b","members":2,"gpusPerMember":8}]}`))
	require.NoError(t, err)
	for _, cfg := range []Config{{}, {Backfill: Conservative}, {Backfill: NoBackfill}} {
		d, err := New(cfg).Step(snap)
		require.NoError(t, err)
		require.Len(t, d.Pending, 2)
		for _, w := range d.Pending {
			require.Equal(t, ReasonUnsatisfiable, w.Reason, w.Job)
			require.Equal(t, "the cluster has no nodes", w.Message, w.Job)
		}
	}
}

// TestValidateWithPolicyTiers: the package's Validate and DecodeSnapshot
// allow the default four tiers; a scheduler's allow its policy's, from
// Tiers or the preemption matrix, and Step agrees with them.
func TestValidateWithPolicyTiers(t *testing.T) {
	doc := snapJSON(`{"id":"a","gpusPerMember":1,"tier":5}`)
	_, err := DecodeSnapshot(strings.NewReader(doc))
	require.EqualError(t, err, `snapshot: jobs[0] "a": tier must be in 0..3, got 5`)
	for _, cfg := range []Config{{Preemption: preempt.Ordered(6)}, {Tiers: 6}} {
		s := New(cfg)
		snap, err := s.DecodeSnapshot(strings.NewReader(doc))
		require.NoError(t, err)
		require.Error(t, Validate(snap))
		require.NoError(t, s.Validate(snap))
		_, err = s.Step(snap)
		require.NoError(t, err)
		snap.Jobs[0].Tier = TierN(6)
		require.EqualError(t, s.Validate(snap), `snapshot: jobs[0] "a": tier must be in 0..5, got 6`)
		_, err = s.Step(snap)
		require.EqualError(t, err, `snapshot: jobs[0] "a": tier must be in 0..5, got 6`)
	}
}

func TestValidateResourcesAndEligibleNodes(t *testing.T) {
	base := func() *Snapshot {
		return &Snapshot{
			Now:     time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
			Cluster: topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8}, {Name: "n1", GPUs: 8}}},
			Jobs:    []Job{{ID: "a", Tier: P3, Members: 1, GPUsPerMember: 1}},
		}
	}
	for _, c := range []struct {
		name string
		edit func(s *Snapshot)
		want string
	}{
		{"node cpu", func(s *Snapshot) { s.Cluster.Nodes[1].CPUMillis = -1 }, `cluster: nodes[1] "n1": cpuMillis must be >= 0, got -1`},
		{"node memory", func(s *Snapshot) { s.Cluster.Nodes[0].MemoryMiB = -2 }, `cluster: nodes[0] "n0": memoryMiB must be >= 0, got -2`},
		{"job cpu", func(s *Snapshot) { s.Jobs[0].CPUMillis = -3 }, `jobs[0] "a": cpuMillis must be >= 0, got -3`},
		{"job memory", func(s *Snapshot) { s.Jobs[0].MemoryMiB = -4 }, `jobs[0] "a": memoryMiB must be >= 0, got -4`},
		{"unknown node", func(s *Snapshot) { s.Jobs[0].EligibleNodes = []string{"n1", "n9"} }, `jobs[0] "a": eligibleNodes[1]: unknown node "n9"`},
		{"repeated node", func(s *Snapshot) { s.Jobs[0].EligibleNodes = []string{"n1", "n0", "n1"} },
			`jobs[0] "a": eligibleNodes[2]: node "n1" listed twice (also eligibleNodes[0])`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.edit(s)
			err := Validate(s)
			require.EqualError(t, err, "snapshot: "+c.want)
			// Step validates alike.
			_, err = New(Config{}).Step(s)
			require.EqualError(t, err, "snapshot: "+c.want)
		})
	}
	s := base()
	s.Jobs[0].EligibleNodes = []string{}
	require.NoError(t, Validate(s), "an empty list is valid: the job may use no node")
}
