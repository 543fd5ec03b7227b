package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/stretchr/testify/require"
)

func TestRunPrintsAllParts(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	s := out.String()
	require.Contains(t, s, "sweep     1     24h    3h   1             start on n1[0-7]                 3         waits (insufficient-gpus)")
	require.Contains(t, s, "eval      1     30m    1h   3             waits (insufficient-gpus)        1         start on n1[0-7]")
	require.Contains(t, s, "train  2×8    start on v100-0[0-7] v100-1[0-7]  start on b200-0[0-7] b200-1[0-7]")
	require.Contains(t, s, "2m + 3h  b       3     started 3h ago  keeps running                    evicted (preempted by urgent)")
	require.Contains(t, s, "2m + 5m  urgent  1     pending         reserved Dec 2 09:01 on n0[0-7]  reserved Dec 2 20:56 on n1[0-7]")
}

// starts returns the IDs d places now.
func starts(d *scheduler.Decision) []string {
	var ids []string
	for _, p := range d.Placements {
		ids = append(ids, p.Job)
	}
	return ids
}

func reservation(t *testing.T, d *scheduler.Decision, id string) scheduler.Reservation {
	t.Helper()
	for _, r := range d.Reservations {
		if r.Job == id {
			return r
		}
	}
	t.Fatalf("no reservation for %s in %+v", id, d.Reservations)
	return scheduler.Reservation{}
}

func evicted(d *scheduler.Decision) []string {
	var ids []string
	for _, e := range d.Evictions {
		ids = append(ids, e.Job)
	}
	return ids
}

func TestShortestFirstStartsTheShortJob(t *testing.T) {
	snap := sjfScenario()
	def, sjf, err := decide(snap, sjfConfig)
	require.NoError(t, err)

	// Default: the oldest job starts, the next one waits a day and the
	// minute of checkpoint grace the first gets at its limit.
	require.Equal(t, []string{"sweep"}, starts(def))
	require.Equal(t, now.Add(24*time.Hour+time.Minute), reservation(t, def, "notebook").Start)
	// Shortest first: the 30-minute eval starts, the 2-hour bench is next.
	require.Equal(t, []string{"eval"}, starts(sjf))
	require.Equal(t, now.Add(31*time.Minute), reservation(t, sjf, "bench").Start)

	// The order itself: tier, then limit with none last; the tier-0 job
	// stays ahead of a shorter tier-1 one.
	snap.Jobs = append(snap.Jobs, job("tiny", 1, 1, time.Minute, 0), job("prod", 0, 8, 48*time.Hour, 0))
	slices.SortFunc(snap.Jobs, func(a, b scheduler.Job) int { return strings.Compare(a.ID, b.ID) })
	r := ranks(sjfConfig.Order, snap)
	require.Equal(t, map[string]int{"prod": 1, "tiny": 2, "eval": 3, "bench": 4, "sweep": 5, "notebook": 6}, r)
}

func TestNewestGPUKeepsB200ForTheGang(t *testing.T) {
	def, cus, err := decide(newestGPUScenario(), newestGPUConfig)
	require.NoError(t, err)
	nodesOf := func(d *scheduler.Decision, id string) []string {
		for _, p := range d.Placements {
			if p.Job == id {
				var ns []string
				for _, a := range p.Allocation {
					ns = append(ns, a.Node)
				}
				return ns
			}
		}
		t.Fatalf("%s not placed", id)
		return nil
	}
	for _, pod := range []string{"pod1", "pod2", "pod3"} {
		require.Equal(t, []string{"b200-0"}, nodesOf(def, pod), "default")
		require.Equal(t, []string{"v100-0"}, nodesOf(cus, pod), "newest-gpu")
	}
	require.Equal(t, []string{"v100-0", "v100-1"}, nodesOf(def, "train"), "one GPU type")
	require.Equal(t, []string{"b200-0", "b200-1"}, nodesOf(cus, "train"))
}

func TestNewestGPUScore(t *testing.T) {
	s := newestGPUConfig.Pack
	type c = struct {
		free, req int
		typ       string
	}
	score := func(x c) int64 {
		return s.Score(bcand(x.free, x.req, x.typ))
	}
	// Big members: any B200 beats any V100; small ones the other way.
	require.Greater(t, score(c{8, 8, "B200"}), score(c{8, 8, "V100"}))
	require.Greater(t, score(c{8, 1, "V100"}), score(c{1, 1, "B200"}))
	// Within a type it packs.
	require.Greater(t, score(c{2, 1, "V100"}), score(c{8, 1, "V100"}))
	// An unknown type is older than all: last for big, first for small.
	require.Less(t, score(c{8, 8, "K80"}), score(c{8, 8, "V100"}))
	require.Greater(t, score(c{8, 1, "K80"}), score(c{8, 1, "V100"}))
}

func TestMinRuntimeSparesFreshJobs(t *testing.T) {
	// One fresh, one old: the default takes the fresh one, min-runtime the old.
	def, cus, err := decide(minRuntimeScenario(minRuntimeCases[0]), minRuntimeConfig)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, evicted(def))
	require.Equal(t, []string{"b"}, evicted(cus))
	require.Equal(t, now.Add(time.Minute), reservation(t, def, "urgent").Start)
	require.Equal(t, now.Add(time.Minute), reservation(t, cus, "urgent").Start)

	// Both fresh: the default still preempts; min-runtime waits for b's
	// time limit (12h after its start 5m ago) and its minute of grace.
	def, cus, err = decide(minRuntimeScenario(minRuntimeCases[1]), minRuntimeConfig)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, evicted(def))
	require.Empty(t, cus.Evictions)
	require.Equal(t, now.Add(12*time.Hour-4*time.Minute), reservation(t, cus, "urgent").Start)

	// Exactly the minimum runtime is old enough.
	_, cus, err = decide(minRuntimeScenario([2]time.Duration{10 * time.Minute, 5 * time.Minute}), minRuntimeConfig)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, evicted(cus))
}

func bcand(free, req int, typ string) binpack.Candidate {
	return binpack.Candidate{Free: free, Request: req, GPUType: typ}
}
