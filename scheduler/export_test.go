package scheduler

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/backfill"
)

// NewWithoutMemo returns a scheduler whose Steps remember nothing
// between jobs and search for victims for every job that may preempt:
// the reference that the memos and shortcuts must agree with.
func NewWithoutMemo(cfg Config) *Scheduler {
	return &Scheduler{cfg: cfg, noMemo: true}
}

// ForecastPlan is Forecast, with the reservations the forecast made of
// its own for the jobs the Step left waiting.
func ForecastPlan(s *Scheduler, snap *Snapshot) (Forecast, []Reservation, error) {
	return s.forecast(snap, true)
}

// stepInside is Step on snap under cfg, with prepare applied to the
// Step's state before its stages; it returns the state and the decision.
func stepInside(cfg Config, snap *Snapshot, prepare func(*stepState)) (*stepState, *Decision, error) {
	s := New(cfg)
	c, err := validate(snap, s.cfg.tiers())
	if err != nil {
		return nil, nil, err
	}
	st, err := newStepState(&s.cfg, snap, c, true)
	if err != nil {
		return nil, nil, err
	}
	prepare(st)
	st.evict()
	if err := st.schedule(); err != nil {
		return nil, nil, err
	}
	return st, st.result(), nil
}

// stepCountingProbes is Step on snap under cfg, with the number of nodes
// that the capability packages looked at one by one for jobs with lists
// of eligible nodes (calls of their Avoid predicate).
func stepCountingProbes(cfg Config, snap *Snapshot) (*Decision, int, error) {
	probes := 0
	_, d, err := stepInside(cfg, snap, func(st *stepState) { st.eligible.probes = &probes })
	return d, probes, err
}

// stepCountingWalks is Step on snap under cfg, with the number of
// entries its walks looked at (stepState.walked).
func stepCountingWalks(cfg Config, snap *Snapshot) (*Decision, int, error) {
	walked := 0
	_, d, err := stepInside(cfg, snap, func(st *stepState) { st.walked = &walked })
	return d, walked, err
}

// RepinMoves is the number of reservations that repins moved to other
// GPUs in a Step on snap under cfg.
func RepinMoves(cfg Config, snap *Snapshot) (int, error) {
	st, _, err := stepInside(cfg, snap, func(*stepState) {})
	if err != nil {
		return 0, err
	}
	return st.repinMoves, nil
}

// EligibleStartsAgree runs a Step on snap under cfg and then, on the
// profile as the Step left it, asks for each pending job with a list of
// eligible nodes its earliest start two ways: on its eligible nodes alone
// (earliestBy) and by the profile's sweep of the whole cluster with the
// other nodes avoided. It reports the first job on which they differ.
func EligibleStartsAgree(cfg Config, snap *Snapshot) error {
	s := New(cfg)
	c, err := validate(snap, s.cfg.tiers())
	if err != nil {
		return err
	}
	st, err := newStepState(&s.cfg, snap, c, true)
	if err != nil {
		return err
	}
	st.evict()
	if err := st.schedule(); err != nil {
		return err
	}
	for _, j := range st.pending {
		req, ok := st.request(j)
		if !ok || req.Avoid == nil || !req.Valid(st.ix) {
			continue
		}
		d := st.hold(j)
		for _, notBefore := range []time.Duration{0, time.Hour} {
			got, gotOK := st.earliestBy(j, req, d, notBefore, backfill.Forever)
			want, wantOK := st.profile.EarliestBy(req, d, st.scorer(j), notBefore, backfill.Forever)
			if gotOK != wantOK || got.At != want.At {
				return fmt.Errorf("%s from %s: earliest on its nodes %v (%v) %v, by the sweep %v (%v) %v; list %v", j.ID, notBefore, got.At, gotOK, got.Placement.Allocation(st.ix), want.At, wantOK, want.Placement.Allocation(st.ix), j.EligibleNodes)
			}
		}
	}
	return nil
}
