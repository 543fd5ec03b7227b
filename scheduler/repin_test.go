package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// repinDoc is three one-GPU nodes: n0 free, n1 and n2 held by r until
// 01:00 (its limit). A (first in the queue, 2h) could run on n0 from now,
// but B's promise holds n0 from 01:00; at 01:00 n1 and n2 are free too.
// %s is B's shape, the end of the jobs, and the plan.
const repinDoc = `{"now":"2026-12-02T00:00:00Z",
	"cluster":{"nodes":[{"name":"n0","gpus":1},{"name":"n1","gpus":1},{"name":"n2","gpus":1}]},
	"jobs":[
	 {"id":"r","submitted":"2026-12-01T22:00:00Z","members":2,"gpusPerMember":1,"timeLimit":"2h",
	  "state":"running","started":"2026-12-01T23:00:00Z","allocation":[{"node":"n1","gpus":[0]},{"node":"n2","gpus":[0]}]},
	 {"id":"A","submitted":"2026-12-01T23:10:00Z","gpusPerMember":1,"timeLimit":"2h"},
	 {"id":"B","submitted":"2026-12-01T23:20:00Z",%s]}`

// TestRepinStartsJobNowAndMovesLaterReservation: conservative backfill
// counts GPUs, so A starts now on n0 and B's reservation moves to GPUs
// free at its own start, which it keeps, where without re-pinning A
// would be reserved at 01:00 because B holds n0. Both when A holds a
// promise (compressed in keepPromises) and when it has none (its turn).
func TestRepinStartsJobNowAndMovesLaterReservation(t *testing.T) {
	at1 := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ name, b string }{
		{"A promised 01:00", `"gpusPerMember":1,"timeLimit":"1h"}],
	"plan":[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n1","gpus":[0]}]},
	 {"job":"B","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0]}]}`},
		{"A in its turn", `"members":2,"gpusPerMember":1,"timeLimit":"1h"}],
	"plan":[{"job":"B","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0]},{"node":"n1","gpus":[0]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := DecodeSnapshot(strings.NewReader(strings.Replace(repinDoc, "%s", tc.b, 1)))
			require.NoError(t, err)
			d, err := New(Config{Backfill: Conservative, Order: TierOrder{}}).Step(s)
			require.NoError(t, err)
			require.Len(t, d.Placements, 1, "%+v", d)
			require.Equal(t, "A", d.Placements[0].Job)
			require.Equal(t, "n0[0]", d.Placements[0].Allocation.String())
			require.Len(t, d.Reservations, 1, "%+v", d)
			b := d.Reservations[0]
			require.Equal(t, "B", b.Job)
			require.True(t, b.Start.Equal(at1), "B keeps its start: %v", b.Start)
			require.NotContains(t, b.Allocation.String(), "n0", "B moved off A's GPU")
		})
	}
}

// TestPromiseDueOnGPUsReleasedNowIsKept: A is promised now on n0, whose
// job r reaches its time limit now (it is evicted, its GPU released now
// but still held). The promise is kept, reserved from now, as a
// reservation made afresh would be; it is not broken, which let B, behind
// A and promised 01:00 on n1, take n0 from now and A wait until 01:00.
func TestPromiseDueOnGPUsReleasedNowIsKept(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:00:00Z",
	"cluster":{"nodes":[{"name":"n0","gpus":1},{"name":"n1","gpus":1}]},
	"jobs":[
	 {"id":"r","submitted":"2026-12-01T22:00:00Z","gpusPerMember":1,"timeLimit":"1h",
	  "state":"running","started":"2026-12-01T23:00:00Z","allocation":[{"node":"n0","gpus":[0]}]},
	 {"id":"r2","submitted":"2026-12-01T22:00:00Z","gpusPerMember":1,"timeLimit":"2h",
	  "state":"running","started":"2026-12-01T23:00:00Z","allocation":[{"node":"n1","gpus":[0]}]},
	 {"id":"A","submitted":"2026-12-01T23:10:00Z","gpusPerMember":1,"timeLimit":"1h"},
	 {"id":"B","submitted":"2026-12-01T23:20:00Z","gpusPerMember":1,"timeLimit":"1h"}],
	"plan":[{"job":"A","start":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[0]}]},
	 {"job":"B","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n1","gpus":[0]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	d, err := New(Config{Backfill: Conservative, Order: TierOrder{}}).Step(s)
	require.NoError(t, err)
	starts := map[string]string{}
	for _, r := range d.Reservations {
		starts[r.Job] = r.Start.Format("15:04") + " " + r.Allocation.String()
	}
	require.Equal(t, map[string]string{"A": "00:00 n0[0]", "B": "01:00 n1[0]"}, starts, "%+v", d)
}

// TestRepinTriesALaterStart: the count of free GPUs allows j13 (two
// one-GPU members, 20m) to start now, but the GPUs it would need are
// reserved from 10m for j08, a gang of three 3-GPU members that re-pinning
// does not move; so the repin at now fails. At 10m the count allows it
// too, and there only j10 (four one-GPU members, reserved from 20m, which
// may move) is in the way: j13 is reserved from 10m, as a later Step
// would find once the jobs before it end at their limits.
func TestRepinTriesALaterStart(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := &Snapshot{Now: now}
	for _, n := range []string{"n0", "n1", "n2", "n3"} {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: n, GPUs: 4})
	}
	// limit (×10m), tier, members, GPUs per member
	for i, j := range [][4]int{{1, 1, 1, 1}, {1, 1, 1, 1}, {2, 1, 1, 1}, {2, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1},
		{1, 1, 1, 1}, {1, 1, 3, 3}, {1, 1, 1, 1}, {1, 2, 4, 1}, {1, 1, 1, 2}, {2, 1, 2, 1}, {2, 2, 2, 1}} {
		s.Jobs = append(s.Jobs, Job{ID: fmt.Sprintf("j%02d", i), Team: "a", Tier: TierN(j[1]), Members: j[2], GPUsPerMember: j[3],
			TimeLimit: time.Duration(j[0]) * 10 * time.Minute, Submitted: now.Add(time.Duration(i) * time.Second)})
	}
	d, err := New(Config{Backfill: Conservative, DisablePreemption: true}).Step(s)
	require.NoError(t, err)
	starts := map[string]time.Duration{}
	for _, r := range d.Reservations {
		starts[r.Job] = r.Start.Sub(now)
	}
	require.Equal(t, map[string]time.Duration{"j08": 10 * time.Minute, "j10": 20 * time.Minute, "j13": 10 * time.Minute}, starts)
}
