package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
