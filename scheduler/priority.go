package scheduler

import (
	"cmp"
	"math"
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
	// age 100, size 0, age capped at 7 days: within one tier and one
	// team, jobs go in submission order.
	Weights fairshare.Weights
	// Algorithm computes the fair-share factor (default Fair Tree).
	Algorithm fairshare.Algorithm
}

// Factors computes the fair-share factors of the snapshot's teams.
// O(T log T) for T teams, plus O(J) to find teams named only by jobs.
// A nil snapshot has no teams.
func Factors(s *Snapshot) *fairshare.Factors {
	if s == nil {
		s = &Snapshot{}
	}
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
// then ID (jobs that share an ID keep their order). O(T log T + n), plus
// O(k log k) for each run of k jobs equal in tier and priority. A nil
// snapshot is taken as an empty one. An unset tier counts as the lowest
// of the default policy (DefaultTiers - 1); Step uses the policy's own.
func (m Multifactor) Order(s *Snapshot, jobs []*Job) {
	ks := m.orderKeys(s, jobs, DefaultTiers)
	orig := slices.Clone(jobs)
	for i := range ks {
		jobs[i] = orig[ks[i].i]
	}
}

// orderKeys returns the keys of jobs in m's order, each naming its job by its
// index in jobs, an unset tier counting as the lowest of tiers; it does
// not change jobs.
func (m Multifactor) orderKeys(s *Snapshot, jobs []*Job, tiers int) []keyed {
	if s == nil {
		s = &Snapshot{}
	}
	fs := Factors(s)
	total := 0
	for _, n := range s.Cluster.Nodes {
		total += n.GPUs
	}
	// The order is tier, then priority (highest first), then submit
	// time, then ID, then place: a total order, so any correct sort
	// yields it. Most jobs differ in tier or priority, so those two are
	// radix-sorted as one 128-bit key, and only the runs of jobs equal in
	// both are sorted by submit time and ID.
	ks := make([]keyed, len(jobs))
	byTeam := make(map[string]float64)
	for i, j := range jobs {
		f, ok := byTeam[j.Team]
		if !ok {
			f = fs.Value(j.Team, m.Algorithm)
			byTeam[j.Team] = f
		}
		p := m.Weights.Priority(fairshare.JobFactors{
			Tier: j.Tier.Level(tiers), FairShare: f, Age: s.Now.Sub(j.Submitted), GPUs: j.GPUs(), ClusterGPUs: total,
		})
		// Priority is finite and >= 0 (see fairshare.Weights.Priority),
		// so its bits order as it does; complemented, they put the
		// highest first. p == 0 turns -0, were there one, into +0, which
		// the comparison of floats deems equal.
		if p == 0 {
			p = 0
		}
		ks[i] = keyed{p: ^math.Float64bits(p), tier: uint64(j.Tier.Level(tiers)) ^ 1<<63, i: int32(i)}
	}
	ks = radixSort(ks, make([]keyed, len(ks)))
	// Jobs arrive sorted by ID (Step sorts them), so their index breaks
	// the last ties as the ID would, without comparing strings.
	sorted := slices.IsSortedFunc(jobs, func(a, b *Job) int { return strings.Compare(a.ID, b.ID) })
	for lo := 0; lo < len(ks); {
		hi := lo + 1
		for hi < len(ks) && ks[hi].p == ks[lo].p && ks[hi].tier == ks[lo].tier {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(ks[lo:hi], func(a, b keyed) int {
				ja, jb := jobs[a.i], jobs[b.i]
				if c := cmp.Compare(ja.Submitted.Unix(), jb.Submitted.Unix()); c != 0 {
					return c
				}
				if c := cmp.Compare(ja.Submitted.Nanosecond(), jb.Submitted.Nanosecond()); c != 0 {
					return c
				}
				if !sorted {
					if c := strings.Compare(ja.ID, jb.ID); c != 0 {
						return c
					}
				}
				return cmp.Compare(a.i, b.i)
			})
		}
		lo = hi
	}
	return ks
}

// keyed is a job's place in the multifactor order as far as tier and
// priority tell it: ascending (tier, p) is ascending tier, then
// descending priority. i is the job's index in the slice being ordered.
type keyed struct {
	p    uint64 // the priority's bits, complemented
	tier uint64 // the tier with its sign bit flipped: unsigned order is signed order
	i    int32
}

// radixSort sorts ks by (tier, p), stably, using buf (as long as ks) as
// scratch space, and returns whichever of the two holds the result. It
// is a least-significant-digit radix sort on bytes: 16 passes at most,
// and a pass is skipped when every key has the same byte there (the
// high bytes of the tier, usually, and the priority's exponent).
// O(n) for n keys.
func radixSort(ks, buf []keyed) []keyed {
	var count [16][256]int
	for _, k := range ks {
		for b := range 8 {
			count[b][byte(k.p>>(8*b))]++
			count[8+b][byte(k.tier>>(8*b))]++
		}
	}
	for b := range 16 {
		c := &count[b]
		if len(ks) == 0 || c[digit(ks[0], b)] == len(ks) {
			continue // one byte value for all: the pass would change nothing
		}
		at := 0
		for v := range c {
			c[v], at = at, at+c[v]
		}
		if b < 8 {
			for _, k := range ks {
				d := byte(k.p >> (8 * b))
				buf[c[d]] = k
				c[d]++
			}
		} else {
			for _, k := range ks {
				d := byte(k.tier >> (8 * (b - 8)))
				buf[c[d]] = k
				c[d]++
			}
		}
		ks, buf = buf, ks
	}
	return ks
}

// digit is byte b of k's 128-bit key (tier, p), from the lowest.
func digit(k keyed, b int) byte {
	if b < 8 {
		return byte(k.p >> (8 * b))
	}
	return byte(k.tier >> (8 * (b - 8)))
}
