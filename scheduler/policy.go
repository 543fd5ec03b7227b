package scheduler

import (
	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// Usage is what an [Admitter] knows about the cluster when it is asked
// about a job.
type Usage struct {
	// TeamGPUs is the number of GPUs the job's team holds or is promised:
	// running jobs that are not being evicted, and jobs placed or reserved
	// earlier in this Step. Jobs being evicted are leaving and do not
	// count: the Step that evicts a job stops counting it at once, and the
	// Steps that see it evicting agree, so a preemptor admitted when it
	// evicted is not refused while its victims checkpoint.
	TeamGPUs int
	// TeamCPUMillis and TeamMemoryMiB are the CPU and memory of the same
	// jobs (per member times members), for CPU and memory quotas.
	TeamCPUMillis, TeamMemoryMiB int64
	// IdleGPUs is the number of GPUs of the whole cluster that are free
	// now, or healthy on ready nodes and held by jobs being evicted
	// (other than this Step's preemption victims, whose GPUs go to their
	// preemptors) that no reservation has taken: those are idle once
	// their grace ends, and a job waiting for them must not be refused
	// borrowing while they checkpoint. GPUs held by running jobs are not
	// idle, even those of a job backfilled into GPUs reserved for a
	// later start, which it leaves before then: while it runs, a
	// borrowing job that holds that reservation may be refused, and
	// may have to preempt again once it is admitted.
	IdleGPUs int
}

// Admitter decides whether a pending job may start now at all, before
// any placement is tried: quotas, budgets, maintenance windows. A job it
// refuses waits with reason quota and the message it returns, and blocks
// no other job. Admit must be a pure function of its arguments and must
// not modify them; it is called at most once per pending job per Step,
// so it should cost O(1). It is not asked about a job that asks for a
// GPU type the cluster lacks or that can never fit the cluster: that job
// waits with reason gpu-type or unsatisfiable whatever Admit would say.
// The default is [QuotaAdmitter].
type Admitter interface {
	// Admit reports whether j may start now; when it may not, why says
	// so for the job's wait message.
	Admit(s *Snapshot, j *Job, u Usage) (ok bool, why string)
}

// AdmitFunc adapts a function to [Admitter].
type AdmitFunc func(s *Snapshot, j *Job, u Usage) (bool, string)

// Admit calls f(s, j, u).
func (f AdmitFunc) Admit(s *Snapshot, j *Job, u Usage) (bool, string) { return f(s, j, u) }

// QuotaAdmitter applies the teams' quotas of the snapshot (Team.Quota):
// a team within its nominal GPUs always starts jobs; above nominal it may
// borrow idle GPUs up to its borrowing limit; and a job that would take
// the team past its CPU or memory cap waits. Teams without a quota (or
// with a zero quota) are not limited. See [fairshare.Quota].
type QuotaAdmitter struct {
	quotas map[string]*Quota
}

// Admit applies j's team quota. A nil snapshot has no teams.
func (a QuotaAdmitter) Admit(s *Snapshot, j *Job, u Usage) (bool, string) {
	var q *Quota
	if a.quotas != nil {
		q = a.quotas[j.Team]
	} else if s != nil {
		for i := range s.Teams {
			if s.Teams[i].Name == j.Team {
				q = s.Teams[i].Quota
			}
		}
	}
	if q == nil {
		return true, ""
	}
	if ok, why := q.AdmitTeam(j.Team, u.TeamGPUs, j.GPUs(), u.IdleGPUs); !ok {
		return false, why
	}
	return q.AdmitResources(j.Team, u.TeamCPUMillis, u.TeamMemoryMiB, int64(j.Members)*int64(j.CPUMillis), int64(j.Members)*int64(j.MemoryMiB))
}

// VictimSelector chooses which running jobs to preempt so that gang r
// fits. cands are the running jobs that r's tier may preempt under the
// matrix, with GPUs already reserved for others left out; Select must
// return indices into cands (as it leaves them: cands is a copy of its
// own, which it may reorder or change), the placement r would get once
// they are gone, and whether any choice makes room. It must leave ix
// exactly as it found it (free GPUs on a copy of your own view, or
// Release what you take) and keep no state that changes an answer; if
// Steps run concurrently it must be safe for that (a [preempt.Selector]
// is not). The default, [preempt.Select], frees the cheapest jobs first
// and drops every victim that is not needed. Step checks the answer
// (victims in range, a whole placement of r on ready nodes, in one
// domain of its required level, on GPUs free in ix or held by the
// victims) and treats one that fails as no answer; it evicts only the
// victims that hold GPUs of the placement, so a victim chosen for
// nothing stays running.
//
// Each candidate is a running job as Step sees it: ID is the job's ID,
// Tier its tier, Grace its CheckpointGrace, WorkLost and Ran the time
// since its Started (a snapshot knows no checkpoints; a zero Started
// counts as the longest time), Borrowed whether its team holds more than
// its nominal quota, and Holds its GPUs less those reserved for other
// jobs (Size then counts them all). Select is not shown the snapshot; a
// rule on other fields of a job finds the job by its ID. To rule some
// candidates out, pass [preempt.Select] the others and map the indices it
// returns back to cands (examples/custompolicy's minRuntime does so).
type VictimSelector interface {
	// Select returns the indices in cands of the jobs to preempt, the
	// placement r gets once they are gone, and whether any choice makes
	// room.
	Select(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []preempt.Candidate) (victims []int, pl gang.Placement, ok bool)
}

// VictimFunc adapts a function with the signature of [preempt.Select] to
// [VictimSelector].
type VictimFunc func(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool)

// Select calls f.
func (f VictimFunc) Select(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []preempt.Candidate) ([]int, gang.Placement, bool) {
	return f(ix, r, s, cands)
}

// ReservationPolicy decides which blocked jobs get a reservation: Step
// asks it, in priority order, for each pending job before trying to place
// it, with the number of reservations made so far in this Step; the
// answer counts only if the job cannot start now. A job that gets one is
// promised GPUs at its earliest start and no later job may delay it; a job
// that does not may still start later by backfill. The built-in rules are
// Config.Backfill (EASY: made < K; conservative: always). Reserve must be
// pure and cheap: it is called once per pending job, including jobs that
// then start at once or that the Admitter refuses (with NoBackfill, not
// for the jobs after the first blocked one).
type ReservationPolicy interface {
	// Reserve reports whether blocked job j gets a reservation, made
	// being the number of reservations made so far in this Step.
	Reserve(j *Job, made int) bool
}

// ReserveFunc adapts a function to [ReservationPolicy].
type ReserveFunc func(j *Job, made int) bool

// Reserve calls f(j, made).
func (f ReserveFunc) Reserve(j *Job, made int) bool { return f(j, made) }
