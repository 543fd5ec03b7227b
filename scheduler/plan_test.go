package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// planBase is a snapshot of two nodes of four GPUs with one pending job
// "A" of two GPUs; tests add a plan.
const planBase = `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":4},{"name":"n1","gpus":4}]},` +
	`"jobs":[{"id":"A","gpusPerMember":2,"timeLimit":"1h"}],"plan":%s}`

func TestPlanDecodeErrors(t *testing.T) {
	ok := `{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0,1]}]}`
	for _, tc := range []struct{ plan, want string }{
		{`[` + ok + `,{"job":"B","start":5}]`, `snapshot: plan[1] "B": start: want a string, got number`},
		{`[{"job":"C","start":"tomorrow"}]`, `snapshot: plan[0] "C": start`},
		{`[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0]},{"node":7}]}]`,
			`snapshot: plan[0] "A": allocation[1].node: want a string, got number`},
		{`[{"job":"A","when":"x"}]`, `snapshot: plan[0] "A": unknown field "when"`},
		{`{}`, `snapshot: plan: want an array, got object`},
		// Validation: malformed entries.
		{`[{"start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0]}]}]`, `snapshot: plan[0]: job is missing`},
		{`[{"job":"A","allocation":[{"node":"n0","gpus":[0]}]}]`, `snapshot: plan[0] "A": start is missing`},
		{`[{"job":"A","start":"2026-12-02T01:00:00Z"}]`, `snapshot: plan[0] "A": allocation must be given`},
		{`[` + ok + `,` + ok + `]`, `snapshot: plan[1] "A": job is listed twice (also plan[0])`},
		{`[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0]},{"gpus":[0]}]}]`,
			`snapshot: plan[0] "A": allocation[1].node is missing`},
		{`[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[-1]}]}]`,
			`snapshot: plan[0] "A": allocation[0].gpus: GPU index -1 is negative`},
		{`[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[1,1]}]}]`,
			`snapshot: plan[0] "A": allocation[0].gpus: GPU 1 of node "n0" is listed twice`},
		{`[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[]}]}]`,
			`snapshot: plan[0] "A": allocation[0].gpus: holds no GPUs on node "n0" (leave the entry out)`},
	} {
		doc := strings.Replace(planBase, "%s", tc.plan, 1)
		s, err := DecodeSnapshot(strings.NewReader(doc))
		if err == nil {
			err = Validate(s)
			if err == nil {
				_, err = New(Config{}).Step(s)
			}
		}
		require.Error(t, err, tc.plan)
		require.Contains(t, err.Error(), tc.want, tc.plan)
	}
}

// TestPlanIgnoredEntries: entries of jobs that are not pending, or that
// the world has moved past, are not errors.
func TestPlanIgnoredEntries(t *testing.T) {
	for _, plan := range []string{
		`[{"job":"gone","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0,1]}]}]`,
		`[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n9","gpus":[0,1]}]}]`, // node gone
		`[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[3,4]}]}]`, // GPU gone
		`[{"job":"A","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0,99]}]}]`,
		`[{"job":"A","start":"2026-12-01T01:00:00Z","allocation":[{"node":"n0","gpus":[0,1,2]}]}]`, // wrong shape
		`[{"job":"A","start":"2026-12-01T01:00:00Z","allocation":[{"node":"n0","gpus":[0,1]}]}]`,   // in the past: due
	} {
		s, err := DecodeSnapshot(strings.NewReader(strings.Replace(planBase, "%s", plan, 1)))
		require.NoError(t, err)
		d, err := New(Config{}).Step(s)
		require.NoError(t, err, plan)
		require.Len(t, d.Placements, 1, plan)
	}
}

func TestPlanRoundTrip(t *testing.T) {
	s := &Snapshot{Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
		Cluster: topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4}}},
		Jobs:    []Job{{ID: "A", Tier: P3, Members: 1, GPUsPerMember: 2, State: Pending}},
		Plan: []Reservation{{Job: "A", Start: time.Date(2026, 12, 2, 1, 0, 0, 5, time.UTC),
			Allocation: topology.Allocation{{Node: "n0", GPUs: []int{0, 1}}}}}}
	var buf bytes.Buffer
	require.NoError(t, EncodeSnapshot(&buf, s))
	got, err := DecodeSnapshot(&buf)
	require.NoError(t, err)
	require.Equal(t, s.Plan, got.Plan)
}

// reproStep decodes testdata/repro/name and steps it under policy, with
// plan as its plan.
func reproStep(t *testing.T, name, policy string, plan []Reservation) *Decision {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "repro", name))
	require.NoError(t, err)
	defer f.Close()
	s, err := DecodeSnapshot(f)
	require.NoError(t, err)
	s.Plan = plan
	p, err := os.Open(filepath.Join("testdata", "repro", policy))
	require.NoError(t, err)
	defer p.Close()
	cfg, err := DecodeConfig(p)
	require.NoError(t, err)
	d, err := New(cfg).Step(s)
	require.NoError(t, err)
	return d
}

// startOf is when d starts job id: now when placed, its reservation's
// start when reserved; false when neither.
func startOf(d *Decision, now time.Time, id string) (time.Time, bool) {
	for _, p := range d.Placements {
		if p.Job == id {
			return now, true
		}
	}
	for _, r := range d.Reservations {
		if r.Job == id {
			return r.Start, true
		}
	}
	return time.Time{}, false
}

// TestSlipRepro: every job ran exactly its limit and nothing arrived;
// with the first decision's reservations as plan, no promised start
// moves later (without a plan, j07 moved from 02:01 to 03:01).
func TestSlipRepro(t *testing.T) {
	d1 := reproStep(t, "slip-step1.json", "slip.policy.json", nil)
	now2 := time.Date(2026, 12, 1, 2, 1, 0, 0, time.UTC)
	d2 := reproStep(t, "slip-step2.json", "slip.policy.json", d1.Reservations)
	for _, r := range d1.Reservations {
		got, ok := startOf(d2, now2, r.Job)
		require.True(t, ok, r.Job)
		require.False(t, got.After(r.Start), "%s promised %v, now %v", r.Job, r.Start, got)
	}
	plain := reproStep(t, "slip-step2.json", "slip.policy.json", nil)
	got, _ := startOf(plain, now2, "j07")
	require.True(t, got.After(now2), "the repro no longer shows the slip without a plan")
}

// TestSJFLivelockRepro: the preemptor's reservation on its victim's GPUs
// is in the plan, so once the victim is gone the preemptor starts there
// and no tier-3 job takes them.
func TestSJFLivelockRepro(t *testing.T) {
	dA := reproStep(t, "sjf-stepA.json", "sjf.policy.json", nil)
	_, ok := startOf(dA, time.Time{}, "hi")
	require.True(t, ok, "hi preempts in step A")
	dB := reproStep(t, "sjf-stepB.json", "sjf.policy.json", dA.Reservations)
	require.Contains(t, placedJobs(dB), "hi", "hi starts once its victim is gone")
	require.NotContains(t, placedJobs(dB), "lo3")
}

func placedJobs(d *Decision) []string {
	var out []string
	for _, p := range d.Placements {
		out = append(out, p.Job)
	}
	return out
}

// TestPlanDecisionJSON: a decision's reservations, written as JSON and
// read back as a plan, are the same plan.
func TestPlanDecisionJSON(t *testing.T) {
	d1 := reproStep(t, "slip-step1.json", "slip.policy.json", nil)
	var buf bytes.Buffer
	require.NoError(t, EncodeDecision(&buf, d1))
	var out struct {
		Reservations json.RawMessage `json:"reservations"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &out))
	data, err := os.ReadFile(filepath.Join("testdata", "repro", "slip-step2.json"))
	require.NoError(t, err)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["plan"] = out.Reservations
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	s, err := DecodeSnapshot(bytes.NewReader(data))
	require.NoError(t, err)
	require.Equal(t, d1.Reservations, s.Plan)
}

// TestKeptPromiseStartsWhenAMovedOneFreesItsGPUs: a world found by the
// multi-Step preemption property. r03 and r04 hold promises for 00:02;
// r03 cannot start now on n0[0], the one free GPU, because r04's promise
// takes n0[0] at 00:02 and r03 has no limit. Compressing r04 moves it onto
// n0[1,3] at the same start, which leaves n0[0] free for good: r03 must
// then start now (work conservation), not keep waiting for 00:02.
func TestKeptPromiseStartsWhenAMovedOneFreesItsGPUs(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:01:00Z",
	"cluster":{"nodes":[{"name":"n0","gpus":8},{"name":"n1","gpus":4,"state":"down"},
		{"name":"n2","gpus":4,"state":"draining"},{"name":"n3","gpus":4,"state":"draining"},
		{"name":"n4","gpus":8,"state":"draining"}]},
	"teams":[{"name":"a","share":1}],
	"jobs":[
	 {"id":"p00","team":"a","tier":0,"submitted":"2026-12-02T00:00:00Z","gpusPerMember":2,"timeLimit":"10m",
	  "state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[5,6]}]},
	 {"id":"r01","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":4,"checkpointGrace":"2m",
	  "state":"evicting","started":"2026-12-01T23:59:00Z","evictedAt":"2026-12-02T00:00:00Z",
	  "allocation":[{"node":"n0","gpus":[1,2,3,4]}]},
	 {"id":"r02","team":"a","tier":0,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1,
	  "state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[7]}]},
	 {"id":"r03","team":"a","tier":0,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1},
	 {"id":"r04","team":"a","tier":0,"submitted":"2026-12-01T14:00:00Z","members":2,"gpusPerMember":1}],
	"plan":[
	 {"job":"r03","start":"2026-12-02T00:02:00Z","allocation":[{"node":"n0","gpus":[2]}]},
	 {"job":"r04","start":"2026-12-02T00:02:00Z","allocation":[{"node":"n0","gpus":[0,1]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	d, err := New(Config{Backfill: EASY, BackfillOrder: ShortestFirst}).Step(s)
	require.NoError(t, err)
	require.Len(t, d.Placements, 1, "%+v", d)
	require.Equal(t, "r03", d.Placements[0].Job)
	require.Equal(t, "n0[0]", d.Placements[0].Allocation.String())
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "r04", d.Reservations[0].Job)
}

// TestPreemptorPromiseBeyondHorizonIsKept: a preemptor's claim on the GPUs
// its victims free ignores the planning horizon when it is made, so it
// does when the plan brings it back. Otherwise r00, a victim requeued
// with no grace, takes back the GPU that p00 waits for and is evicted
// again (found by the multi-Step property that no victim is evicted twice).
func TestPreemptorPromiseBeyondHorizonIsKept(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:00:00Z",
	"cluster":{"nodes":[{"name":"n0","gpus":8}]},
	"teams":[{"name":"a","share":1}],
	"jobs":[
	 {"id":"p00","team":"a","tier":0,"submitted":"2026-12-02T00:00:00Z","members":2,"gpusPerMember":2,"timeLimit":"10m"},
	 {"id":"r00","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1},
	 {"id":"r01","team":"a","tier":1,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":1,"checkpointGrace":"2m",
	  "state":"evicting","started":"2026-12-01T23:59:00Z","evictedAt":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[1]}]},
	 {"id":"r02","team":"a","tier":0,"submitted":"2026-12-01T14:00:00Z","gpusPerMember":4,
	  "state":"running","started":"2026-12-01T23:59:00Z","allocation":[{"node":"n0","gpus":[2,3,4,5]}]}],
	"plan":[{"job":"p00","start":"2026-12-02T00:02:00Z","allocation":[{"node":"n0","gpus":[0,1,6,7]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	// The reservation policy gives no job a reservation of its own: p00
	// holds its GPUs only through its claim.
	noReservations := ReserveFunc(func(*Job, int) bool { return false })
	d, err := New(Config{Backfill: EASY, BackfillOrder: ShortestFirst, Horizon: time.Minute, Reserve: noReservations}).Step(s)
	require.NoError(t, err)
	require.Empty(t, d.Placements, "r00 must not take p00's GPUs")
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "p00", d.Reservations[0].Job)
	require.Equal(t, "n0[0-1,6-7]", d.Reservations[0].Allocation.String())
}

// TestPromiseMovesOntoItsOwnGPUs: under conservative backfill a kept
// promise whose earlier start needs its own promised GPUs moves there.
// P (one member of 2 GPUs, a run of 4h) is promised GPUs 0-1 of the one
// node from 3h; the job on them ends at 1h. As things are, no run of P
// fits before 3h (from 1h it would run into its own reservation), but
// with the reservation taken out it starts at 1h; and, once that job is
// gone, now. The proof that a promise cannot move without taking it out
// (stuckInPlace) must not claim these.
func TestPromiseMovesOntoItsOwnGPUs(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":2}]},
	"jobs":[%s{"id":"P","gpusPerMember":2,"timeLimit":"4h","submitted":"2026-12-01T00:00:00Z"}],
	"plan":[{"job":"P","start":"2026-12-02T03:00:00Z","allocation":[{"node":"n0","gpus":[0,1]}]}]}`
	const running = `{"id":"R","gpusPerMember":2,"timeLimit":"1h","state":"running",` +
		`"started":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[0,1]}]},`
	for _, tc := range []struct {
		name, jobs string
		want       time.Time
	}{
		{"R runs to 1h", running, time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)},
		{"R is gone", "", time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := DecodeSnapshot(strings.NewReader(fmt.Sprintf(doc, tc.jobs)))
			require.NoError(t, err)
			d, err := New(Config{Backfill: Conservative}).Step(s)
			require.NoError(t, err)
			at, ok := startOf(d, s.Now, "P")
			require.True(t, ok, "%+v", d)
			require.Equal(t, tc.want, at.UTC())
		})
	}
}

// TestSameSlots: two placements hold the same GPUs whatever the order of
// their slots, and not when a GPU or a node differs.
func TestSameSlots(t *testing.T) {
	pl := func(slots ...gang.Slot) gang.Placement { return gang.Placement{Slots: slots} }
	a, b := gang.Slot{Node: 1, GPUs: topology.SetOf(0, 1)}, gang.Slot{Node: 2, GPUs: topology.SetOf(3)}
	for _, tc := range []struct {
		x, y gang.Placement
		want bool
	}{
		{pl(a, b), pl(a, b), true},
		{pl(a, b), pl(b, a), true},
		{pl(a, b), pl(a), false},
		{pl(a, b), pl(a, gang.Slot{Node: 2, GPUs: topology.SetOf(4)}), false},
		{pl(a, b), pl(gang.Slot{Node: 3, GPUs: topology.SetOf(3)}, a), false},
		{pl(), pl(), true},
	} {
		require.Equal(t, tc.want, sameSlots(tc.x, tc.y), "%v vs %v", tc.x.Slots, tc.y.Slots)
		require.Equal(t, tc.want, sameSlots(tc.y, tc.x), "%v vs %v", tc.y.Slots, tc.x.Slots)
	}
}

// TestGangPromiseMovesOntoItsOwnGPUs: a gang's kept promise moves when,
// taken out, its own GPUs on one node and a node free now hold it
// earlier. G (two members of 2 GPUs, a run of 4h) is promised n0 and n1
// from 3h; R0 holds n0 until 1h, R1 holds n1 until 3h, n2 is free. As
// things are no run of G fits before 3h (n0 is promised to G itself from
// 3h); taken out, G fits from 1h on n0 and n2. The nodes of the promise
// have room for one member just before 3h, so the proof that it cannot
// move (stuckInPlace) must find the other member a place, and does, on n2.
func TestGangPromiseMovesOntoItsOwnGPUs(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:00:00Z",
	"cluster":{"nodes":[{"name":"n0","gpus":2},{"name":"n1","gpus":2},{"name":"n2","gpus":2}]},
	"jobs":[
	 {"id":"R0","gpusPerMember":2,"timeLimit":"1h","state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[0,1]}]},
	 {"id":"R1","gpusPerMember":2,"timeLimit":"3h","state":"running","started":"2026-12-02T00:00:00Z","allocation":[{"node":"n1","gpus":[0,1]}]},
	 {"id":"G","members":2,"gpusPerMember":2,"timeLimit":"4h","submitted":"2026-12-01T00:00:00Z"}],
	"plan":[{"job":"G","start":"2026-12-02T03:00:00Z","allocation":[{"node":"n0","gpus":[0,1]},{"node":"n1","gpus":[0,1]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	d, err := New(Config{Backfill: Conservative}).Step(s)
	require.NoError(t, err)
	require.Len(t, d.Reservations, 1, "%+v", d)
	require.Equal(t, time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC), d.Reservations[0].Start.UTC())
	require.Equal(t, "n0[0-1] n2[0-1]", d.Reservations[0].Allocation.String())
}

// TestClaimStaysOnItsVictimsGPUs: P (tier 1) keeps a claim from 00:30 on
// n0, where its victim V is being evicted with 30 minutes of grace. n1
// frees at 00:01, when W reaches its limit: compression would move P
// there, and leave n0 to the jobs P may preempt, V requeued among them,
// which a later Step could evict again to start P sooner. The claim stays
// on n0; P still starts the moment GPUs are free now (second Step, at
// 00:01, W gone).
func TestClaimStaysOnItsVictimsGPUs(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:00:00Z",
	"cluster":{"nodes":[{"name":"n0","gpus":4},{"name":"n1","gpus":4}]},
	"jobs":[
	 {"id":"V","tier":3,"gpusPerMember":2,"checkpointGrace":"30m","state":"evicting",
	  "started":"2026-12-01T23:00:00Z","evictedAt":"2026-12-02T00:00:00Z","allocation":[{"node":"n0","gpus":[0,1]}]},
	 {"id":"W","tier":0,"gpusPerMember":4,"timeLimit":"1h","state":"running",
	  "started":"2026-12-01T23:01:00Z","allocation":[{"node":"n1","gpus":[0,1,2,3]}]},
	 {"id":"P","tier":1,"gpusPerMember":4,"submitted":"2026-12-01T23:00:00Z"}],
	"plan":[{"job":"P","start":"2026-12-02T00:30:00Z","allocation":[{"node":"n0","gpus":[0,1,2,3]}]}]}`
	for _, mode := range []BackfillMode{EASY, Conservative} {
		s, err := DecodeSnapshot(strings.NewReader(doc))
		require.NoError(t, err)
		d, err := New(Config{Backfill: mode}).Step(s)
		require.NoError(t, err)
		require.Empty(t, d.Evictions, "%v", mode)
		require.Len(t, d.Reservations, 1, "%v: %+v", mode, d)
		require.Equal(t, "n0[0-3]", d.Reservations[0].Allocation.String(), "%v: the claim stays on its victim's GPUs", mode)
		require.Equal(t, s.Now.Add(30*time.Minute), d.Reservations[0].Start, "%v", mode)

		// At 00:01 W is gone: P starts now on n1.
		s.Now = s.Now.Add(time.Minute)
		s.Jobs = slices.DeleteFunc(s.Jobs, func(j Job) bool { return j.ID == "W" })
		s.Plan = d.Reservations
		d, err = New(Config{Backfill: mode}).Step(s)
		require.NoError(t, err)
		require.Len(t, d.Placements, 1, "%v: %+v", mode, d)
		require.Equal(t, "P", d.Placements[0].Job)
		require.Equal(t, "n1[0-3]", d.Placements[0].Allocation.String(), "%v", mode)
	}
}

// TestJobAheadStartsOnCPUAKeptPromiseLeft: a kept promise that moves off
// GPUs none of which is free now can still let a job ahead start now,
// when nodes limit CPU. n0 has 1,000 millicores; R holds GPU 0 and 100 of
// them until 01:00. A (600 per member, no limit) is promised n1[0] from
// 00:30; X (950, no limit) n0[0] from 01:00. A cannot start now on n0's
// free GPUs while X's reservation counts its CPU from 01:00. Compression
// moves X to n1[1] at 00:30, and A then starts now on n0.
func TestJobAheadStartsOnCPUAKeptPromiseLeft(t *testing.T) {
	const doc = `{"now":"2026-12-02T00:00:00Z",
	"cluster":{"nodes":[{"name":"n0","gpus":4,"cpuMillis":1000},{"name":"n1","gpus":2}]},
	"jobs":[
	 {"id":"R","tier":0,"gpusPerMember":1,"cpuMillis":100,"timeLimit":"2h","state":"running",
	  "started":"2026-12-01T23:00:00Z","allocation":[{"node":"n0","gpus":[0]}]},
	 {"id":"S","tier":0,"gpusPerMember":2,"timeLimit":"90m","state":"running",
	  "started":"2026-12-01T23:00:00Z","allocation":[{"node":"n1","gpus":[0,1]}]},
	 {"id":"A","tier":3,"gpusPerMember":1,"cpuMillis":600,"submitted":"2026-12-01T22:00:00Z"},
	 {"id":"X","tier":3,"gpusPerMember":1,"cpuMillis":950,"submitted":"2026-12-01T22:30:00Z"}],
	"plan":[{"job":"A","start":"2026-12-02T00:30:00Z","allocation":[{"node":"n1","gpus":[0]}]},
	        {"job":"X","start":"2026-12-02T01:00:00Z","allocation":[{"node":"n0","gpus":[0]}]}]}`
	s, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	d, err := New(Config{Backfill: Conservative}).Step(s)
	require.NoError(t, err)
	require.Len(t, d.Placements, 1, "%+v", d)
	require.Equal(t, "A", d.Placements[0].Job)
	require.Equal(t, "n0", d.Placements[0].Allocation[0].Node)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "X", d.Reservations[0].Job)
	require.Equal(t, "n1[1]", d.Reservations[0].Allocation.String())
}
