package scheduler_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestValidateEligibleNodesCost holds the validation of eligible-node
// lists to a cost that does not grow with the names listed: a host that
// gives each of J pods a list of the N-1 nodes it tolerates (a tainted
// node left out) hands Step J×(N-1) names, and checking them must cost
// lookups, not an allocation (a formatted field path, a map) per name.
// With a path formatted per name it allocated about 2 per name (40,000
// here).
func TestValidateEligibleNodesCost(t *testing.T) {
	const nodes, jobs = 200, 100
	s := &scheduler.Snapshot{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	var names []string
	for i := range nodes {
		name := fmt.Sprintf("n%03d", i)
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: name, GPUs: 8})
		names = append(names, name)
	}
	for i := range jobs {
		s.Jobs = append(s.Jobs, scheduler.Job{ID: fmt.Sprintf("j%03d", i), Members: 1, GPUsPerMember: 1, Tier: scheduler.TierN(3),
			EligibleNodes: slices.Clone(names[1:])})
	}
	require.NoError(t, scheduler.Validate(s))
	allocs := testing.AllocsPerRun(5, func() { _ = scheduler.Validate(s) })
	t.Logf("%.0f allocations for %d names, a list per job", allocs, jobs*(nodes-1))
	require.Less(t, allocs, float64(4*jobs+2*nodes), "allocations validating %d eligible-node names", jobs*(nodes-1))

	// One list shared by every job (as a host gives one list to every
	// pod of one placement rule) costs no more.
	for i := range s.Jobs {
		s.Jobs[i].EligibleNodes = names[1:]
	}
	require.NoError(t, scheduler.Validate(s))
	shared := testing.AllocsPerRun(5, func() { _ = scheduler.Validate(s) })
	t.Logf("%.0f allocations, one list shared", shared)
	require.LessOrEqual(t, shared, allocs)

	s.Jobs[7].EligibleNodes = append(names[1:4:4], "n002")
	err := scheduler.Validate(s)
	require.ErrorContains(t, err, `jobs[7] "j007": eligibleNodes[3]`)
	require.ErrorContains(t, err, `node "n002" listed twice (also eligibleNodes[1])`)
	s.Jobs[7].EligibleNodes = []string{"n001", "nope"}
	require.ErrorContains(t, scheduler.Validate(s), `jobs[7] "j007": eligibleNodes[1]`)
}

// TestValidatePlanCost: validating a valid plan formats no field path
// (a host passes back thousands of entries every Step): the allocations
// do not grow with the entries. Formatting paths per entry, as it once
// did, is over 2,000 allocations for these 1,000 entries.
func TestValidatePlanCost(t *testing.T) {
	s := &scheduler.Snapshot{Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
		Cluster: topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8}}}}
	for i := range 1000 {
		s.Plan = append(s.Plan, scheduler.Reservation{Job: fmt.Sprintf("j%04d", i), Start: s.Now.Add(time.Hour),
			Allocation: topology.Allocation{{Node: "n0", GPUs: []int{0, 1}}}})
	}
	require.NoError(t, scheduler.Validate(s))
	allocs := testing.AllocsPerRun(5, func() { _ = scheduler.Validate(s) })
	require.Less(t, allocs, 50.0, "allocations validating 1,000 plan entries")
}
