package scheduler

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/topology"
)

// Jobs whose tier, priority and submit time are equal are ordered by ID,
// whether or not they arrive in ID order.
func TestMultifactorTiesByID(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := &Snapshot{Now: now, Teams: []Team{{Name: "t", Share: 1}}}
	s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: "n0", GPUs: 8})
	mk := func(id string, tier int) Job {
		return Job{ID: id, Team: "t", Tier: TierN(tier), Members: 1, GPUsPerMember: 1, Submitted: now.Add(-time.Hour)}
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

// Multifactor.Order agrees with a plain comparison sort by tier,
// priority, submit time and ID, on jobs with many ties (few teams, sizes
// and submit times; tiers that may be negative or large) or with
// priorities that differ in any bit, arriving in ID order or
// shuffled.
func TestMultifactorOrderAsCompared(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		s := &Snapshot{Now: now, Teams: []Team{{Name: "a", Share: 2, Usage: 5}, {Name: "b", Share: 1}}}
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: "n0", GPUs: 8})
		n := 1 + rng.IntN(300)
		for i := range n {
			s.Jobs = append(s.Jobs, Job{ID: fmt.Sprintf("j%04d", i), Team: []string{"a", "b", "c"}[rng.IntN(3)],
				Tier: TierN(rng.IntN(5) - 1<<rng.IntN(2)), Members: 1 + rng.IntN(2), GPUsPerMember: 1 << rng.IntN(3),
				Submitted: now.Add(-time.Duration(rng.IntN(4)) * time.Hour * time.Duration(1+rng.IntN(100)) / 7)})
			switch round % 4 {
			case 2: // submit times, and so priorities, apart at every scale
				s.Jobs[i].Submitted = now.Add(-time.Hour - time.Duration(rng.Int64N(1<<rng.IntN(50))))
			case 3: // tiers of any size, past 32 bits too
				s.Jobs[i].Tier = TierN(int(rng.Int32()) - 1<<30 + rng.IntN(2))
				if rng.IntN(3) == 0 {
					s.Jobs[i].Tier = TierN(int(rng.Int64()) - 1<<62 + rng.IntN(2)<<32)
				}
			}
		}
		jobs := make([]*Job, n)
		for i := range s.Jobs {
			jobs[i] = &s.Jobs[i]
		}
		if round%2 == 1 {
			rng.Shuffle(n, func(a, b int) { jobs[a], jobs[b] = jobs[b], jobs[a] })
		}
		want := slices.Clone(jobs)
		var m Multifactor
		if round%5 == 4 { // priorities from 0 to 3: below and above 2, a change of exponent
			m.Weights = fairshare.Weights{Explicit: true, Age: 3, AgeMax: 8 * time.Hour}
		}
		fs := Factors(s)
		prio := func(j *Job) float64 {
			return m.Weights.Priority(fairshare.JobFactors{Tier: j.Tier.Level(DefaultTiers), FairShare: fs.Value(j.Team, 0),
				Age: now.Sub(j.Submitted), GPUs: j.GPUs(), ClusterGPUs: 8})
		}
		slices.SortFunc(want, func(a, b *Job) int {
			if c := cmp.Compare(a.Tier.Level(DefaultTiers), b.Tier.Level(DefaultTiers)); c != 0 {
				return c
			}
			if c := cmp.Compare(prio(b), prio(a)); c != 0 {
				return c
			}
			if c := a.Submitted.Compare(b.Submitted); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		m.Order(s, jobs)
		require.Equal(t, want, jobs, "round %d", round)
	}
}

// A job without a submit time counts as submitted at the earliest time,
// as its doc says: the full age factor, and first among equals under both
// built-in orders.
func TestZeroSubmittedIsOldest(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s := &Snapshot{Now: now, Cluster: topology.Uniform(1, 8, ""), Jobs: []Job{
		{ID: "a", Tier: P2, Members: 1, GPUsPerMember: 1, Submitted: now.Add(-time.Hour)},
		{ID: "b", Tier: P2, Members: 1, GPUsPerMember: 1}}}
	for _, o := range []Orderer{Multifactor{}, Multifactor{Weights: fairshare.Weights{Explicit: true}}, TierOrder{}} {
		jobs := []*Job{&s.Jobs[0], &s.Jobs[1]}
		o.Order(s, jobs)
		require.Equal(t, "b", jobs[0].ID, "%T %+v", o, o)
	}
	e, err := New(Config{}).Explain(s, "b")
	require.NoError(t, err)
	require.Equal(t, 1.0, e.Priority.Age)
}
