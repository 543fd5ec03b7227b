package fairshare

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWeightsResolved(t *testing.T) {
	require.Equal(t, Weights{FairShare: 1000, Age: 100, Size: 0, AgeMax: 168 * time.Hour, Explicit: true}, DefaultWeights())
	require.Equal(t, DefaultWeights(), Weights{}.Resolved())
	require.Equal(t, Weights{FairShare: 5, Age: 100, Size: 0, AgeMax: time.Hour, Explicit: true},
		Weights{FairShare: 5, AgeMax: time.Hour}.Resolved())
	require.Equal(t, Weights{FairShare: 1000, AgeMax: DefaultAgeMax, Explicit: true},
		Weights{FairShare: 1000, Explicit: true}.Resolved(), "explicit zero weights stay zero")
}

func TestWeightsValidate(t *testing.T) {
	require.NoError(t, Weights{}.Validate())
	require.EqualError(t, Weights{Age: -1}.Validate(), "fairshare: weights.age must be a finite number >= 0, got -1")
	require.Error(t, Weights{FairShare: math.NaN()}.Validate())
	require.Error(t, Weights{Size: math.Inf(1)}.Validate())
	require.EqualError(t, Weights{AgeMax: -time.Hour}.Validate(), "fairshare: ageMax must be >= 0, got -1h0m0s")
}

func TestAgeAndSizeFactors(t *testing.T) {
	for _, tc := range []struct {
		age, max time.Duration
		want     float64
	}{
		{0, 0, 0}, {-time.Hour, 0, 0}, {84 * time.Hour, 0, 0.5}, {168 * time.Hour, 0, 1},
		{1000 * time.Hour, 0, 1}, {time.Hour, 4 * time.Hour, 0.25},
	} {
		require.InDelta(t, tc.want, AgeFactor(tc.age, tc.max), 1e-15, "%v/%v", tc.age, tc.max)
	}
	for _, tc := range []struct {
		gpus, cluster int
		want          float64
	}{{0, 256, 0}, {-8, 256, 0}, {64, 256, 0.25}, {512, 256, 1}, {8, 0, 0}} {
		require.InDelta(t, tc.want, SizeFactor(tc.gpus, tc.cluster), 1e-15, "%d/%d", tc.gpus, tc.cluster)
	}
}

func TestPriority(t *testing.T) {
	f := JobFactors{Tier: 1, FairShare: 0.5, Age: 84 * time.Hour, GPUs: 64, ClusterGPUs: 256}
	tests := []struct {
		name string
		w    Weights
		f    JobFactors
		want float64
	}{
		{"defaults", Weights{}, f, 1000*0.5 + 100*0.5},
		{"size weighted", Weights{Size: 10}, f, 1000*0.5 + 100*0.5 + 10*0.25},
		{"explicit zeros", Weights{FairShare: 1000, Explicit: true}, f, 500},
		{"all explicit zero", Weights{Explicit: true}, f, 0},
		{"age max", Weights{AgeMax: 42 * time.Hour}, f, 500 + 100},
		{"fair-share clamped", Weights{}, JobFactors{FairShare: 7}, 1000},
		{"NaN fair-share", Weights{}, JobFactors{FairShare: math.NaN()}, 0},
		{"invalid weights count 0", Weights{FairShare: math.NaN(), Age: -1, Size: math.Inf(1)}, f, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, tc.w.Priority(tc.f), 1e-12)
		})
	}
}

func TestCompareTierFirst(t *testing.T) {
	var w Weights
	prod := JobFactors{Tier: 0, FairShare: 0}
	rich := JobFactors{Tier: 2, FairShare: 1, Age: 1000 * time.Hour, GPUs: 256, ClusterGPUs: 256}
	require.Equal(t, -1, w.Compare(prod, rich))
	require.Equal(t, 1, w.Compare(rich, prod))
	require.True(t, w.Less(prod, rich))
	require.False(t, w.Less(rich, prod))

	hi := JobFactors{Tier: 1, FairShare: 0.9}
	lo := JobFactors{Tier: 1, FairShare: 0.1}
	require.Equal(t, -1, w.Compare(hi, lo))
	require.Equal(t, 1, w.Compare(lo, hi))
	require.Zero(t, w.Compare(hi, hi))

	jobs := []JobFactors{lo, rich, hi, prod}
	slices.SortStableFunc(jobs, w.Compare)
	require.Equal(t, []JobFactors{prod, hi, lo, rich}, jobs)
}

// TestPriorityHugeWeights: weights whose sum exceeds the float64 range
// are refused by Validate, and Priority still orders jobs (the sum does
// not reach +Inf, where every job would tie).
func TestPriorityHugeWeights(t *testing.T) {
	w := Weights{FairShare: math.MaxFloat64, Age: math.MaxFloat64, Explicit: true}
	require.Error(t, w.Validate())
	a := JobFactors{FairShare: 1, Age: 30 * 24 * time.Hour}
	b := JobFactors{FairShare: 0.5, Age: 30 * 24 * time.Hour}
	require.False(t, math.IsInf(w.Priority(a), 0))
	require.Equal(t, -1, w.Compare(a, b))
}
