package scheduler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
)

// BackfillMode chooses how blocked jobs get reservations and whether
// smaller jobs may start around them.
type BackfillMode uint8

const (
	// EASY gives reservations to the first Reservations blocked jobs (1 by
	// default); any later job may start now if it delays none of them.
	// A preempting job's reservation on the GPUs it frees is one of them
	// (it is made even when none is left). It is the zero value.
	EASY BackfillMode = iota
	// Conservative gives every blocked job a reservation, each not delaying
	// those made before it.
	Conservative
	// NoBackfill is strict priority order: once a job is blocked, no job
	// of lower priority starts.
	NoBackfill
)

// String returns "easy", "conservative" or "none".
func (m BackfillMode) String() string {
	switch m {
	case EASY:
		return "easy"
	case Conservative:
		return "conservative"
	case NoBackfill:
		return "none"
	}
	return "BackfillMode(?)"
}

// BackfillOrder chooses the order in which jobs behind the reserved ones
// are tried.
type BackfillOrder uint8

const (
	// ByPriority tries candidates in queue order. It is the zero value.
	ByPriority BackfillOrder = iota
	// ShortestFirst tries candidates by requested time, shortest first
	// (EASY-SJBF); jobs without a time limit come last. A candidate that
	// may preempt has its turn in its place in the queue instead, so that
	// the disruption budget serves preemptors in priority order.
	ShortestFirst
)

// String returns "priority" or "shortest".
func (o BackfillOrder) String() string {
	if o == ShortestFirst {
		return "shortest"
	}
	return "priority"
}

// Orderer ranks pending jobs: Step considers them in the order Order
// leaves them, highest priority first. Order receives the jobs sorted by
// ID; it must sort them in place and must not modify the jobs or the
// snapshot, nor keep them after it returns. The default is [Multifactor].
type Orderer interface {
	// Order sorts the pending jobs of s in place, highest priority first.
	Order(s *Snapshot, jobs []*Job)
}

// OrderFunc adapts a function to [Orderer].
type OrderFunc func(s *Snapshot, jobs []*Job)

// Order calls f(s, jobs).
func (f OrderFunc) Order(s *Snapshot, jobs []*Job) { f(s, jobs) }

// TierOrder is the plain order: tier, then submit time, then ID (first
// come, first served within a tier).
type TierOrder struct{}

// Order sorts jobs by tier, then submit time, then ID. O(n log n). An
// unset tier counts as the lowest of the default policy
// (DefaultTiers - 1); Step uses the policy's own number of tiers.
func (TierOrder) Order(_ *Snapshot, jobs []*Job) {
	slices.SortStableFunc(jobs, func(a, b *Job) int { return compareTierOrder(a, b, DefaultTiers) })
}

// compareTierOrder compares two jobs in TierOrder, an unset tier counting
// as the lowest of tiers.
func compareTierOrder(a, b *Job, tiers int) int {
	if c := cmp.Compare(a.Tier.Level(tiers), b.Tier.Level(tiers)); c != 0 {
		return c
	}
	if c := a.Submitted.Compare(b.Submitted); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// Config is the scheduling policy. The zero value schedules sensibly:
// EASY backfill with one reservation, time limits enforced, jobs ordered
// by tier and then multifactor fair-share priority, gangs packed onto the
// fullest nodes. Step returns an error, not a decision, for a Backfill,
// BackfillOrder or FairShare.Algorithm (or the Algorithm of a Multifactor
// set as Order) that is none of the package's constants.
type Config struct {
	// Backfill is the reservation strategy (default EASY).
	Backfill BackfillMode
	// Reservations is K for EASY: how many blocked jobs get a reservation.
	// Zero or less means 1.
	Reservations int
	// IgnoreTimeLimits keeps running jobs past their time limit instead of
	// evicting them with reason time-limit. A limit still estimates when
	// a job ends while it lies ahead; a job past it has no known end
	// (reservations do not count on its GPUs), and may be preempted.
	IgnoreTimeLimits bool
	// BackfillOrder orders the jobs tried behind the reserved ones.
	BackfillOrder BackfillOrder
	// Order ranks pending jobs (default Multifactor with FairShare's
	// weights and algorithm).
	Order Orderer
	// FairShare configures the default Multifactor order.
	FairShare FairShare
	// Pack scores nodes for jobs with placement pack (default
	// binpack.Pack). A scorer that is not a binpack.Consolidator, such
	// as a binpack.ScorerFunc, or whose Consolidate reports false, places
	// a gang member by member and may split it over more nodes than
	// binpack.Pack would; one whose Consolidate reports true places every
	// gang as binpack.Pack does, whatever its scores.
	Pack binpack.Scorer
	// Spread scores nodes for jobs with placement spread (default
	// binpack.Spread).
	Spread binpack.Scorer
	// Tiers is the number of priority tiers; zero or less means 4, or
	// the size of Preemption when that is set. It may be at most
	// MaxTiers; Step refuses a larger one as a config error.
	Tiers int
	// Preemption is the preemption matrix: Preemption[p][v] lets a pending
	// job of tier p preempt a running job of tier v. Nil means
	// preempt.Ordered(Tiers): each tier preempts every lower one, and tier
	// 0 is never preempted. A non-nil matrix must pass
	// preempt.Matrix.Validate (non-empty, square, at most MaxTiers rows,
	// ...); Step refuses one that does not as a config error.
	Preemption preempt.Matrix
	// DisablePreemption turns preemption off.
	DisablePreemption bool
	// MaxEvictedGPUs is the disruption budget: the most GPUs one Step
	// evicts for preemption, counted as the GPUs of each victim job
	// (evictions on down nodes and at time limits do not count). Zero
	// or less means the default: the larger of DefaultBudgetPercent
	// (5%) of the cluster's usable GPUs (healthy GPUs of ready nodes),
	// rounded up, and the GPUs of the victims of the Step's first
	// preemptor, so that at least one preemptor is served per Step.
	// Preemptors are served in queue order: the first whose victims
	// would exceed the budget, and every preemptor after it, evicts
	// nothing in this Step; each goes on as a job that may not preempt
	// (it may claim GPUs being freed, or get a reservation from the
	// backfill mode) and, when it waits, waits with reason
	// awaiting-preemption and a message saying the budget is spent. The
	// budget renews each Step. With a positive MaxEvictedGPUs smaller than a
	// preemptor's victims, that preemptor never preempts.
	MaxEvictedGPUs int
	// MinRuntime protects young jobs: a running job that has run less
	// than MinRuntime (since Job.Started; a job without Started counts
	// as just started) is never a preemption victim. Zero protects none.
	// Decision.NextWake includes the instant such a job matures while a
	// job that may preempt waits.
	MinRuntime time.Duration
	// Admit decides whether a job may start at all (default
	// QuotaAdmitter: the teams' quotas).
	Admit Admitter
	// Victims chooses preemption victims (default preempt.Select).
	Victims VictimSelector
	// Domains, when set, chooses the topology domain of jobs that require
	// or prefer a level, instead of best fit (see gang.DomainChooser).
	Domains gang.DomainChooser
	// Reserve, when set, decides which blocked jobs get a reservation,
	// instead of the rule of Backfill (EASY: the first Reservations;
	// conservative: all). BackfillOrder is then not used.
	Reserve ReservationPolicy
	// Horizon, when positive, bounds how far ahead reservations are
	// planned, as Slurm's bf_window does: a blocked job whose earliest
	// start lies beyond now+Horizon gets no reservation and waits, and
	// the search for its start stops at the horizon. With many blocked
	// jobs and conservative backfill this bounds the cost of a Step.
	// Zero plans without limit. Reservations of preemptors on their
	// victims' GPUs are not affected, in the Step that evicts the victims
	// nor in the Steps after it while they checkpoint.
	//
	// Whatever the horizon, no start lies after the end of year 9999,
	// the last time RFC 3339 can write: in UTC, or in the time zone of
	// the snapshot's Now when that is east of UTC. A job that can start
	// only later waits without a reservation, its message saying it has
	// no start before the end of year 9999; a running job whose
	// checkpoint grace would end later is not preempted.
	Horizon time.Duration
}

func (c *Config) matrix() preempt.Matrix {
	if c.Preemption != nil {
		return c.Preemption
	}
	return preempt.Ordered(c.tiers())
}

// FairShare configures fair-share priority.
type FairShare struct {
	// Weights of the multifactor priority (zero value: defaults).
	Weights fairshare.Weights
	// Algorithm of the fair-share factor (zero value: Fair Tree).
	Algorithm fairshare.Algorithm
	// HalfLife of usage decay, for hosts and simulators that keep a
	// usage ledger (zero: 7 days). Step itself reads decayed usage from
	// the snapshot.
	HalfLife time.Duration
}

// MaxTiers is the largest Config.Tiers that Step accepts (and the most
// rows a preemption matrix may have): 256.
const MaxTiers = preempt.MaxTiers

// checkModes refuses a Backfill, BackfillOrder or FairShare.Algorithm
// (or the Algorithm of a Multifactor Order) outside the package's
// constants, which would otherwise act as the default without a word,
// Tiers above MaxTiers, and a non-nil Preemption that
// preempt.Matrix.Validate refuses. Its errors are config errors
// ("config: tiers must be <= 256, got 1000"), never a *ValidationError.
// Other fields are not checked: a number of tiers or reservations of
// zero or less means the default.
func (c *Config) checkModes() error {
	if c.Tiers > MaxTiers {
		return configErr("tiers", fmt.Sprintf("must be <= %d, got %d", MaxTiers, c.Tiers))
	}
	if c.Preemption != nil {
		if err := c.Preemption.Validate(); err != nil {
			return fmt.Errorf("config: preemption.%w", err)
		}
	}
	switch {
	case c.Backfill > NoBackfill:
		return configErr("backfill", fmt.Sprintf("unknown mode %d", c.Backfill))
	case c.BackfillOrder > ShortestFirst:
		return configErr("backfillOrder", fmt.Sprintf("unknown order %d", c.BackfillOrder))
	case !knownAlgorithm(c.FairShare.Algorithm):
		return configErr("fairshare.algorithm", fmt.Sprintf("unknown algorithm %d", c.FairShare.Algorithm))
	}
	var m *Multifactor
	switch o := c.Order.(type) {
	case Multifactor:
		m = &o
	case *Multifactor:
		m = o
	}
	if m != nil && !knownAlgorithm(m.Algorithm) {
		return configErr("order.algorithm", fmt.Sprintf("unknown algorithm %d", m.Algorithm))
	}
	return nil
}

// knownAlgorithm reports whether a is one of fairshare's algorithms.
func knownAlgorithm(a fairshare.Algorithm) bool {
	return a == fairshare.FairTree || a == fairshare.Classic
}

// order is the Orderer in force: Order, or the default multifactor
// order when Order is nil or a nil *Multifactor.
func (c *Config) order() Orderer {
	if m, ok := c.Order.(*Multifactor); c.Order != nil && (!ok || m != nil) {
		return c.Order
	}
	return Multifactor{Weights: c.FairShare.Weights, Algorithm: c.FairShare.Algorithm}
}

func (c *Config) tiers() int {
	if c.Tiers > 0 {
		return c.Tiers
	}
	if c.Preemption != nil {
		return c.Preemption.Tiers()
	}
	return DefaultTiers
}

func (c *Config) reservations() int {
	switch c.Backfill {
	case Conservative:
		return int(^uint(0) >> 1)
	case NoBackfill:
		return 1
	}
	if c.Reservations > 0 {
		return c.Reservations
	}
	return 1
}
