package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/fairshare"
)

// TestNilSnapshotIsAnError: every entry point that takes a snapshot
// answers a nil one with an error (or, for Factors and the built-in
// policies, as an empty snapshot), never a panic.
func TestNilSnapshotIsAnError(t *testing.T) {
	s := New(Config{})
	check := func(name string, err error) {
		var ve *ValidationError
		require.True(t, errors.As(err, &ve), "%s: %v", name, err)
		require.Equal(t, "snapshot: snapshot is nil", err.Error(), name)
	}
	check("Validate", Validate(nil))
	check("Scheduler.Validate", s.Validate(nil))
	d, err := s.Step(nil)
	require.Nil(t, d)
	check("Step", err)
	e, err := s.Explain(nil, "a")
	require.Nil(t, e)
	check("Explain", err)
	f := Factors(nil)
	require.NotNil(t, f)
	require.Equal(t, Factors(&Snapshot{}), f)
	jobs := []*Job{{ID: "b", Tier: P1}, {ID: "a", Tier: P1}, {ID: "c", Tier: P0}}
	Multifactor{}.Order(nil, jobs)
	require.Equal(t, []string{"c", "a", "b"}, []string{jobs[0].ID, jobs[1].ID, jobs[2].ID})
	ok, why := QuotaAdmitter{}.Admit(nil, &Job{ID: "a", Team: "t", Members: 1, GPUsPerMember: 8}, Usage{})
	require.True(t, ok, why)
}

// A Config whose modes are none of the package's constants is an error
// from Step and Explain, not EASY, priority order or Fair Tree in
// silence.
func TestUnknownModesAreErrors(t *testing.T) {
	snap := &Snapshot{Now: quotaNow, Cluster: uniformCluster(1, 8, 1),
		Jobs: []Job{{ID: "a", Tier: P3, Members: 1, GPUsPerMember: 1, Submitted: quotaNow}}}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Backfill: NoBackfill + 1}, "config: backfill: unknown mode 3"},
		{Config{BackfillOrder: ShortestFirst + 1}, "config: backfillOrder: unknown order 2"},
		{Config{FairShare: FairShare{Algorithm: fairshare.Classic + 1}}, "config: fairshare.algorithm: unknown algorithm 2"},
		{Config{FairShare: FairShare{Algorithm: -1}}, "config: fairshare.algorithm: unknown algorithm -1"},
		{Config{Order: Multifactor{Algorithm: 7}}, "config: order.algorithm: unknown algorithm 7"},
		{Config{Order: &Multifactor{Algorithm: 7}}, "config: order.algorithm: unknown algorithm 7"},
	} {
		d, err := New(tc.cfg).Step(snap)
		require.Nil(t, d)
		require.EqualError(t, err, tc.want)
		_, err = New(tc.cfg).Explain(snap, "a")
		require.EqualError(t, err, tc.want)
		require.EqualError(t, New(tc.cfg).Validate(snap), tc.want)
	}
	for _, cfg := range []Config{{}, {Backfill: NoBackfill, BackfillOrder: ShortestFirst, FairShare: FairShare{Algorithm: fairshare.Classic}},
		{Order: Multifactor{Algorithm: fairshare.Classic}}, {Order: (*Multifactor)(nil)}} {
		_, err := New(cfg).Step(snap)
		require.NoError(t, err)
	}
}
