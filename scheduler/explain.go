package scheduler

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Explanation is a structured account of why one job is where it is after
// a Step: its outcome, its place in the queue and its priority factors,
// and how the cluster measures against what it asks for. The reason,
// message, Delays and Quota describe the Step at the job's turn; the
// node counts, MembersFitNow and Topology describe the cluster as it
// stands after all the Step's placements (a placed job's own GPUs, and
// those of jobs backfilled after its turn, are taken there).
type Explanation struct {
	// Job is the ID of the explained job.
	Job string `json:"job"`
	// Outcome is "placed", "reserved", "pending", "running", "evicted" or
	// "evicting".
	Outcome string `json:"outcome"`
	// Reason repeats the reason of the decision's pending or eviction
	// entry for the job.
	Reason string `json:"reason,omitempty"`
	// Message repeats that entry's message; for a preemption, "preempted
	// by" and the preemptor's ID.
	Message string `json:"message,omitempty"`
	// Start is the reservation's start for a reserved job, or the
	// estimated start of a pending one where known; zero otherwise. It
	// is never after the end of year 9999, so it always encodes as RFC
	// 3339 (see Config.Horizon).
	Start time.Time `json:"start,omitzero"`
	// Rank is the job's 1-based position among the Pending pending jobs
	// in priority order (0 when the job is not pending in the snapshot;
	// a job the Step places or reserves has one). With BackfillOrder
	// ShortestFirst, Step tries the jobs it backfills later, by time
	// limit.
	Rank int `json:"rank,omitempty"`
	// Pending is the number of pending jobs Step ordered (0 when the job
	// is not pending in the snapshot).
	Pending int `json:"pending,omitempty"`
	// Priority holds the multifactor priority and its factors; nil when
	// the job is not pending in the snapshot or another Orderer
	// (TierOrder, or a custom one) ranks jobs.
	Priority *PriorityFactors `json:"priority,omitempty"`
	// Members is the number of members of the job's gang.
	Members int `json:"members"`
	// GPUsPerMember is the GPUs each member needs on one node.
	GPUsPerMember int `json:"gpusPerMember"`
	// GPUType is the GPU type the job asks for; empty for any.
	GPUType string `json:"gpuType,omitempty"`
	// Nodes counts how many nodes pass each constraint in turn.
	Nodes NodeFunnel `json:"nodes"`
	// MembersFitNow is how many members of its size fit on the GPUs of
	// its type free after the Step's placements (ignoring reservations
	// and topology), on its eligible nodes, counting the CPU and memory
	// free on each.
	MembersFitNow int `json:"membersFitNow"`
	// Topology, when the job requires a level, says how its best domain
	// measures up.
	Topology *DomainFit `json:"topology,omitempty"`
	// Quota, when its team has one, gives the numbers the quota checks;
	// nil for a zero quota, which limits nothing.
	Quota *QuotaUse `json:"quota,omitempty"`
	// Delays lists, for a job waiting behind reservations, the ones it
	// could delay if it started now, as its message names them: those
	// made before its turn that start within its run and hold GPUs that
	// were free at its turn on nodes of its GPU type with room for one of
	// its members ("ID at start"); for a job bound to one domain of a
	// level, also those in domains it cannot fit now.
	Delays []string `json:"delays,omitempty"`
}

// PriorityFactors are the inputs and result of the default multifactor
// priority for one job.
type PriorityFactors struct {
	// Tier is the job's tier number under the policy (an unset tier
	// resolved to the lowest); it ranks before Priority.
	Tier int `json:"tier"`
	// FairShare is the team's fair-share factor, in [0,1].
	FairShare float64 `json:"fairShare"`
	// Age is the age factor, min(age/AgeMax, 1).
	Age float64 `json:"age"`
	// Size is the job's GPUs over the cluster's, at most 1.
	Size float64 `json:"size"`
	// Priority is the weighted sum of the three factors; within a tier,
	// higher goes first.
	Priority float64 `json:"priority"`
}

// NodeFunnel counts nodes through the job's constraints.
type NodeFunnel struct {
	// Total is the number of nodes of the cluster.
	Total int `json:"total"`
	// Eligible are the nodes the job may use: those its EligibleNodes
	// name, or all. The counts below are of eligible nodes.
	Eligible int `json:"eligible"`
	// Ready nodes take new work (not draining, not down).
	Ready int `json:"ready"`
	// OfType are ready nodes of the requested GPU type (all when none).
	OfType int `json:"ofType"`
	// BigEnough have at least GPUsPerMember healthy GPUs.
	BigEnough int `json:"bigEnough"`
	// FreeEnough have at least GPUsPerMember free GPUs now.
	FreeEnough int `json:"freeEnough"`
	// CPUEnough are those of FreeEnough with the CPU of a member free
	// besides (all of them when the job asks for no CPU or no node
	// limits it), and MemoryEnough those of CPUEnough with its memory.
	CPUEnough    int `json:"cpuEnough"`
	MemoryEnough int `json:"memoryEnough"`
}

// DomainFit describes the best domain of the required level for the job.
type DomainFit struct {
	// Level is the level the job requires.
	Level string `json:"level"`
	// Domains is the number of domains of that level.
	Domains int `json:"domains"`
	// Best is the path name of the domain that holds the most members
	// now (its names down from the outermost level, joined by "/").
	Best string `json:"best"`
	// BestFit is how many members fit in Best now.
	BestFit int `json:"bestFit"`
}

// QuotaUse is a team's quota and what it holds.
type QuotaUse struct {
	// Team names the job's team.
	Team string `json:"team"`
	// Nominal is the team's nominal quota (Quota.GPUs).
	Nominal int `json:"nominal"`
	// BorrowLimit is how many GPUs above Nominal the team may borrow.
	BorrowLimit int `json:"borrowLimit"`
	// InUse is the GPUs the team holds or has been promised: its running
	// jobs that are not being evicted, this Step's placements and
	// reservations. For a pending job, as they stood when its turn came.
	InUse int `json:"inUse"`
}

// Explain runs Step on snap and explains the outcome for one job. It
// costs one Step plus O(N) for the node counts.
func (s *Scheduler) Explain(snap *Snapshot, job string) (*Explanation, error) {
	st, err := s.step(snap, job)
	if err != nil {
		return nil, err
	}
	var j *Job
	for i := range snap.Jobs {
		if snap.Jobs[i].ID == job {
			j = &snap.Jobs[i]
		}
	}
	if j == nil {
		return nil, fmt.Errorf("explain: no job %q in the snapshot", job)
	}
	d := st.result()
	e := &Explanation{Job: j.ID, Members: j.Members, GPUsPerMember: j.GPUsPerMember, GPUType: j.GPUType}
	e.Outcome = j.State.String()
	for _, p := range d.Placements {
		if p.Job == job {
			e.Outcome = "placed"
		}
	}
	for _, rs := range d.Reservations {
		if rs.Job == job {
			e.Outcome, e.Start = "reserved", rs.Start
		}
	}
	for _, w := range d.Pending {
		if w.Job == job {
			e.Reason, e.Message, e.Start = string(w.Reason), w.Message, w.Start
		}
	}
	for _, ev := range d.Evictions {
		if ev.Job == job {
			e.Outcome, e.Reason = "evicted", string(ev.Reason)
			if ev.By != "" {
				e.Message = "preempted by " + ev.By
			}
		}
	}
	if j.State == Pending {
		e.Pending = len(st.queue)
		for i, slot := range st.queue {
			if st.pending[slot] == j {
				e.Rank = i + 1
			}
		}
		switch o := s.cfg.order().(type) {
		case Multifactor:
			e.Priority = factors(snap, j, o, st.tiers)
		case *Multifactor: // not nil: order() turns that into the default
			e.Priority = factors(snap, j, *o, st.tiers)
		}
	}
	req, ok := st.request(j)
	st.funnel(e, j, req, ok)
	if q := st.quotas[j.Team]; q != nil && *q != (Quota{}) { // a zero quota limits nothing
		// What the team held when the job's turn came: a pending job's
		// own reservation, and those of jobs after it, do not count.
		inUse := st.inUse[j.Team]
		if j.State == Pending && st.turn.seen {
			inUse = st.turn.inUse
		}
		e.Quota = &QuotaUse{Team: j.Team, Nominal: q.GPUs, BorrowLimit: q.BorrowLimit, InUse: inUse}
	}
	if e.Reason == string(ReasonBehindReservation) && ok {
		e.Delays = st.turn.delays // as its message named them, at its turn
	}
	return e, nil
}

// factors recomputes the multifactor priority of j under m, with tiers
// tiers in the policy.
func factors(snap *Snapshot, j *Job, m Multifactor, tiers int) *PriorityFactors {
	fs := Factors(snap)
	total := 0
	for _, n := range snap.Cluster.Nodes {
		total += n.GPUs
	}
	w := m.Weights
	jf := fairshare.JobFactors{Tier: j.Tier.Level(tiers), FairShare: fs.Value(j.Team, m.Algorithm),
		Age: snap.Now.Sub(j.Submitted), GPUs: j.GPUs(), ClusterGPUs: total}
	return &PriorityFactors{Tier: jf.Tier, FairShare: jf.FairShare, Age: fairshare.AgeFactor(jf.Age, w.Resolved().AgeMax),
		Size: fairshare.SizeFactor(jf.GPUs, jf.ClusterGPUs), Priority: w.Priority(jf)}
}

// funnel fills the node counts and the topology fit.
func (st *stepState) funnel(e *Explanation, j *Job, req gang.Request, typeKnown bool) {
	g := j.GPUsPerMember
	el := st.eligibleOf(j)
	for n := range st.ix.NumNodes() {
		id := topology.NodeID(n)
		e.Nodes.Total++
		if el != nil && !el.has(id) {
			continue
		}
		e.Nodes.Eligible++
		if st.ix.State(id) != topology.Ready {
			continue
		}
		e.Nodes.Ready++
		if !typeKnown || !st.ix.InClass(id, req.Class) {
			continue
		}
		e.Nodes.OfType++
		if st.ix.Healthy(id).Len() >= g {
			e.Nodes.BigEnough++
		}
		if st.ix.Free(id) >= g {
			e.Nodes.FreeEnough++
			if st.ix.Members(id, g, req.CPUMillis, 0) > 0 {
				e.Nodes.CPUEnough++
				if st.ix.Members(id, g, req.CPUMillis, req.MemoryMiB) > 0 {
					e.Nodes.MemoryEnough++
				}
			}
		}
	}
	// Capacity counts no member larger than the largest node; members of
	// a type the cluster lacks fit nowhere (req.Class is then AnyType).
	// On eligible nodes only, for a job with a list.
	var perDomain []int
	if el != nil && typeKnown && req.Required != gang.NoLevel {
		perDomain = make([]int, st.ix.NumDomains(req.Required))
		for _, n := range el.nodes {
			if st.ix.InClass(n, req.Class) {
				perDomain[st.ix.DomainOf(req.Required, n)] += st.ix.Members(n, g, req.CPUMillis, req.MemoryMiB)
			}
		}
	}
	capacity := func(level int, d topology.DomainID) int {
		switch {
		case !typeKnown:
			return 0
		case el == nil:
			return st.ix.CapacityFor(level, d, req.Class, g, req.CPUMillis, req.MemoryMiB)
		case level == topology.ClusterLevel:
			r := req
			r.Required = gang.NoLevel
			_, total := st.eligibleRoom(el, r, st.freeRoom, true)
			return total
		}
		return perDomain[d]
	}
	e.MembersFitNow = capacity(topology.ClusterLevel, 0)
	if req.Required != gang.NoLevel {
		df := &DomainFit{Level: j.Topology.Required, Domains: st.ix.NumDomains(req.Required)}
		for dm := range df.Domains {
			if c := capacity(req.Required, topology.DomainID(dm)); c > df.BestFit || df.Best == "" {
				df.Best, df.BestFit = st.ix.DomainName(req.Required, topology.DomainID(dm)), c
			}
		}
		e.Topology = df
	}
}

// String renders the explanation as a few lines of text.
func (e *Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s: %s", e.Job, e.Outcome)
	if e.Reason != "" {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if !e.Start.IsZero() {
		fmt.Fprintf(&b, "; start %s", formatTime(e.Start, time.RFC3339Nano))
	}
	b.WriteByte('\n')
	typ := typeWord(e.GPUType)
	fmt.Fprintf(&b, "  asks %d×%d%s GPUs; free GPUs now hold %s\n", e.Members, e.GPUsPerMember, typ, counted(e.MembersFitNow, "such member"))
	eligible := ""
	if e.Nodes.Eligible != e.Nodes.Total {
		eligible = fmt.Sprintf(" %d eligible,", e.Nodes.Eligible)
	}
	fmt.Fprintf(&b, "  nodes: %d total,%s %d ready, %d of its type, %d with %d+ healthy GPUs, %d with %d+ free",
		e.Nodes.Total, eligible, e.Nodes.Ready, e.Nodes.OfType, e.Nodes.BigEnough, e.GPUsPerMember, e.Nodes.FreeEnough, e.GPUsPerMember)
	if e.Nodes.CPUEnough != e.Nodes.FreeEnough || e.Nodes.MemoryEnough != e.Nodes.FreeEnough {
		fmt.Fprintf(&b, ", %d of them with its CPU, %d with its memory too", e.Nodes.CPUEnough, e.Nodes.MemoryEnough)
	}
	b.WriteByte('\n')
	if t := e.Topology; t != nil {
		fmt.Fprintf(&b, "  topology: one %s of %d; the best, %s, holds %d of %d members now\n", t.Level, t.Domains, t.Best, t.BestFit, e.Members)
	}
	if q := e.Quota; q != nil {
		fmt.Fprintf(&b, "  quota: team %s holds %d of %d nominal + %d borrowable GPUs\n", q.Team, q.InUse, q.Nominal, q.BorrowLimit)
	}
	if e.Rank > 0 {
		fmt.Fprintf(&b, "  queue: %d of %d pending", e.Rank, e.Pending)
		if p := e.Priority; p != nil {
			fmt.Fprintf(&b, "; tier %d, priority %.1f (fair-share %.3f, age %.3f, size %.3f)", p.Tier, p.Priority, p.FairShare, p.Age, p.Size)
		}
		b.WriteByte('\n')
	}
	for _, dl := range e.Delays {
		fmt.Fprintf(&b, "  would delay the reservation of %s\n", dl)
	}
	return b.String()
}
