package sim

import (
	"math"
	"slices"
	"time"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/scheduler"
)

// teamBook keeps what each team holds and has held. Teams are numbered
// by name order (index k in names). The teams holding GPUs are listed in
// holding, so that charging an interval costs O(teams holding GPUs), not
// O(teams): a trace of many teams with few running at a time costs what
// one of few teams does.
type teamBook struct {
	names   []string  // sorted; "" is the team of jobs without one
	busy    []int     // GPUs held now, by team
	sec     []float64 // GPU-seconds held so far, by team
	holding []int32   // the teams with busy > 0
	sorted  bool      // holding is in ascending order
	pos     []int32   // pos[k] is k's index in holding, or -1
	ledger  *fairshare.Ledger
}

func newTeamBook(names []string, halfLife time.Duration) teamBook {
	b := teamBook{
		names: names,
		busy:  make([]int, len(names)),
		sec:   make([]float64, len(names)),
		pos:   make([]int32, len(names)),
		// The ledger applies the policy's half-life, its default for zero.
		ledger: fairshare.NewLedger(halfLife),
	}
	for k := range b.pos {
		b.pos[k] = -1
	}
	return b
}

// hold changes team k's GPUs held by g (negative to release).
func (b *teamBook) hold(k int32, g int) {
	b.busy[k] += g
	switch {
	case b.busy[k] > 0 && b.pos[k] < 0:
		b.pos[k] = int32(len(b.holding))
		b.holding = append(b.holding, k)
		b.sorted = false
	case b.busy[k] == 0 && b.pos[k] >= 0:
		last := b.holding[len(b.holding)-1]
		b.holding[b.pos[k]] = last
		b.pos[last] = b.pos[k]
		b.holding = b.holding[:len(b.holding)-1]
		b.pos[k] = -1
		b.sorted = false
	}
}

// holders returns the teams holding GPUs in name order: the ledger rolls
// a team's usage up to its parents, whose sums then add in the same
// order whatever the history of the list.
func (b *teamBook) holders() []int32 {
	if !b.sorted {
		slices.Sort(b.holding)
		for i, k := range b.holding {
			b.pos[k] = int32(i)
		}
		b.sorted = true
	}
	return b.holding
}

// charge adds an interval of dt seconds ending at the absolute time at,
// over which every team held what it holds now: to the GPU-seconds, and
// to the ledger's usage decayed to at.
func (b *teamBook) charge(dt float64, at time.Time) {
	// b GPUs held over the interval, each second decayed from when it
	// was used to its end: b·∫ 2^(-s/h) ds over [0, dt]. Exact, so a
	// team's usage does not depend on how often other events split the
	// interval.
	h := b.ledger.HalfLife().Seconds()
	decayed := -math.Expm1(-dt/h*math.Ln2) * h / math.Ln2
	for _, k := range b.holders() {
		g := float64(b.busy[k])
		b.sec[k] += g * dt
		_ = b.ledger.Add(b.names[k], g*decayed, at)
	}
}

// snapshotTeams returns the team list of the snapshots: the teams of
// Options.Teams (their Usage, the usage at start, is charged to the
// ledger) and, when all is set, every other team a job names, with share
// 1.
func (b *teamBook) snapshotTeams(given []scheduler.Team, start time.Time, all bool) []scheduler.Team {
	var out []scheduler.Team
	known := make(map[string]bool, len(given))
	for _, t := range given {
		known[t.Name] = true
		out = append(out, t)
		if t.Usage > 0 {
			_ = b.ledger.Add(t.Name, t.Usage, start)
		}
	}
	if !all {
		return out
	}
	for _, name := range b.names {
		if name != "" && !known[name] {
			out = append(out, scheduler.Team{Name: name, Share: fairshare.DefaultShare})
		}
	}
	return out
}

// readsTeamsOnlyForQuotas reports whether Step, under cfg, reads the
// snapshot's teams for their quotas only: the order is TierOrder (the
// default multifactor order reads usage and shares) and no custom policy
// hook is set that could read them. Then the snapshots need not list the
// teams that only jobs name, whose usage nothing reads: Step treats a
// team missing from the list as one of share 1 and no quota, as the
// listed one would be.
func readsTeamsOnlyForQuotas(cfg *scheduler.Config) bool {
	if _, ok := cfg.Order.(scheduler.TierOrder); !ok {
		return false
	}
	return cfg.Admit == nil && cfg.Victims == nil && cfg.Pack == nil && cfg.Spread == nil &&
		cfg.Reserve == nil && cfg.Domains == nil
}

// sortedTeams returns the distinct teams of jobs, sorted, and each job's
// index in that list.
func sortedTeams(jobs []Job) (names []string, of []int32) {
	ix := make(map[string]int32)
	for i := range jobs {
		ix[jobs[i].Team] = 0
	}
	names = make([]string, 0, len(ix))
	for t := range ix {
		names = append(names, t)
	}
	slices.Sort(names)
	for k, t := range names {
		ix[t] = int32(k)
	}
	of = make([]int32, len(jobs))
	for i := range jobs {
		of[i] = ix[jobs[i].Team]
	}
	return names, of
}
