package scheduler

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// keptPreemptBase: a tier-1 job P of 8 GPUs waits; n0 is held by a job
// of its own tier until 03:00 and n1 by a tier-3 job until 10:00, which
// P may preempt (grace 5m). The plan, when given, promises P n0 at 03:00.
const keptPreemptBase = `{"now":"2026-12-02T00:00:00Z",
 "cluster":{"nodes":[{"name":"n0","gpus":8},{"name":"n1","gpus":8}]},
 "jobs":[
  {"id":"L","tier":1,"gpusPerMember":8,"state":"running","started":"2026-12-01T23:00:00Z","timeLimit":"4h","allocation":[{"node":"n0","gpus":[0,1,2,3,4,5,6,7]}]},
  {"id":"V","tier":3,"gpusPerMember":8,"state":"running","started":"2026-12-01T23:00:00Z","timeLimit":"11h","checkpointGrace":"5m","allocation":[{"node":"n1","gpus":[0,1,2,3,4,5,6,7]}]},
  {"id":"P","tier":1,"gpusPerMember":8,"timeLimit":"1h"}
 ]%s}`

// TestKeptPromiseMayStillPreempt: a job holding a promise from the plan
// that may preempt is given the preemption stage, as without a plan: it
// starts after the victim's grace (00:05) rather than at its promise
// (03:00). A plan never makes a job wait longer than planning afresh
// would.
func TestKeptPromiseMayStillPreempt(t *testing.T) {
	step := func(plan string) *Decision {
		s, err := DecodeSnapshot(strings.NewReader(strings.Replace(keptPreemptBase, "%s", plan, 1)))
		require.NoError(t, err)
		d, err := New(Config{}).Step(s)
		require.NoError(t, err)
		return d
	}
	fresh := step("")
	require.Len(t, fresh.Evictions, 1, "without a plan P preempts V")
	require.Equal(t, "V", fresh.Evictions[0].Job)
	planned := step(`,"plan":[{"job":"P","start":"2026-12-02T03:00:00Z","allocation":[{"node":"n0","gpus":[0,1,2,3,4,5,6,7]}]}]`)
	require.Equal(t, fresh.Evictions, planned.Evictions, "with its promise P preempts as without")
	require.Equal(t, fresh.Reservations, planned.Reservations)
}

// TestReservationSaysWhyItMovedLater: a job whose promise broke (its
// node went down) and which is reserved later says why on its
// reservation, in Go and in JSON; a job whose promise held (and moved
// earlier, onto the GPUs the first one could have had) says nothing.
func TestReservationSaysWhyItMovedLater(t *testing.T) {
	doc := `{"now":"2026-12-02T00:00:00Z",
 "cluster":{"nodes":[{"name":"n0","gpus":4,"state":"down"},{"name":"n1","gpus":4},{"name":"n2","gpus":4}]},
 "jobs":[
  {"id":"X","gpusPerMember":4,"state":"running","started":"2026-12-01T23:00:00Z","timeLimit":"2h","allocation":[{"node":"n0","gpus":[0,1,2,3]}]},
  {"id":"Y","gpusPerMember":4,"state":"running","started":"2026-12-01T23:00:00Z","timeLimit":"4h","allocation":[{"node":"n1","gpus":[0,1,2,3]}]},
  {"id":"Z","gpusPerMember":4,"state":"running","started":"2026-12-01T23:00:00Z","timeLimit":"5h","allocation":[{"node":"n2","gpus":[0,1,2,3]}]},
  {"id":"A","gpusPerMember":4,"timeLimit":"1h","submitted":"2026-12-01T22:00:00Z"},
  {"id":"B","gpusPerMember":4,"timeLimit":"1h","submitted":"2026-12-01T22:30:00Z"}
 ],
 "plan":[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0,1,2,3]}]},
         {"job":"B","start":"2026-12-02T04:00:00Z","allocation":[{"node":"n2","gpus":[0,1,2,3]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	d, err := New(Config{Backfill: Conservative}).Step(s)
	require.NoError(t, err)
	require.Len(t, d.Reservations, 2)
	a, b := d.Reservations[0], d.Reservations[1]
	require.Equal(t, "A", a.Job)
	require.Equal(t, "2026-12-02T04:00:00Z", a.Start.UTC().Format(time.RFC3339), "A, planned afresh behind B")
	require.Equal(t, `its promised start 2026-12-02T01:00:00Z no longer holds: node "n0" is down`, a.Message)
	require.Equal(t, "B", b.Job)
	require.Equal(t, "2026-12-02T03:00:00Z", b.Start.UTC().Format(time.RFC3339), "B keeps its promise, moved earlier onto n1")
	require.Empty(t, b.Message)
	var buf bytes.Buffer
	require.NoError(t, EncodeDecision(&buf, d))
	require.Contains(t, buf.String(), `"message": "its promised start 2026-12-02T01:00:00Z no longer holds: node \"n0\" is down"`)
	// Passed back verbatim as the next plan, the message is read.
	next := *s
	next.Plan = d.Reservations
	var snap bytes.Buffer
	require.NoError(t, EncodeSnapshot(&snap, &next))
	_, err = DecodeSnapshot(&snap)
	require.NoError(t, err)
}

// TestKeptPromiseIgnoresAlikeJobsFailedSearch: A and P, alike (tier 1, 8
// GPUs of one node), wait for n0, whose GPUs 0-7 P is promised from
// 00:01, when V (tier 2, on GPUs 2 and 8) reaches its time limit. A's
// victim search fails: GPUs 0-7 are reserved for P. P's succeeds, its own
// reservation taken out, so P evicts V and starts after V's grace (none)
// rather than at 00:01, as it would without the Step's memo of failed
// searches. (V holds a GPU outside P's promise: one that held only
// promised GPUs and left by 00:01 would be spared.)
func TestKeptPromiseIgnoresAlikeJobsFailedSearch(t *testing.T) {
	doc := `{"now":"2026-12-02T00:00:00Z",
 "cluster":{"nodes":[{"name":"n0","gpus":9}]},
 "jobs":[
  {"id":"V","tier":2,"gpusPerMember":2,"state":"running","started":"2026-12-01T23:59:00Z","timeLimit":"2m","allocation":[{"node":"n0","gpus":[2,8]}]},
  {"id":"A","tier":1,"gpusPerMember":8,"timeLimit":"10m","submitted":"2026-12-02T00:00:00Z"},
  {"id":"P","tier":1,"gpusPerMember":8,"submitted":"2026-12-02T00:00:00Z"}
 ],
 "plan":[{"job":"P","start":"2026-12-02T00:01:00Z","allocation":[{"node":"n0","gpus":[0,1,2,3,4,5,6,7]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	d, err := New(Config{}).Step(s)
	require.NoError(t, err)
	ref, err := NewWithoutMemo(Config{}).Step(s)
	require.NoError(t, err)
	require.Len(t, ref.Evictions, 1, "without the memo P preempts V")
	require.Equal(t, "V", ref.Evictions[0].Job)
	require.Equal(t, ref.Evictions, d.Evictions)
	require.Equal(t, ref.Reservations, d.Reservations)
}

// TestJobAheadStartsOnGPUsAKeptPromiseLeft: P4 and P6 (tier 1, 4 GPUs, no
// limit) keep promises: P4 from now on n0's GPUs 1-4, which jobs reaching
// their limits now still hold, and P6 from 00:20 on n0's GPUs 0 and 5-7.
// n0's GPUs 4-7 are free now, but P6's promise stops P4 from running
// there. At its place behind P4, P6 preempts the tier-2 jobs on n1 and is
// reserved there from now, which frees GPUs 5-7 of n0: P4 starts now on
// n0's GPUs 4-7 rather than wait for its promise.
func TestJobAheadStartsOnGPUsAKeptPromiseLeft(t *testing.T) {
	doc := `{"now":"2026-12-02T00:10:00Z",
 "cluster":{"nodes":[{"name":"n0","gpus":8},{"name":"n1","gpus":4}]},
 "jobs":[
  {"id":"R2","tier":2,"gpusPerMember":1,"state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n1","gpus":[1]}]},
  {"id":"R4","tier":2,"gpusPerMember":1,"state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n1","gpus":[3]}]},
  {"id":"P3","tier":2,"gpusPerMember":1,"state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n1","gpus":[0]}]},
  {"id":"P0","tier":1,"gpusPerMember":1,"timeLimit":"20m","state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[0]}]},
  {"id":"P1","tier":1,"gpusPerMember":1,"timeLimit":"10m","state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[1]}]},
  {"id":"P2","tier":1,"gpusPerMember":1,"timeLimit":"10m","state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[2]}]},
  {"id":"P5","tier":1,"gpusPerMember":1,"timeLimit":"10m","state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[3]}]},
  {"id":"P4","tier":1,"gpusPerMember":4,"submitted":"2026-12-02T00:00:00Z"},
  {"id":"P6","tier":1,"gpusPerMember":4,"submitted":"2026-12-02T00:00:00Z"}
 ],
 "plan":[{"job":"P4","start":"2026-12-02T00:10:00Z","allocation":[{"node":"n0","gpus":[1,2,3,4]}]},
         {"job":"P6","start":"2026-12-02T00:20:00Z","allocation":[{"node":"n0","gpus":[0,5,6,7]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	d, err := New(Config{Reservations: 2, BackfillOrder: ShortestFirst}).Step(s)
	require.NoError(t, err)
	var evicted []string
	for _, e := range d.Evictions {
		if e.By == "P6" {
			evicted = append(evicted, e.Job)
		}
	}
	require.ElementsMatch(t, []string{"P3", "R2", "R4"}, evicted, "P6 preempts the tier-2 jobs on n1")
	require.Len(t, d.Placements, 1)
	require.Equal(t, "P4", d.Placements[0].Job)
	require.Equal(t, topology.Allocation{{Node: "n0", GPUs: []int{4, 5, 6, 7}}}, d.Placements[0].Allocation)
}

// TestJobBehindStartsOnGPUsAKeptPromiseLeft: a kept promise that moves
// onto its victims' GPUs in its turn frees its old GPUs for the jobs
// behind it too, whose promises were improved before it moved. r05 was
// promised n4[2,7] from 00:01; r06, behind it, GPU 7 of n4 from 00:03,
// when r05 would end. In its turn r05 preempts r01 and is reserved n1's
// GPUs instead, so r06 starts now on GPU 7 (before: reserved at 00:03
// while it fit now; found by a seed of TestInvariantPreemptionOverSteps).
func TestJobBehindStartsOnGPUsAKeptPromiseLeft(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:00:00Z",
	"cluster":{"nodes":[{"name":"n0","gpus":4,"state":"down","unhealthyGPUs":[0]},{"name":"n1","gpus":4},
		{"name":"n2","gpus":8,"state":"down"},{"name":"n3","gpus":4,"state":"draining"},{"name":"n4","gpus":8}]},
	"teams":[{"name":"a","share":1}],
	"jobs":[
	 {"id":"r00","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":4,"timeLimit":"1m"},
	 {"id":"r01","team":"a","tier":2,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":2,
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n1","gpus":[0,1]}]},
	 {"id":"r02","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1,
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n1","gpus":[2]}]},
	 {"id":"r03","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1,
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n1","gpus":[3]}]},
	 {"id":"r04","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":4},
	 {"id":"r05","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":2,"timeLimit":"2m"},
	 {"id":"r06","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1},
	 {"id":"r07","team":"a","tier":2,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":5},
	 {"id":"p00","team":"a","tier":1,"submitted":"2026-12-02T00:00:00Z","gpusPerMember":2,
	  "state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n4","gpus":[0,1]}]}],
	"plan":[
	 {"job":"r00","start":"2026-12-02T00:00:00Z","allocation":[{"node":"n4","gpus":[2,3,4,5]}]},
	 {"job":"r04","start":"2026-12-02T00:01:00Z","allocation":[{"node":"n4","gpus":[3,4,5,6]}]},
	 {"job":"r05","start":"2026-12-02T00:01:00Z","allocation":[{"node":"n4","gpus":[2,7]}]},
	 {"job":"r06","start":"2026-12-02T00:03:00Z","allocation":[{"node":"n4","gpus":[7]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	cfg := Config{Backfill: Conservative, BackfillOrder: ShortestFirst, IgnoreTimeLimits: true}
	d, err := New(cfg).Step(s)
	require.NoError(t, err)
	placed := map[string]string{}
	for _, p := range d.Placements {
		placed[p.Job] = p.Allocation.String()
	}
	require.Contains(t, placed, "r06", "%+v", d)
	require.Equal(t, "n4[7]", placed["r06"])
}

// TestKeptPreemptorSparesAJobThatLeavesInTime: P (tier 1, all 8 GPUs of
// n0) is promised n0 from 00:01, when V (tier 2, on GPU 2) reaches its
// time limit. Evicting V would start P a minute earlier at the cost of
// V's work, and when V is P's own victim requeued and backfilled there,
// it would be evicted twice (found by a seed of
// TestPreemptionOverStepsWide): P keeps its promise and V runs on.
func TestKeptPreemptorSparesAJobThatLeavesInTime(t *testing.T) {
	doc := `{"now":"2026-12-02T00:00:00Z",
 "cluster":{"nodes":[{"name":"n0","gpus":8}]},
 "jobs":[
  {"id":"V","tier":2,"gpusPerMember":1,"state":"running","started":"2026-12-01T23:59:00Z","timeLimit":"2m","allocation":[{"node":"n0","gpus":[2]}]},
  {"id":"P","tier":1,"gpusPerMember":8,"submitted":"2026-12-02T00:00:00Z"}
 ],
 "plan":[{"job":"P","start":"2026-12-02T00:01:00Z","allocation":[{"node":"n0","gpus":[0,1,2,3,4,5,6,7]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	for _, cfg := range []Config{{}, {Backfill: Conservative}} {
		d, err := New(cfg).Step(s)
		require.NoError(t, err)
		require.Empty(t, d.Evictions, "%v", cfg.Backfill)
		require.Len(t, d.Reservations, 1)
		require.Equal(t, "P", d.Reservations[0].Job)
		require.Equal(t, "2026-12-02T00:01:00Z", d.Reservations[0].Start.UTC().Format(time.RFC3339))
	}
}

// TestPreemptorAheadOfAKeptPromiseIsServedFirst: under shortest-first
// backfill with one reservation, r00 (tier 0, one GPU, no limit, ahead in
// the queue) has no reservation to make once P's promise (a spread gang
// of tier 0, from 00:01) is kept, but it may preempt, and the disruption
// budget serves preemptors in priority order: r00 evicts the tier-1 job
// on n1 in its own turn, before P, behind it, preempts to start sooner.
// (Before, jobs past the reservations waited for the shortest-first pass
// after every turn, preemptors included, so P's preemption stage spent
// the budget on r07's 8 GPUs and r00 waited for a later Step; a seed of
// TestBudgetOverSteps.)
func TestPreemptorAheadOfAKeptPromiseIsServedFirst(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:00:00Z",
	"cluster":{"nodes":[{"name":"n1","gpus":4},{"name":"n4","gpus":8},{"name":"n5","gpus":8}]},
	"teams":[{"name":"a","share":1}],
	"jobs":[
	 {"id":"r00","team":"a","tier":0,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1},
	 {"id":"r01","team":"a","tier":0,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":2,
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n1","gpus":[0,1]}]},
	 {"id":"r02","team":"a","tier":0,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1,
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n1","gpus":[2]}]},
	 {"id":"r03","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1,
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n1","gpus":[3]}]},
	 {"id":"r05","team":"a","tier":0,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":4,"timeLimit":"2m",
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n4","gpus":[0,1,2,3]}]},
	 {"id":"r07","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":8,"timeLimit":"2m",
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n5","gpus":[0,1,2,3,4,5,6,7]}]},
	 {"id":"P","team":"a","tier":0,"submitted":"2026-12-02T00:00:00Z","members":3,"gpusPerMember":4,"placement":"spread"}
	],
	"plan":[{"job":"P","start":"2026-12-02T00:01:00Z","allocation":[{"node":"n4","gpus":[0,1,2,3,4,5,6,7]},{"node":"n5","gpus":[0,1,2,3]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	d, err := New(Config{Reservations: 1, BackfillOrder: ShortestFirst}).Step(s)
	require.NoError(t, err)
	require.NotEmpty(t, d.Evictions, "%+v", d)
	require.Equal(t, Eviction{Job: "r03", Reason: EvictPreempted, By: "r00", Requeue: true}, d.Evictions[0], "r00 preempts first, in its turn")
	for _, e := range d.Evictions[1:] {
		require.NotEqual(t, "r00", e.By)
	}
}
