package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// quotaNow and eight are shared by the quota tests below.
var (
	quotaNow = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	eight    = []int{0, 1, 2, 3, 4, 5, 6, 7}
)

// runFour is a running job of one member on all four GPUs of node, started
// ago, with a time limit and a checkpoint grace.
func runFour(id string, tier int, node string, ago, limit, grace time.Duration) Job {
	return Job{ID: id, Tier: TierN(tier), Members: 1, GPUsPerMember: 4, State: Running, Started: quotaNow.Add(-ago),
		TimeLimit: limit, CheckpointGrace: grace, Allocation: topology.Allocation{{Node: node, GPUs: []int{0, 1, 2, 3}}}}
}

// onlyP0AndP2 lets tier 0 preempt every other tier and tier 2 preempt
// tier 3; tier 1 preempts nobody.
var onlyP0AndP2 = preempt.Matrix{{false, true, true, true}, {false, false, false, false}, {false, false, false, true}, {false, false, false, false}}

func runningWhole(id, team string, tier int, node string, age time.Duration) Job {
	return Job{ID: id, Team: team, Tier: TierN(tier), Members: 1, GPUsPerMember: 8, State: Running,
		Started: quotaNow.Add(-age), Allocation: topology.Allocation{{Node: node, GPUs: eight}}}
}

// A zero quota limits nothing, so its team's jobs do not run on borrowed
// GPUs and are not reclaimed before jobs of a lower tier.
func TestZeroQuotaIsNotBorrowed(t *testing.T) {
	victim := func(q *Quota) string {
		snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(2, 8, 1),
			Teams: []Team{{Name: "a", Share: 1, Quota: q}, {Name: "b", Share: 1}},
			Jobs: []Job{runningWhole("a2", "a", 2, "n00", time.Hour), runningWhole("b3", "b", 3, "n01", time.Hour),
				{ID: "p0", Team: "c", Tier: P0, Members: 1, GPUsPerMember: 8, Submitted: quotaNow}}}
		d, err := New(Config{}).Step(snap)
		require.NoError(t, err)
		require.Len(t, d.Evictions, 1)
		return d.Evictions[0].Job
	}
	require.Equal(t, "b3", victim(nil))
	require.Equal(t, "b3", victim(&Quota{}), "a zero quota limits nothing")
	require.Equal(t, "a2", victim(&Quota{GPUs: 4}), "a team above its quota runs on borrowed GPUs")
}

// A team's jobs run on borrowed GPUs only while the team holds more than
// its nominal quota: once a preemptor has reclaimed the excess, a later
// preemptor of the same Step takes the lower tier instead.
func TestBorrowedIsRecountedAfterReclaim(t *testing.T) {
	snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(3, 8, 1),
		Teams: []Team{{Name: "a", Share: 1, Quota: &Quota{GPUs: 8, BorrowLimit: 8}}, {Name: "b", Share: 1}},
		Jobs: []Job{runningWhole("a1", "a", 2, "n00", time.Hour), runningWhole("a2", "a", 2, "n01", 2*time.Hour),
			runningWhole("b3", "b", 3, "n02", time.Hour),
			{ID: "p1", Team: "c", Tier: P0, Members: 1, GPUsPerMember: 8, Submitted: quotaNow},
			{ID: "p2", Team: "c", Tier: P0, Members: 1, GPUsPerMember: 8, Submitted: quotaNow}}}
	for _, mode := range []BackfillMode{EASY, Conservative} {
		// Two preemptors in one Step: a budget large enough for both.
		d, err := New(Config{Backfill: mode, MaxEvictedGPUs: 16}).Step(snap)
		require.NoError(t, err)
		var victims []string
		for _, e := range d.Evictions {
			victims = append(victims, e.Job)
		}
		require.ElementsMatch(t, []string{"a1", "b3"}, victims, "team a keeps its nominal 8 GPUs (%v)", mode)
	}
}

// Submit times outside the range of UnixNano (before 1678, after 2262)
// still order jobs of equal priority: the earlier submission first.
func TestOrderFarSubmitTimes(t *testing.T) {
	for _, old := range []time.Time{time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)} {
		other := quotaNow.AddDate(0, -1, 0)
		first, second := "b-far", "a-near"
		if old.After(other) {
			first, second = second, first
		}
		snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(1, 8, 1), Jobs: []Job{
			{ID: "a-near", Team: "t", Members: 1, GPUsPerMember: 8, Submitted: other},
			{ID: "b-far", Team: "t", Members: 1, GPUsPerMember: 8, Submitted: old}}}
		d, err := New(Config{}).Step(snap)
		require.NoError(t, err)
		require.Len(t, d.Placements, 1)
		require.Equal(t, first, d.Placements[0].Job, "submitted %v", old)
		require.Equal(t, second, d.Pending[0].Job)
	}
}

// Explain gives the priority factors for the built-in multifactor order
// whether it is configured as a value or as a pointer; a nil pointer is
// the default order, and Step does not panic on it.
func TestExplainMultifactorPointer(t *testing.T) {
	snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(1, 8, 1), Teams: []Team{{Name: "t", Share: 1}},
		Jobs: []Job{runningWhole("r", "t", 0, "n00", time.Hour), {ID: "p", Team: "t", Tier: P1, Members: 1, GPUsPerMember: 8, Submitted: quotaNow}}}
	var none *Multifactor
	for _, o := range []Orderer{nil, Multifactor{}, &Multifactor{}, none} {
		_, err := New(Config{Order: o}).Step(snap)
		require.NoError(t, err)
		e, err := New(Config{Order: o}).Explain(snap, "p")
		require.NoError(t, err)
		require.NotNil(t, e.Priority, "%T", o)
		require.Equal(t, 1, e.Priority.Tier)
	}
}

// With time limits not enforced, a running job past its limit has no
// known end: its GPUs are not expected back, so a waiting job of a tier
// that may preempt it does (it used to get a reservation at now on GPUs
// the job still held, Step after Step).
func TestIgnoredLimitPastIsPreempted(t *testing.T) {
	low := runningWhole("low", "t", 3, "n00", 2*time.Hour)
	low.TimeLimit = time.Hour
	snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(1, 8, 1), Jobs: []Job{low,
		{ID: "high", Tier: P1, Members: 1, GPUsPerMember: 8, TimeLimit: time.Hour, Submitted: quotaNow}}}
	d, err := New(Config{IgnoreTimeLimits: true}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Evictions, 1, "%+v", d)
	require.Equal(t, "low", d.Evictions[0].Job)
	require.Equal(t, EvictPreempted, d.Evictions[0].Reason)
	// A job of a tier that may not preempt it waits without a start.
	snap.Jobs[1].Tier = P3
	d, err = New(Config{IgnoreTimeLimits: true}).Step(snap)
	require.NoError(t, err)
	require.Empty(t, d.Evictions)
	require.Empty(t, d.Reservations, "no start is known while low runs past its limit")
}

// The window in which GPUs reserved for others are not a victim's to
// give runs to the latest start of the preemptor's reservation: the
// largest grace among the jobs it may preempt, not among all running
// jobs. A tier-0 job with a long grace made P take two victims where one
// frees enough GPUs before Q's reservation.
func TestPreemptionWindowUsesVictimsGrace(t *testing.T) {
	var nodes []topology.Node
	for _, n := range []string{"n0", "n1", "n2", "n3", "n4"} {
		nodes = append(nodes, topology.Node{Name: n, GPUs: 4})
	}
	jobs := []Job{
		runFour("L", 1, "n1", time.Hour, 90*time.Minute, 0), // frees n1 at +30m
		runFour("VA", 3, "n2", 10*time.Minute, 0, 0),
		runFour("VB", 3, "n3", 20*time.Minute, 0, 0),
		runFour("Z", 0, "n4", time.Hour, 0, time.Hour), // never a victim, long grace
		{ID: "Q", Tier: P1, Members: 2, GPUsPerMember: 4, TimeLimit: time.Hour, Submitted: quotaNow.Add(-time.Hour)},
		{ID: "P", Tier: P2, Members: 2, GPUsPerMember: 4, TimeLimit: 20 * time.Minute, Submitted: quotaNow.Add(-time.Minute)},
	}
	// Two preemptors in one Step: a budget large enough for both.
	d, err := New(Config{Preemption: onlyP0AndP2, Order: TierOrder{}, MaxEvictedGPUs: 8}).Step(&Snapshot{Now: quotaNow, Cluster: topology.Cluster{Nodes: nodes}, Jobs: jobs})
	require.NoError(t, err)
	var victims []string
	for _, e := range d.Evictions {
		if e.By == "P" {
			victims = append(victims, e.Job)
		}
	}
	require.Equal(t, []string{"VA"}, victims, "%+v", d)
}

// A custom victim selector's answer is checked against the GPUs reserved
// for others during the preemptor's run and against its required level:
// Step used to act on a placement that took a GPU reserved for Q, or
// spread a gang over two racks it had to share one of.
func TestCustomSelectorAnswerIsChecked(t *testing.T) {
	node := func(name, rack string) topology.Node {
		return topology.Node{Name: name, GPUs: 4, Domains: map[string]string{"rack": rack}}
	}
	c := topology.Cluster{Levels: []string{"rack"}, Nodes: []topology.Node{node("n0", "r0"), node("n1", "r0"), node("n2", "r1")}}
	jobs := []Job{
		runFour("L", 1, "n1", time.Hour, 90*time.Minute, 0), // frees n1 at +30m: Q is reserved n0+n1 then
		runFour("V", 3, "n2", 10*time.Minute, 0, 0),
		{ID: "Q", Tier: P1, Members: 2, GPUsPerMember: 4, TimeLimit: time.Hour, Submitted: quotaNow.Add(-time.Hour)},
		{ID: "P", Tier: P2, Members: 2, GPUsPerMember: 4, TimeLimit: 2 * time.Hour, Submitted: quotaNow.Add(-time.Minute)},
	}
	// The selector evicts V and places P on n0 and n2: n0 is free now
	// but reserved for Q from +30m, within P's two hours.
	bad := VictimFunc(func(ix *topology.Index, r gang.Request, _ binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool) {
		n0, _ := ix.Lookup("n0")
		n2, _ := ix.Lookup("n2")
		for i, cd := range cands {
			if cd.ID == "V" {
				return []int{i}, gang.Placement{Slots: []gang.Slot{{Node: n0, GPUs: topology.FirstN(4), Members: 1}, {Node: n2, GPUs: topology.FirstN(4), Members: 1}}}, true
			}
		}
		return nil, gang.Placement{}, false
	})
	snap := &Snapshot{Now: quotaNow, Cluster: c, Jobs: jobs}
	d, err := New(Config{Preemption: onlyP0AndP2, Order: TierOrder{}, Victims: bad}).Step(snap)
	require.NoError(t, err)
	require.Empty(t, d.Evictions, "%+v", d)
	// The same answer for a gang that must share a rack: n0 and n2 are in
	// two racks (here nothing is reserved on n0).
	snap.Jobs = []Job{jobs[0], jobs[1], jobs[3]}
	snap.Jobs[2].Topology.Required = "rack"
	d, err = New(Config{Preemption: onlyP0AndP2, Order: TierOrder{}, Victims: bad}).Step(snap)
	require.NoError(t, err)
	require.Empty(t, d.Evictions, "%+v", d)
	// Without the rack requirement the answer stands.
	snap.Jobs[2].Topology.Required = ""
	d, err = New(Config{Preemption: onlyP0AndP2, Order: TierOrder{}, Victims: bad}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Evictions, 1, "%+v", d)
}

// The largest grace among the jobs a tier may preempt is counted again
// once a preemptor took some of them: after P1 evicts VZ (grace 1h), P's
// window no longer reaches Q's reservation through VZ's grace.
func TestPreemptionWindowAfterVictimsGone(t *testing.T) {
	var nodes []topology.Node
	for _, n := range []string{"n0", "n1", "n2", "n3"} {
		nodes = append(nodes, topology.Node{Name: n, GPUs: 4, GPUType: "A"})
	}
	nodes = append(nodes, topology.Node{Name: "n4", GPUs: 4, GPUType: "B"})
	jobs := []Job{
		runFour("L", 1, "n1", time.Hour, 90*time.Minute, 0), // frees n1 at +30m
		runFour("VA", 3, "n2", 10*time.Minute, 0, 0),
		runFour("VB", 3, "n3", 20*time.Minute, 0, 0),
		runFour("VZ", 3, "n4", time.Hour, 0, time.Hour),
		{ID: "Q", Tier: P1, Members: 2, GPUsPerMember: 4, GPUType: "A", TimeLimit: time.Hour, Submitted: quotaNow.Add(-time.Hour)},
		{ID: "P1", Tier: P2, Members: 1, GPUsPerMember: 4, GPUType: "B", TimeLimit: time.Hour, Submitted: quotaNow.Add(-2 * time.Minute)},
		{ID: "P", Tier: P2, Members: 2, GPUsPerMember: 4, GPUType: "A", TimeLimit: 20 * time.Minute, Submitted: quotaNow.Add(-time.Minute)},
	}
	// Two preemptors in one Step: a budget large enough for both.
	d, err := New(Config{Preemption: onlyP0AndP2, Order: TierOrder{}, MaxEvictedGPUs: 8}).Step(&Snapshot{Now: quotaNow, Cluster: topology.Cluster{Nodes: nodes}, Jobs: jobs})
	require.NoError(t, err)
	by := map[string][]string{}
	for _, e := range d.Evictions {
		by[e.By] = append(by[e.By], e.Job)
	}
	require.Equal(t, map[string][]string{"P1": {"VZ"}, "P": {"VA"}}, by, "%+v", d)
}

// A running job whose start the host did not give ends at now plus its
// limit, for preemption as for releases: when that comes before its
// grace would run out, it is not preempted. It was, and with limits not
// enforced its eviction held GPU 0 past the start of A's reservation
// there (invariant 5).
func TestUnknownStartLimitBeforeGrace(t *testing.T) {
	snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(1, 4, 1), Jobs: []Job{
		{ID: "r", Tier: P3, Members: 1, GPUsPerMember: 2, State: Running, TimeLimit: 3 * time.Minute, CheckpointGrace: 6 * time.Minute,
			Allocation: topology.Allocation{{Node: "n00", GPUs: []int{0, 1}}}},
		{ID: "r2", Tier: P3, Members: 1, GPUsPerMember: 2, State: Running, Started: quotaNow.Add(-time.Hour), CheckpointGrace: 10 * time.Minute,
			Allocation: topology.Allocation{{Node: "n00", GPUs: []int{2, 3}}}},
		{ID: "A", Tier: P0, Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: quotaNow.Add(-24 * time.Hour)},
		{ID: "B", Tier: P0, Members: 1, GPUsPerMember: 3, Submitted: quotaNow.Add(-time.Minute)},
	}}
	for _, cfg := range []Config{{IgnoreTimeLimits: true}, {}} {
		d, err := New(cfg).Step(snap)
		require.NoError(t, err)
		for _, e := range d.Evictions {
			require.NotEqual(t, "r", e.Job, "ignore limits %v: %+v", cfg.IgnoreTimeLimits, d.Evictions)
		}
		require.NotEmpty(t, d.Reservations, "%+v", d)
		a := d.Reservations[0]
		require.Equal(t, "A", a.Job)
		if cfg.IgnoreTimeLimits {
			require.Equal(t, quotaNow.Add(3*time.Minute), a.Start, "r ends by itself at its limit")
		}
	}
}

// A behind-reservation job names the reservations it could delay: those
// holding GPUs free now. E fits only on n4, where D is reserved; A, B and
// C are reserved on GPUs that running jobs hold, and E used to name them
// and hide D in "1 more". Explain lists the same.
func TestBehindReservationNamesWhatItDelays(t *testing.T) {
	c := topology.Cluster{}
	for i, g := range []int{2, 2, 2, 1, 1, 1} {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: g})
	}
	run := func(id, node string, gpus []int, limit time.Duration) Job {
		return Job{ID: id, Tier: P3, Members: 1, GPUsPerMember: len(gpus), State: Running, Started: quotaNow,
			TimeLimit: limit, Allocation: topology.Allocation{{Node: node, GPUs: gpus}}}
	}
	pend := func(id string, members, gpus int, ago time.Duration) Job {
		return Job{ID: id, Tier: P3, Members: members, GPUsPerMember: gpus, TimeLimit: 10 * time.Hour, Submitted: quotaNow.Add(-ago)}
	}
	snap := &Snapshot{Now: quotaNow, Cluster: c, Jobs: []Job{
		run("r0", "n0", []int{0, 1}, time.Hour), run("r1", "n1", []int{0, 1}, 2*time.Hour),
		run("r2", "n2", []int{0, 1}, 3*time.Hour), run("r3", "n3", []int{0}, 20*time.Hour), run("r5", "n5", []int{0}, 4*time.Hour),
		pend("A", 1, 2, 5*time.Hour), pend("B", 1, 2, 4*time.Hour), pend("C", 1, 2, 3*time.Hour),
		pend("D", 2, 1, 2*time.Hour), pend("E", 1, 1, time.Hour),
	}}
	s := New(Config{Reservations: 4, Order: TierOrder{}})
	d, err := s.Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Reservations, 4, "%+v", d)
	require.Len(t, d.Pending, 1)
	require.Equal(t, "E", d.Pending[0].Job)
	require.Equal(t, ReasonBehindReservation, d.Pending[0].Reason)
	require.Equal(t, `fits now but would delay the reservation of "D" at 2026-12-02T04:00:00Z`, d.Pending[0].Message)
	e, err := s.Explain(snap, "E")
	require.NoError(t, err)
	require.Equal(t, []string{"D at 2026-12-02T04:00:00Z"}, e.Delays)
}

// A custom selector that names a victim whose GPUs its placement does
// not use gets only the victims it needs evicted: W, chosen for nothing,
// keeps running.
func TestSpareVictimsOfCustomSelectorStay(t *testing.T) {
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4}, {Name: "n1", GPUs: 4}}}
	jobs := []Job{
		runFour("V", 3, "n0", 10*time.Minute, 0, 0),
		runFour("W", 3, "n1", 10*time.Minute, 0, 0),
		{ID: "P", Tier: P2, Members: 1, GPUsPerMember: 4, TimeLimit: time.Hour, Submitted: quotaNow.Add(-time.Minute)},
	}
	both := VictimFunc(func(ix *topology.Index, r gang.Request, _ binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool) {
		n0, _ := ix.Lookup("n0")
		var vs []int
		for i := range cands {
			vs = append(vs, i)
		}
		return vs, gang.Placement{Slots: []gang.Slot{{Node: n0, GPUs: topology.FirstN(4), Members: 1}}}, len(vs) == 2
	})
	d, err := New(Config{Preemption: onlyP0AndP2, Order: TierOrder{}, Victims: both}).Step(&Snapshot{Now: quotaNow, Cluster: c, Jobs: jobs})
	require.NoError(t, err)
	require.Len(t, d.Evictions, 1, "%+v", d)
	require.Equal(t, "V", d.Evictions[0].Job)
	require.Equal(t, "P", d.Evictions[0].By)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, "P", d.Reservations[0].Job)
}

// A team runs on borrowed GPUs only when the GPUs it holds exceed its
// nominal quota, not when a reservation of its own promises it more
// later: team a holds its nominal 8 GPUs and has a job reserved for an
// hour from now on another GPU type, so a preemptor takes the lower
// tier b3, as it does without that reservation, not a's tier-2 job.
func TestReservationIsNotBorrowing(t *testing.T) {
	cl := topology.Cluster{Nodes: []topology.Node{
		{Name: "n00", GPUs: 8, GPUType: "H"}, {Name: "n01", GPUs: 8, GPUType: "H"},
		{Name: "n02", GPUs: 8, GPUType: "X"}, {Name: "n03", GPUs: 8, GPUType: "Y"}}}
	step := func(reserved bool) *Decision {
		jobs := []Job{runningWhole("a2", "a", 2, "n00", time.Hour), runningWhole("b3", "b", 3, "n01", time.Hour),
			{ID: "z0", Team: "z", Tier: P0, Members: 1, GPUsPerMember: 8, State: Running, Started: quotaNow.Add(-time.Hour),
				TimeLimit: 2 * time.Hour, Allocation: topology.Allocation{{Node: "n02", GPUs: eight}}},
			{ID: "p0", Team: "c", Tier: P0, Members: 1, GPUsPerMember: 8, GPUType: "H", Submitted: quotaNow}}
		if reserved {
			// Ahead of p0 (older), blocked behind z0's tier 0 on the only
			// node of its type, admitted on n03's idle GPUs.
			jobs = append(jobs, Job{ID: "ap", Team: "a", Tier: P0, Members: 1, GPUsPerMember: 8, GPUType: "X",
				Submitted: quotaNow.Add(-time.Hour)})
		}
		snap := &Snapshot{Now: quotaNow, Cluster: cl, Jobs: jobs,
			Teams: []Team{{Name: "a", Share: 1, Quota: &Quota{GPUs: 8, BorrowLimit: 8}}, {Name: "b", Share: 1},
				{Name: "c", Share: 1}, {Name: "z", Share: 1}}}
		d, err := New(Config{}).Step(snap)
		require.NoError(t, err)
		return d
	}
	d := step(false)
	require.Len(t, d.Evictions, 1)
	require.Equal(t, "b3", d.Evictions[0].Job)
	d = step(true)
	require.Len(t, d.Reservations, 2)
	require.Equal(t, "ap", d.Reservations[0].Job, "a's job is reserved first")
	require.Len(t, d.Evictions, 1)
	require.Equal(t, "b3", d.Evictions[0].Job, "a holds no more than its nominal quota")
}

// The Admitter is asked at most once per pending job, and not about a
// job of a GPU type the cluster lacks or one that can never fit: those
// wait with reasons of their own, as its doc says.
func TestAdmitterAskedOnlyAboutJobsThatCanFit(t *testing.T) {
	calls := map[string]int{}
	cfg := Config{Admit: AdmitFunc(func(_ *Snapshot, j *Job, _ Usage) (bool, string) {
		calls[j.ID]++
		return j.ID != "refused", "no budget"
	})}
	snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(2, 8, 1), Jobs: []Job{
		{ID: "huge", Tier: P1, Members: 3, GPUsPerMember: 8, Submitted: quotaNow},
		{ID: "odd", Tier: P1, Members: 1, GPUsPerMember: 8, GPUType: "Z", Submitted: quotaNow},
		{ID: "refused", Tier: P1, Members: 1, GPUsPerMember: 8, Submitted: quotaNow},
		{ID: "runs", Tier: P1, Members: 1, GPUsPerMember: 8, Submitted: quotaNow},
	}}
	d, err := New(cfg).Step(snap)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"refused": 1, "runs": 1}, calls)
	reasons := map[string]Reason{}
	for _, w := range d.Pending {
		reasons[w.Job] = w.Reason
	}
	require.Equal(t, map[string]Reason{"huge": ReasonUnsatisfiable, "odd": ReasonGPUType, "refused": ReasonQuota}, reasons)
}

// The Usage an Admitter sees, worked by hand. Free now: the healthy free
// GPUs of ready nodes (n0: 2–5, GPU 7 being sick and 0, 1, 6 held; n2:
// 4–7), 8, not those of draining n1 or down n3. Being freed: E1's 4 GPUs
// on ready n2 and R1's 2, stopped at its time limit, on ready n0 (not E2's
// on draining n1, nor R2's on down n3), 6. The team holds R3's 2 GPUs (R1
// and R2 are leaving). Each job placed or reserved then counts: P1 takes
// one free GPU; P2's reservation takes E1's GPUs and n2's free ones.
func TestAdmitterUsageByHand(t *testing.T) {
	cl := topology.Cluster{Nodes: []topology.Node{
		{Name: "n0", GPUs: 8, Unhealthy: []int{7}}, {Name: "n1", GPUs: 8, State: topology.Draining},
		{Name: "n2", GPUs: 8}, {Name: "n3", GPUs: 8, State: topology.Down}}}
	got := map[string]Usage{}
	cfg := Config{Admit: AdmitFunc(func(_ *Snapshot, j *Job, u Usage) (bool, string) {
		got[j.ID] = u
		return true, ""
	})}
	held := func(id string, state JobState, node string, gpus ...int) Job {
		return Job{ID: id, Team: "t", Tier: P3, Members: 1, GPUsPerMember: len(gpus), State: state,
			Allocation: topology.Allocation{{Node: node, GPUs: gpus}}}
	}
	e1 := held("E1", Evicting, "n2", 0, 1, 2, 3)
	e1.EvictedAt, e1.CheckpointGrace = quotaNow.Add(-time.Minute), 5*time.Minute
	r1 := held("R1", Running, "n0", 0, 1)
	r1.Started, r1.TimeLimit, r1.CheckpointGrace = quotaNow.Add(-2*time.Hour), time.Hour, time.Minute
	snap := &Snapshot{Now: quotaNow, Cluster: cl, Jobs: []Job{e1, held("E2", Evicting, "n1", 0, 1), r1,
		held("R2", Running, "n3", 0, 1), held("R3", Running, "n0", 6, 7),
		{ID: "P1", Team: "t", Tier: P1, Members: 1, GPUsPerMember: 1, Submitted: quotaNow},
		{ID: "P2", Team: "t", Tier: P2, Members: 1, GPUsPerMember: 8, Submitted: quotaNow},
		{ID: "P3", Team: "t", Tier: P3, Members: 1, GPUsPerMember: 1, Submitted: quotaNow},
	}}
	d, err := New(cfg).Step(snap)
	require.NoError(t, err)
	require.Equal(t, []Placement{{Job: "P1", Allocation: topology.Allocation{{Node: "n0", GPUs: []int{2}}}},
		{Job: "P3", Allocation: topology.Allocation{{Node: "n0", GPUs: []int{3}}}}}, d.Placements)
	require.Len(t, d.Reservations, 1)
	require.Equal(t, topology.Allocation{{Node: "n2", GPUs: eight}}, d.Reservations[0].Allocation)
	require.Equal(t, map[string]Usage{
		"P1": {TeamGPUs: 2, IdleGPUs: 8 + 6},
		"P2": {TeamGPUs: 2 + 1, IdleGPUs: 7 + 6},
		"P3": {TeamGPUs: 2 + 1 + 8, IdleGPUs: 7 + 2},
	}, got)
}
