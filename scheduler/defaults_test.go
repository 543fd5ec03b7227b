package scheduler

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/topology"
)

// The seed's A, B (64 GPUs each) and C (96), submitted in that order, one
// team, one tier, pending together on 128 GPUs: the default order starts A
// and B; C, submitted last, does not overtake them by its size.
func TestSeedGangTogetherStartsAAndB(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "repro", "seed-gang-together.json"))
	require.NoError(t, err)
	defer f.Close()
	snap, err := DecodeSnapshot(f)
	require.NoError(t, err)
	d, err := New(Config{}).Step(snap)
	require.NoError(t, err)
	var placed []string
	for _, p := range d.Placements {
		placed = append(placed, p.Job)
	}
	require.Equal(t, []string{"A", "B"}, placed)
	require.Len(t, d.Pending, 1)
	require.Equal(t, "C", d.Pending[0].Job)

	// A policy that weighs size may let the larger job go first.
	w := fairshare.Weights{Size: 1000}
	d, err = New(Config{FairShare: FairShare{Weights: w}}).Step(snap)
	require.NoError(t, err)
	require.Len(t, d.Placements, 1)
	require.Equal(t, "C", d.Placements[0].Job)
}

// With the default weights, the jobs of one tier and one team are ordered
// by submit time (then ID), whatever their sizes, ages and the team's
// fair-share factor.
func TestPropertyDefaultOrderIsSubmissionOrder(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	rapid.Check(t, func(rt *rapid.T) {
		s := &Snapshot{Now: now, Teams: []Team{
			{Name: "t", Share: rapid.Float64Range(1, 100).Draw(rt, "share"), Usage: rapid.Float64Range(0, 1e9).Draw(rt, "usage")},
			{Name: "u", Share: 1},
		}}
		nodes := rapid.IntRange(1, 64).Draw(rt, "nodes")
		for i := range nodes {
			s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: "n" + string(rune('a'+i%26)) + string(rune('a'+i/26)), GPUs: 8})
		}
		n := rapid.IntRange(1, 30).Draw(rt, "jobs")
		for i := range n {
			// Ages from the future to beyond AgeMax, some equal.
			age := time.Duration(rapid.IntRange(-2, 400).Draw(rt, "ageHours")) * time.Hour / 2
			s.Jobs = append(s.Jobs, Job{
				ID: string(rune('A' + i)), Team: "t", Tier: P2,
				Members: rapid.IntRange(1, 64).Draw(rt, "members"), GPUsPerMember: rapid.IntRange(1, 8).Draw(rt, "gpus"),
				Submitted: now.Add(-age),
			})
		}
		jobs := make([]*Job, len(s.Jobs))
		for i := range s.Jobs {
			jobs[i] = &s.Jobs[i]
		}
		Multifactor{}.Order(s, jobs)
		for i := 1; i < len(jobs); i++ {
			a, b := jobs[i-1], jobs[i]
			if b.Submitted.Before(a.Submitted) || (b.Submitted.Equal(a.Submitted) && b.ID < a.ID) {
				rt.Fatalf("%s (submitted %v, %d GPUs) goes before %s (submitted %v, %d GPUs)",
					a.ID, a.Submitted, a.GPUs(), b.ID, b.Submitted, b.GPUs())
			}
		}
	})
}
