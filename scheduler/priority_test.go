package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/topology"
)

// Jobs whose tier, priority and submit time are equal are ordered by ID,
// whether or not they arrive in ID order.
func TestMultifactorTiesByID(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := &Snapshot{Now: now, Teams: []Team{{Name: "t", Share: 1}}}
	s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: "n0", GPUs: 8})
	mk := func(id string, tier int) Job {
		return Job{ID: id, Team: "t", Tier: tier, Members: 1, GPUsPerMember: 1, Submitted: now.Add(-time.Hour)}
	}
	for _, ids := range [][]string{{"c", "a", "b"}, {"a", "b", "c"}, {"b", "c", "a"}} {
		s.Jobs = s.Jobs[:0]
		for _, id := range ids {
			s.Jobs = append(s.Jobs, mk(id, 2))
		}
		s.Jobs = append(s.Jobs, mk("z", 1)) // a higher tier goes first whatever its ID
		jobs := make([]*Job, len(s.Jobs))
		for i := range s.Jobs {
			jobs[i] = &s.Jobs[i]
		}
		Multifactor{}.Order(s, jobs)
		var got []string
		for _, j := range jobs {
			got = append(got, j.ID)
		}
		require.Equal(t, []string{"z", "a", "b", "c"}, got, "input order %v", ids)
	}
}
