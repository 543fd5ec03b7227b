package scheduler

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/fairshare"
)

// Multifactor is the default [Orderer]: tier first (0 before 1), then,
// inside a tier, the weighted sum of the team's fair-share factor, the
// job's age (capped at Weights.AgeMax) and its size, highest first, then
// submit time, then ID. The fair-share factor comes from the snapshot's
// teams (shares, parents and decayed usage as of Now); a team missing
// from the snapshot gets share 1 and usage 0.
type Multifactor struct {
	// Weights of the factors; the zero value means fair-share 1000,
	// age 100, size 10, age capped at 7 days.
	Weights fairshare.Weights
	// Algorithm computes the fair-share factor (default Fair Tree).
	Algorithm fairshare.Algorithm
}

// Factors computes the fair-share factors of the snapshot's teams.
// O(T log T) for T teams, plus O(J) to find teams named only by jobs.
func Factors(s *Snapshot) *fairshare.Factors {
	accts := make([]fairshare.Account, 0, len(s.Teams))
	own := make(map[string]float64, len(s.Teams))
	for _, t := range s.Teams {
		accts = append(accts, fairshare.Account{Name: t.Name, Share: t.Share, Parent: t.Parent})
		own[t.Name] = t.Usage
	}
	tree, err := fairshare.NewTree(accts)
	if err != nil {
		// Validate has checked the tree; an invalid one ranks all teams
		// equally rather than failing the Step.
		tree, _ = fairshare.NewTree(nil)
	}
	var missing []string
	seen := make(map[string]bool)
	for i := range s.Jobs {
		t := s.Jobs[i].Team
		if t != "" && !seen[t] {
			seen[t] = true
			if !tree.Has(t) {
				missing = append(missing, t)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		tree = tree.WithMissing(missing...)
	}
	return tree.Factors(own)
}

// Order sorts jobs by tier, then multifactor priority, then submit time,
// then ID. O(T log T + n log n).
func (m Multifactor) Order(s *Snapshot, jobs []*Job) {
	fs := Factors(s)
	total := 0
	for _, n := range s.Cluster.Nodes {
		total += n.GPUs
	}
	// Jobs arrive sorted by ID, so their index breaks the last ties as the
	// ID would, without comparing strings. The keys stay small (32 bytes)
	// for the sort to move.
	type keyed struct {
		p    float64
		sub  int64 // submit time: seconds, then ns (UnixNano overflows outside 1678–2262)
		ns   int32
		tier int32
		i    int32
	}
	ks := make([]keyed, len(jobs))
	byTeam := make(map[string]float64)
	for i, j := range jobs {
		f, ok := byTeam[j.Team]
		if !ok {
			f = fs.Value(j.Team, m.Algorithm)
			byTeam[j.Team] = f
		}
		ks[i] = keyed{tier: int32(j.Tier), sub: j.Submitted.Unix(), ns: int32(j.Submitted.Nanosecond()), i: int32(i), p: m.Weights.Priority(fairshare.JobFactors{
			Tier: j.Tier, FairShare: f, Age: s.Now.Sub(j.Submitted), GPUs: j.GPUs(), ClusterGPUs: total,
		})}
	}
	sorted := slices.IsSortedFunc(jobs, func(a, b *Job) int { return strings.Compare(a.ID, b.ID) })
	orig := slices.Clone(jobs)
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.tier != b.tier {
			return cmp.Compare(a.tier, b.tier)
		}
		if a.p != b.p {
			return cmp.Compare(b.p, a.p)
		}
		if a.sub != b.sub {
			return cmp.Compare(a.sub, b.sub)
		}
		if a.ns != b.ns {
			return cmp.Compare(a.ns, b.ns)
		}
		if sorted {
			return cmp.Compare(a.i, b.i)
		}
		return strings.Compare(orig[a.i].ID, orig[b.i].ID)
	})
	for i := range ks {
		jobs[i] = orig[ks[i].i]
	}
}
