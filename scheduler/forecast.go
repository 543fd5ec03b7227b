package scheduler

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
)

// This file forecasts the start of every pending job (DESIGN section 5,
// `step -forecast`). A forecast is the Step's decision planned on: the
// Step runs as usual, then, on the availability profile it leaves (the
// running jobs' releases, this Step's placements and reservations), each
// pending job that neither started nor holds a reservation is reserved,
// in queue order, the earliest start that disturbs no reservation made
// before it, as conservative backfill reserves every blocked job. Those
// reservations are the forecast's own: the decision is not changed.

// Forecast is the estimated start of every pending job of one snapshot
// under the scheduler's policy, planned forward by time limits.
//
// What it promises, for the snapshot it was made from:
//   - a job the Step starts now is forecast to start now;
//   - a job the Step reserves is forecast to start exactly at its
//     reservation's start;
//   - every other pending job is forecast the start it would get if,
//     after the Step's placements and reservations, the remaining jobs
//     were reserved one by one in the policy's queue order (tier, then
//     fair-share and the other factors, as Step orders them), each at the
//     earliest start within the planning horizon that disturbs no
//     reservation made before it: what conservative backfill would give
//     them. With backfill off (NoBackfill) a job is never forecast to
//     start before a job ahead of it in the queue. A forecast never takes
//     GPUs a reservation of the decision holds, so no job's forecast
//     moves a reservation of the decision.
//
// A job whose start cannot be bounded gets no start and a reason: it can
// never fit the cluster, or its GPU type is missing, or it waits for
// nodes that are down, or the admission policy (quotas) refuses it (a
// forecast does not model quotas freeing up over time), or no start
// exists within the planning horizon: Config.Horizon when set (which
// bounds a forecast's cost as it bounds a conservative Step's), else
// because the GPUs it needs are held without end, by running jobs without
// a time limit, or past one that is not enforced, or by jobs ahead of it
// that have no time limit.
//
// Under conservative backfill every forecast start is the job's
// reservation, so a host that Steps with the plan sees no job start after
// its forecast unless a cause of DESIGN invariant 9 breaks its promise
// (a GPU lost, a job of a higher tier, the job changed). In a world where
// every job runs exactly its time limit and nothing arrives, every job
// starts exactly at its forecast: Step moves a kept promise only to an
// earlier start, and to other GPUs at the same start only to re-pin it
// (a job that the count of free GPUs lets start earlier takes its GPUs;
// see repinAt), which the first Step has done where it could; a repin
// past a Step's bounds (maxRepinFailures) that succeeds in a later Step
// only starts a job earlier than forecast, and so does a repin that moves
// a reservation made in an earlier turn to other GPUs: a job reserved in
// between may start sooner on the GPUs it left, which the next Step's
// compression finds. Under EASY only
// the jobs the decision starts or reserves are promised; the others are
// estimates, which jobs backfilled later may delay, and EASY re-chooses
// a kept promise's GPUs at the same start, which may start a job behind
// it sooner.
type Forecast struct {
	// Jobs holds one estimate per pending job, sorted by job ID.
	Jobs []Estimate
}

// Estimate is one pending job's forecast start.
type Estimate struct {
	// Job is the ID of the pending job.
	Job string
	// Start is its estimated start, never before the snapshot's Now nor
	// after the end of year 9999; zero when no start can be bounded.
	Start time.Time
	// Reason says, when Start is zero, why no start can be bounded: a
	// pending reason code, a colon and a message.
	Reason string
}

// Forecast estimates when each pending job of snap starts under the
// scheduler's policy (see the type Forecast for what it promises). It
// runs Step on snap, so an invalid snapshot or policy yields Step's
// error and no forecast, then plans on; the decision Step returns for
// snap is the same whether or not Forecast was called, and snap is not
// modified. Its cost is that of a Step under conservative backfill: a
// reservation search for every pending job the Step neither started nor
// reserved.
func (s *Scheduler) Forecast(snap *Snapshot) (Forecast, error) {
	f, _, err := s.forecast(snap, false)
	return f, err
}

// forecast is Forecast; with plan, it also returns the forecast's own
// reservations (those it made for jobs the Step left waiting), so that
// tests can check them against the decision's.
func (s *Scheduler) forecast(snap *Snapshot, plan bool) (Forecast, []Reservation, error) {
	var f Forecast
	var planned []Reservation
	_, err := s.stepThen(snap, "", func(st *stepState) {
		fc := forecaster{st: st, plan: plan}
		f = fc.run()
		planned = fc.planned
	})
	if err != nil {
		return Forecast{}, nil, err
	}
	return f, planned, nil
}

// forecaster plans on after a Step.
type forecaster struct {
	st   *stepState
	est  []Estimate // by slot
	plan bool       // record the forecast's reservations in planned
	// floor is, with backfill off, the latest start forecast for a job
	// ahead in the queue: no job starts before it.
	floor time.Duration
	// stuck is, with backfill off, the first job ahead in the queue
	// that waits for GPUs without a bounded start: the jobs behind it
	// have none either.
	stuck   *Job
	planned []Reservation
}

// run forecasts every pending job: the decision's first, then the
// others in queue order.
func (fc *forecaster) run() Forecast {
	st := fc.st
	fc.est = make([]Estimate, len(st.pending))
	decided := make([]time.Duration, len(st.pending))
	for i := range decided {
		decided[i] = -1
	}
	for _, p := range st.decided.Placements {
		decided[fc.slotOf(p.Job)] = 0
	}
	for _, r := range st.decided.Reservations {
		if r.Job != "" { // a retracted promise has none
			decided[fc.slotOf(r.Job)] = st.offset(r.Start)
		}
	}
	for _, slot := range st.queue {
		j := st.pending[slot]
		fc.est[slot].Job = j.ID
		if at := decided[slot]; at >= 0 {
			fc.est[slot].Start = st.at(at)
			fc.floor = max(fc.floor, at)
			continue
		}
		fc.one(slot, j)
	}
	return Forecast{Jobs: fc.est}
}

// slotOf is the slot of the pending job with the given ID, which exists.
func (fc *forecaster) slotOf(id string) int32 {
	i, _ := slices.BinarySearchFunc(fc.st.pending, id, func(j *Job, id string) int { return strings.Compare(j.ID, id) })
	return int32(i)
}

// one forecasts j, in slot, which the Step left waiting: the checks of
// the job alone (admit) first, then the earliest start the profile has
// for it, which it reserves for the jobs after it.
func (fc *forecaster) one(slot int32, j *Job) {
	st := fc.st
	req, s := st.admit(j)
	if s.decided() {
		fc.est[slot].Reason = string(s.reason) + ": " + s.message
		return
	}
	reqs := []gang.Request{req}
	if st.oneType(j, req) {
		reqs = st.typedRequests(j, req)
	}
	notBefore := time.Duration(0)
	if st.cfg.Backfill == NoBackfill {
		if fc.stuck != nil {
			fc.est[slot].Reason = fmt.Sprintf("%s: waits behind higher-priority job %q, whose start cannot be bounded (backfill is off)", ReasonPriority, fc.stuck.ID)
			return
		}
		notBefore = fc.floor
	}
	d := st.hold(j)
	var best backfill.Start
	found := false
	if st.horizon >= notBefore {
		for _, r := range reqs {
			by := st.horizon
			if found {
				if best.At == notBefore {
					break
				}
				by = best.At - 1 // only a strictly earlier start replaces it
			}
			if start, ok := st.earliestBy(j, r, d, notBefore, by); ok {
				best, found = start, true
			}
		}
	}
	if !found {
		fc.est[slot].Reason = fc.unbounded()
		fc.stuck = j
		return
	}
	st.profile.Reserve(best.Placement, best.At, d)
	st.addInUse(j, 1)
	if len(st.quotas) > 0 {
		if st.reserved == nil {
			st.reserved = map[string]int{}
		}
		st.reserved[j.Team] += j.GPUs()
	}
	fc.est[slot].Start = st.at(best.At)
	fc.floor = max(fc.floor, best.At)
	if fc.plan {
		fc.planned = append(fc.planned, Reservation{Job: j.ID, Start: st.at(best.At), Allocation: best.Placement.Allocation(st.ix)})
	}
}

// unbounded is the reason of a job for which the profile has no start
// within the planning horizon.
func (fc *forecaster) unbounded() string {
	st := fc.st
	switch {
	case st.horizon < 0:
		return string(ReasonInsufficientGPUs) + ": no start can be bounded: now is past the end of year 9999"
	case st.cfg.Horizon > 0 && st.cfg.Horizon == st.horizon:
		return fmt.Sprintf("%s: no start within the %s planning horizon", ReasonInsufficientGPUs, formatDuration(st.cfg.Horizon))
	}
	return string(ReasonInsufficientGPUs) + ": no start can be bounded: the GPUs it needs stay held without end, by running jobs without a time limit (or past one that is not enforced), or by jobs ahead of it that have no time limit"
}

// EncodeForecast writes f as the step command's -forecast output (DESIGN
// section 5): {"forecast": [{"job": ..., "start": ...}, ...]}, one entry
// per estimate in f's order, "start" an RFC 3339 time, or null with a
// "reason" when no start can be bounded; indented as EncodeDecision
// indents.
func EncodeForecast(out io.Writer, f Forecast) error {
	w := newJSONWriter(64 + 96*len(f.Jobs))
	w.open('{')
	writeList(w, "forecast", f.Jobs, false, func(e *Estimate) {
		w.open('{')
		w.strMember("job", e.Job, false)
		if e.Start.IsZero() {
			w.member("start")
			w.null()
			w.strMember("reason", e.Reason, false)
		} else {
			w.timeMember("start", e.Start, false)
		}
		w.close('}')
	})
	w.close('}')
	return w.flush(out)
}
