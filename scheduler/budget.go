package scheduler

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// The disruption budget of a Step (DESIGN 3a): the GPUs that preemption
// may evict in one Step, and the runtime before which a job is never a
// victim. Evictions at time limits and on down nodes do not count.
//
//	Config.MaxEvictedGPUs   budget of a Step
//	N > 0                   N GPUs
//	0 or less               max(ceil(5% of usable GPUs), GPUs of the first preemptor's victims)
//
// Preemptors are served in queue order: once one is refused for the
// budget, no job after it in the Step evicts (it would take the GPUs of
// the budget that a job of higher priority needs in a later Step). A
// refused preemptor goes on as a job that may not preempt: it may claim
// GPUs being freed, or get a reservation from the backfill mode; when
// it waits, its reason is awaiting-preemption and its message says the
// budget is spent.

// DefaultBudgetPercent is the default disruption budget of a Step, in
// percent of the cluster's usable GPUs (healthy GPUs of ready nodes),
// rounded up; see Config.MaxEvictedGPUs.
const DefaultBudgetPercent = 5

// budget is the disruption budget's account in one Step.
type budget struct {
	limit   int  // GPUs this Step may evict; set on first use
	set     bool // limit is known
	evicted int  // GPUs evicted so far for preemption
	// spent is set once a preemptor was refused for the budget: no later
	// preemptor evicts.
	spent bool
	// said holds, by the message of a wait, what a preemptor that waits
	// so says once the budget is spent: many jobs wait alike.
	said map[string]string
}

// usableGPUs counts the healthy GPUs of ready nodes.
func (st *stepState) usableGPUs() int {
	n := 0
	for i := range st.ix.NumNodes() {
		if id := topology.NodeID(i); st.ix.State(id) == topology.Ready {
			n += st.ix.Healthy(id).Len()
		}
	}
	return n
}

// withinBudget reports whether evicting the pool's candidates victims
// keeps the Step within its disruption budget, and counts them when it
// does. The first preemptor of a Step under the default budget is
// always within it; once one is refused, every later one is.
func (st *stepState) withinBudget(victims []int) bool {
	b := &st.budget
	if b.spent {
		return false
	}
	need := 0
	for _, i := range victims {
		need += st.pool.jobs[i].GPUs()
	}
	if !b.set {
		b.set = true
		b.limit = st.cfg.MaxEvictedGPUs
		if b.limit <= 0 {
			b.limit = max((st.usableGPUs()*DefaultBudgetPercent+99)/100, need)
		}
	}
	if b.evicted+need > b.limit {
		b.spent = true
		return false
	}
	b.evicted += need
	return true
}

// budgetWait is s, the wait of j, said as a preemptor's wait when the
// Step's disruption budget was spent by j's turn: j may preempt, and
// waits for a later Step. Other statuses are returned as they are.
func (st *stepState) budgetWait(j *Job, s status) status {
	b := &st.budget
	if !b.spent || s.code != waiting || !st.preempts(j) {
		return s
	}
	msg, ok := b.said[s.message]
	if !ok {
		msg = fmt.Sprintf("may preempt, but the disruption budget of this Step is spent (%d of %d GPUs evicted); waits for a later Step; %s",
			b.evicted, b.limit, s.message)
		if b.said == nil {
			b.said = map[string]string{}
		}
		b.said[s.message] = msg
	}
	w := waitFor(ReasonAwaitingPreemption, msg)
	w.start = s.start
	return w
}

// tooYoung reports whether running job j has run less than
// Config.MinRuntime, and so is no victim; a job whose start the host did
// not give counts as just started.
func (st *stepState) tooYoung(j *Job) bool {
	m := st.cfg.MinRuntime
	return m > 0 && (j.Started.IsZero() || st.snap.Now.Sub(j.Started) < m)
}

// matures is when running job j will have run Config.MinRuntime; zero
// when its start is not known (it never does, as far as Step can tell).
func (st *stepState) matures(j *Job) time.Time {
	if j.Started.IsZero() {
		return time.Time{}
	}
	return j.Started.Add(st.cfg.MinRuntime)
}
