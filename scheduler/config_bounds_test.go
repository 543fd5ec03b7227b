package scheduler

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/internal/measure"
	"github.com/gpusched/gpusched/preempt"
	"github.com/stretchr/testify/require"
)

// TestConfigTiersBound: Tiers above MaxTiers, an empty non-nil matrix and
// one with too many rows are config errors from Step, Explain, Validate
// and DecodeSnapshot alike (never a panic, never a *ValidationError
// about the snapshot's jobs).
func TestConfigTiersBound(t *testing.T) {
	doc := snapJSON(`{"id":"a","gpusPerMember":1,"tier":1}`)
	snap, err := DecodeSnapshot(strings.NewReader(doc))
	require.NoError(t, err)
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Tiers: math.MaxInt}, "config: tiers must be <= 256, got 9223372036854775807"},
		{Config{Tiers: 20000}, "config: tiers must be <= 256, got 20000"},
		{Config{Tiers: MaxTiers + 1}, "config: tiers must be <= 256, got 257"},
		{Config{Preemption: preempt.Matrix{}}, "config: preemption.matrix: no tiers (want at least one row)"},
		{Config{Preemption: make(preempt.Matrix, MaxTiers+1)}, "config: preemption.matrix: 257 tiers, more than the 256 allowed"},
		{Config{Preemption: preempt.Matrix{{false, true}}}, "config: preemption.matrix[0]: row has 2 entries, want 1 (the matrix must be square)"},
	}
	for _, tt := range tests {
		s := New(tt.cfg)
		_, err := s.Step(snap)
		requireConfigErr(t, err, tt.want)
		_, err = s.Explain(snap, "a")
		requireConfigErr(t, err, tt.want)
		requireConfigErr(t, s.Validate(snap), tt.want)
		_, err = s.DecodeSnapshot(strings.NewReader(doc))
		requireConfigErr(t, err, tt.want)
	}
}

func requireConfigErr(t *testing.T, err error, want string) {
	t.Helper()
	require.EqualError(t, err, want)
	var ve *ValidationError
	require.False(t, errors.As(err, &ve), "a config error is not a snapshot's *ValidationError")
}

// TestConfigMaxTiersCost: a Step with the most tiers allowed allocates
// well under a megabyte more than one with the default four (the
// ordered matrix of MaxTiers tiers is 64 KiB); Tiers: 20000 once
// allocated 400 MB per Step.
func TestConfigMaxTiersCost(t *testing.T) {
	snap, err := DecodeSnapshot(strings.NewReader(snapJSON(`{"id":"a","gpusPerMember":1,"tier":1}`)))
	require.NoError(t, err)
	alloc := func(cfg Config) uint64 {
		s := New(cfg)
		var err error
		bytes, _ := measure.Allocated(func() { _, err = s.Step(snap) })
		require.NoError(t, err)
		return bytes
	}
	base, most := alloc(Config{}), alloc(Config{Tiers: MaxTiers})
	require.Less(t, most, base+1<<20, "bytes allocated by a Step with %d tiers", MaxTiers)
}
