package fairshare

import (
	"fmt"
	"math"
	"time"
)

// Default multifactor weights. The size weight is 0, so by default a
// larger job never overtakes an earlier one of the same tier and team:
// among jobs with equal fair-share factors the age factor, and then the
// submit time, decide.
const (
	// DefaultFairShareWeight is the weight of the fair-share factor.
	DefaultFairShareWeight = 1000
	// DefaultAgeWeight is the weight of the age factor.
	DefaultAgeWeight = 100
	// DefaultSizeWeight is the weight of the size factor: none, unless
	// a policy gives size a weight.
	DefaultSizeWeight = 0
	// DefaultAgeMax is the age at which the age factor reaches 1 (7 days).
	DefaultAgeMax = 168 * time.Hour
)

// Weights configures the multifactor priority inside one tier:
//
//	priority = FairShare·fs + Age·min(age/AgeMax, 1) + Size·gpus/clusterGPUs
//
// The zero value means the defaults (1000, 100, 0, AgeMax 168h): with
// them, jobs of one tier and one team go in submission order. A zero
// weight field means "default" unless Explicit is set: with Explicit true
// the three weights are used exactly as given, so
// Weights{Explicit: true, FairShare: 1000} switches age and size off.
// AgeMax <= 0 always means DefaultAgeMax.
type Weights struct {
	// FairShare weighs the team's fair-share factor, in [0,1]; zero
	// means DefaultFairShareWeight unless Explicit.
	FairShare float64
	// Age weighs the age factor, min(age/AgeMax, 1); zero means
	// DefaultAgeWeight unless Explicit.
	Age float64
	// Size weighs the size factor, the job's share of the cluster's GPUs;
	// zero means DefaultSizeWeight (itself 0) unless Explicit. A positive
	// weight lets a larger job overtake an earlier one.
	Size float64
	// AgeMax is the age at which the age factor reaches 1.
	AgeMax time.Duration
	// Explicit makes zero weights mean zero instead of "default".
	Explicit bool
}

// DefaultWeights returns the default weights, resolved (Explicit set).
func DefaultWeights() Weights {
	return Weights{}.Resolved()
}

// Resolved returns w with defaults filled in and Explicit set, so that every
// field reads as what Priority uses.
func (w Weights) Resolved() Weights {
	if !w.Explicit {
		if w.FairShare == 0 {
			w.FairShare = DefaultFairShareWeight
		}
		if w.Age == 0 {
			w.Age = DefaultAgeWeight
		}
		if w.Size == 0 {
			w.Size = DefaultSizeWeight
		}
	}
	if w.AgeMax <= 0 {
		w.AgeMax = DefaultAgeMax
	}
	w.Explicit = true
	return w
}

// Validate reports weights that are negative, infinite or NaN, weights
// whose sum exceeds the float64 range, and a negative AgeMax.
func (w Weights) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"fairshare", w.FairShare}, {"age", w.Age}, {"size", w.Size}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("fairshare: weights.%s must be a finite number >= 0, got %v", f.name, f.v)
		}
	}
	if sum := w.FairShare + w.Age + w.Size; math.IsInf(sum, 1) {
		return fmt.Errorf("fairshare: weights must sum to a finite number, got fairshare %v + age %v + size %v", w.FairShare, w.Age, w.Size)
	}
	if w.AgeMax < 0 {
		return fmt.Errorf("fairshare: ageMax must be >= 0, got %v", w.AgeMax)
	}
	return nil
}

// JobFactors are the inputs of one job's priority.
type JobFactors struct {
	// Tier is the strict first key: a lower tier number is served first
	// (tier 0 is production).
	Tier int
	// FairShare is the team's fair-share factor in [0,1] (Factors.Value).
	FairShare float64
	// Age is how long the job has waited (now - submitted).
	Age time.Duration
	// GPUs is the total number of GPUs the job asks for.
	GPUs int
	// ClusterGPUs is the number of GPUs of the cluster.
	ClusterGPUs int
}

// AgeFactor returns min(age/ageMax, 1), 0 for a negative age; ageMax <= 0
// means DefaultAgeMax.
func AgeFactor(age, ageMax time.Duration) float64 {
	if ageMax <= 0 {
		ageMax = DefaultAgeMax
	}
	if age <= 0 {
		return 0
	}
	return min(float64(age)/float64(ageMax), 1)
}

// SizeFactor returns gpus/clusterGPUs clamped to [0,1] (bigger jobs are
// favored, as in Slurm); 0 when clusterGPUs <= 0.
func SizeFactor(gpus, clusterGPUs int) float64 {
	if clusterGPUs <= 0 || gpus <= 0 {
		return 0
	}
	return min(float64(gpus)/float64(clusterGPUs), 1)
}

// clamp01 maps NaN to 0 and clamps to [0,1].
func clamp01(v float64) float64 {
	if !(v > 0) {
		return 0
	}
	return min(v, 1)
}

// finiteWeight maps NaN, infinite and negative weights to 0.
func finiteWeight(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 1) {
		return 0
	}
	return v
}

// Priority returns the weighted sum of the job's factors inside its tier
// (the tier is not part of it; see Compare). Weights that are negative,
// infinite or NaN count as 0 and the fair-share factor is clamped to
// [0,1]; weights whose sum exceeds the float64 range (which Validate
// reports) are all halved until it does not, which keeps the order. So
// the result is always finite and >= 0. It is O(1).
func (w Weights) Priority(f JobFactors) float64 {
	w = w.Resolved()
	fs, age, size := finiteWeight(w.FairShare), finiteWeight(w.Age), finiteWeight(w.Size)
	for math.IsInf(fs+age+size, 1) {
		fs, age, size = fs/2, age/2, size/2
	}
	return fs*clamp01(f.FairShare) + age*AgeFactor(f.Age, w.AgeMax) + size*SizeFactor(f.GPUs, f.ClusterGPUs)
}

// Compare orders two jobs for service, for slices.SortFunc: negative when a
// goes first. The lower tier goes first whatever the other factors; inside a
// tier, the higher Priority. It returns 0 for a tie, which the caller
// breaks (the scheduler breaks it by job ID).
func (w Weights) Compare(a, b JobFactors) int {
	if a.Tier != b.Tier {
		if a.Tier < b.Tier {
			return -1
		}
		return 1
	}
	pa, pb := w.Priority(a), w.Priority(b)
	switch {
	case pa > pb:
		return -1
	case pa < pb:
		return 1
	}
	return 0
}

// Less reports whether a goes strictly before b (see Compare).
func (w Weights) Less(a, b JobFactors) bool {
	return w.Compare(a, b) < 0
}
