package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

func guardSnap() *Snapshot {
	return &Snapshot{Now: spreadNow, Cluster: uniformCluster(2, 8, 1), Jobs: []Job{
		{ID: "a", Members: 1, GPUsPerMember: 4, Submitted: spreadNow},
		{ID: "b", Members: 1, GPUsPerMember: 8, Submitted: spreadNow.Add(time.Second)},
	}}
}

// A policy that writes into the snapshot is caught: Step returns an
// error and no decision, rather than a decision built on corrupted input.
func TestPolicyThatModifiesTheSnapshotIsCaught(t *testing.T) {
	for name, cfg := range map[string]Config{
		"orderer": {Order: OrderFunc(func(_ *Snapshot, jobs []*Job) { jobs[0].Members = 2 })},
		"orderer-nodes": {Order: OrderFunc(func(s *Snapshot, _ []*Job) {
			s.Cluster.Nodes[0].GPUs = 4
		})},
		"admitter": {Admit: AdmitFunc(func(s *Snapshot, j *Job, _ Usage) (bool, string) {
			j.GPUsPerMember = 1
			return true, ""
		})},
		// Changes that would make Step panic before its check.
		"orderer-zero-gpus": {Order: OrderFunc(func(_ *Snapshot, jobs []*Job) { jobs[0].GPUsPerMember = 0 })},
		"reserver-zero-gpus": {Reserve: ReserveFunc(func(j *Job, _ int) bool {
			j.GPUsPerMember = 0
			return true
		})},
		"admitter-drops-jobs": {Admit: AdmitFunc(func(s *Snapshot, _ *Job, _ Usage) (bool, string) {
			s.Jobs = nil
			return false, "no"
		})},
	} {
		t.Run(name, func(t *testing.T) {
			snap := guardSnap()
			d, err := New(cfg).Step(snap)
			require.ErrorIs(t, err, ErrPolicyModifiedSnapshot)
			require.Nil(t, d)
		})
	}
}

// An Orderer must return a permutation of the jobs it was given.
func TestOrdererMustPermute(t *testing.T) {
	for name, ord := range map[string]OrderFunc{
		"duplicate": func(_ *Snapshot, jobs []*Job) { jobs[1] = jobs[0] },
		"foreign":   func(_ *Snapshot, jobs []*Job) { jobs[0] = &Job{ID: "x"} },
	} {
		t.Run(name, func(t *testing.T) {
			d, err := New(Config{Order: ord}).Step(guardSnap())
			require.ErrorIs(t, err, ErrPolicyOrder)
			require.Nil(t, d)
		})
	}
}

// A well-behaved custom policy passes the guard.
func TestReadOnlyPolicyPasses(t *testing.T) {
	cfg := Config{Order: OrderFunc(func(_ *Snapshot, jobs []*Job) {
		jobs[0], jobs[1] = jobs[1], jobs[0] // b first
	})}
	d, err := New(cfg).Step(guardSnap())
	require.NoError(t, err)
	require.Len(t, d.Placements, 2)
}

// A policy that grows a running job's allocation before the Step looks
// for preemption victims is caught too: the Step reads what running jobs
// hold once, at its start, and must not trip over the change.
func TestPolicyThatGrowsAnAllocationIsCaught(t *testing.T) {
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	snap := &Snapshot{Now: spreadNow, Cluster: uniformCluster(2, 8, 1), Jobs: []Job{
		{ID: "hi", Tier: P0, Members: 1, GPUsPerMember: 8, Submitted: spreadNow},
		{ID: "lo", Tier: P3, Members: 1, GPUsPerMember: 8, State: Running, Started: spreadNow,
			Allocation: topology.Allocation{{Node: "n00", GPUs: all}}},
		{ID: "lo2", Tier: P3, Members: 1, GPUsPerMember: 8, State: Running, Started: spreadNow,
			Allocation: topology.Allocation{{Node: "n01", GPUs: all}}},
	}}
	grow := OrderFunc(func(s *Snapshot, _ []*Job) {
		s.Jobs[1].Allocation = append(s.Jobs[1].Allocation, topology.NodeGPUs{Node: "n01", GPUs: []int{0}})
	})
	d, err := New(Config{Order: grow}).Step(snap)
	require.ErrorIs(t, err, ErrPolicyModifiedSnapshot)
	require.Nil(t, d)
}

// A policy that panics without changing the snapshot is the policy's own
// crash: Step lets the panic through rather than calling it a change.
func TestPolicyPanicIsNotCalledAChange(t *testing.T) {
	cfg := Config{Order: OrderFunc(func(_ *Snapshot, _ []*Job) { panic("boom") })}
	require.PanicsWithValue(t, "boom", func() { _, _ = New(cfg).Step(guardSnap()) })
}
