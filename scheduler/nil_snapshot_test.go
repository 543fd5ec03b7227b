package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
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
	jobs := []*Job{{ID: "b", Tier: 1}, {ID: "a", Tier: 1}, {ID: "c", Tier: 0}}
	Multifactor{}.Order(nil, jobs)
	require.Equal(t, []string{"c", "a", "b"}, []string{jobs[0].ID, jobs[1].ID, jobs[2].ID})
	ok, why := QuotaAdmitter{}.Admit(nil, &Job{ID: "a", Team: "t", Members: 1, GPUsPerMember: 8}, Usage{})
	require.True(t, ok, why)
}
