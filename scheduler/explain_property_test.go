package scheduler_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// drawExplainSnapshot draws a crowded snapshot (source 0), a staggered
// one (1) or a generated one (2 or 3), and says which.
func drawExplainSnapshot(t *rapid.T) (*scheduler.Snapshot, int) {
	switch source := rapid.IntRange(0, 3).Draw(t, "source"); source {
	case 0:
		return crowded(t), source
	case 1:
		return staggered(t), source
	default:
		return gen.Snapshot(t), source
	}
}

// drawExplainSnapshotWithResources is drawExplainSnapshot, and for half
// the generated snapshots nodes that limit CPU and memory and jobs that
// ask for them (gen.WithResources).
func drawExplainSnapshotWithResources(t *rapid.T) (*scheduler.Snapshot, int) {
	s, source := drawExplainSnapshot(t)
	if source > 1 && rapid.Bool().Draw(t, "resources") {
		s = gen.WithResources(t, s)
	}
	return s, source
}

// TestPropertyExplainAgreesWithStep explains every job of a random
// snapshot under a drawn policy and checks each field of the answer
// against the Step decision of the same snapshot and policy, and against
// brute-force counts over the cluster as it stands after the Step's
// placements, as the fields' documentation promises.
func TestPropertyExplainAgreesWithStep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, source := drawExplainSnapshotWithResources(t)
		cfg := explainConfig(t, s)
		if source == 1 && rapid.IntRange(0, 3).Draw(t, "manyReservations") > 0 {
			// Reservations for the whole-node jobs, and none left for
			// the small ones behind them.
			cfg.Backfill, cfg.Reservations, cfg.Reserve = scheduler.EASY, 0, nil
			for _, j := range s.Jobs {
				if j.State == scheduler.Pending && j.GPUsPerMember == 8 {
					cfg.Reservations++
				}
			}
		}
		sch := scheduler.New(cfg)
		d, err := sch.Step(gen.Clone(s))
		if err != nil {
			t.Fatalf("Step: %v", err)
		}
		x := newExplainRef(s, d, cfg)
		before := gen.Clone(s)
		for i := range s.Jobs {
			id := s.Jobs[i].ID
			e, err := sch.Explain(s, id)
			if err != nil {
				t.Fatalf("Explain(%s): %v", id, err)
			}
			if !reflect.DeepEqual(s, before) {
				t.Fatalf("Explain(%s) modified the snapshot", id)
			}
			if err := x.check(e, &s.Jobs[i]); err != nil {
				t.Fatalf("Explain(%s): %v\ngot %+v\n%s", id, err, *e, dump(s, d))
			}
		}
		checkRanks(t, x, sch, s)
	})
}

// TestPropertyExplainDeterministic checks that Explain answers alike
// twice, and alike for the snapshot with its nodes, teams and jobs in
// another order: the decision does not depend on that order, nor do
// the counts behind it.
func TestPropertyExplainDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot(t)
		cfg := explainConfig(t, s)
		sch := scheduler.New(cfg)
		sh := gen.Shuffle(t, s)
		for range 3 {
			if len(s.Jobs) == 0 {
				return
			}
			id := s.Jobs[rapid.IntRange(0, len(s.Jobs)-1).Draw(t, "job")].ID
			a, err := sch.Explain(s, id)
			if err != nil {
				t.Fatalf("Explain(%s): %v", id, err)
			}
			b, err := sch.Explain(s, id)
			if err != nil {
				t.Fatalf("Explain(%s) again: %v", id, err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("Explain(%s) answered twice differently:\n%+v\n%+v", id, *a, *b)
			}
			c, err := sch.Explain(sh, id)
			if err != nil {
				t.Fatalf("Explain(%s) shuffled: %v", id, err)
			}
			if !reflect.DeepEqual(a, c) {
				t.Fatalf("Explain(%s) depends on input order:\n%+v\n%+v", id, *a, *c)
			}
		}
	})
}

// TestPropertyExplainErrors checks that Explain refuses an unknown job
// and an invalid snapshot, the latter with the error Step gives.
func TestPropertyExplainErrors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot(t)
		sch := scheduler.New(explainConfig(t, s))
		for _, id := range []string{"", "nope", "p00x"} {
			e, err := sch.Explain(s, id)
			if err == nil || e != nil {
				t.Fatalf("Explain(%q) of a snapshot without it: %+v, %v", id, e, err)
			}
			if want := fmt.Sprintf("no job %q", id); !strings.Contains(err.Error(), want) {
				t.Fatalf("Explain(%q): error %q does not say %s", id, err, want)
			}
		}
		if len(s.Jobs) == 0 {
			return
		}
		bad := gen.Clone(s)
		k := rapid.IntRange(0, len(bad.Jobs)-1).Draw(t, "broken")
		switch rapid.IntRange(0, 2).Draw(t, "how") {
		case 0:
			bad.Jobs[k].GPUsPerMember = 0
		case 1:
			bad.Now = time.Time{}
		case 2:
			bad.Jobs = append(bad.Jobs, bad.Jobs[k]) // a repeated ID
		}
		_, stepErr := sch.Step(bad)
		var ve *scheduler.ValidationError
		if !errors.As(stepErr, &ve) {
			t.Fatalf("Step of an invalid snapshot: %v", stepErr)
		}
		for _, id := range []string{bad.Jobs[k].ID, "nope"} {
			e, err := sch.Explain(bad, id)
			if e != nil || !errors.As(err, &ve) || err.Error() != stepErr.Error() {
				t.Fatalf("Explain(%s) of an invalid snapshot: %+v, %v; Step says %v", id, e, err, stepErr)
			}
		}
	})
}

// staggered draws a snapshot where many jobs wait behind reservations:
// 1–8 nodes of 8 GPUs, each half taken by a job that ends at its own
// time, and a queue of whole-node jobs, which get reservations on the
// free halves, and smaller ones, which fit now but would delay them.
func staggered(t *rapid.T) *scheduler.Snapshot {
	now := gen.Now
	s := &scheduler.Snapshot{Now: now}
	nodes := rapid.IntRange(1, 8).Draw(t, "nodes")
	for i := range nodes {
		s.Cluster.Nodes = append(s.Cluster.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8})
		g := rapid.SampledFrom([]int{2, 4, 6}).Draw(t, "rgpus")
		gpus := make([]int, g)
		for k := range gpus {
			gpus[k] = k
		}
		s.Jobs = append(s.Jobs, scheduler.Job{ID: fmt.Sprintf("r%d", i), State: scheduler.Running, Tier: scheduler.P1, Members: 1, GPUsPerMember: g,
			Started: now.Add(-time.Hour), TimeLimit: time.Hour + time.Duration(rapid.IntRange(1, 12).Draw(t, "rleft"))*10*time.Minute,
			Allocation: topology.Allocation{{Node: s.Cluster.Nodes[i].Name, GPUs: gpus}}})
	}
	big := nodes + rapid.IntRange(-1, 3).Draw(t, "big")
	for i := range big + rapid.IntRange(1, 4).Draw(t, "small") {
		j := scheduler.Job{ID: fmt.Sprintf("p%02d", i), Tier: scheduler.TierN(rapid.IntRange(1, 2).Draw(t, "tier")),
			Members: 1, GPUsPerMember: 8, TimeLimit: time.Duration(rapid.IntRange(1, 10).Draw(t, "limit")) * time.Hour,
			Submitted: now.Add(-time.Duration(i) * time.Minute)}
		if i >= big {
			// Of a lower tier: tried after the whole-node jobs.
			j.GPUsPerMember = rapid.SampledFrom([]int{1, 2}).Draw(t, "gpus")
			j.Tier = scheduler.P3
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// explainConfig draws a policy: a backfill mode, an order (the default
// multifactor one in its several spellings, the tier order or a custom
// one), fair-share weights and algorithm, whether limits are enforced and
// preemption allowed, and sometimes a ReservationPolicy that declines
// some jobs.
func explainConfig(t *rapid.T, s *scheduler.Snapshot) scheduler.Config {
	cfg := modes[rapid.IntRange(0, len(modes)-1).Draw(t, "mode")].cfg
	switch rapid.IntRange(0, 6).Draw(t, "order") {
	case 1:
		cfg.Order = scheduler.TierOrder{}
	case 2:
		cfg.Order = scheduler.Multifactor{Weights: fairshare.Weights{Age: 1000, Size: 50, AgeMax: 2 * time.Hour}, Algorithm: fairshare.Classic}
	case 3:
		cfg.Order = (*scheduler.Multifactor)(nil)
	case 4:
		cfg.Order = &scheduler.Multifactor{Weights: fairshare.Weights{FairShare: 10, Explicit: true}}
	case 5:
		// A custom order: largest first, then by ID.
		cfg.Order = scheduler.OrderFunc(func(_ *scheduler.Snapshot, jobs []*scheduler.Job) {
			slices.SortStableFunc(jobs, func(a, b *scheduler.Job) int { return b.GPUs() - a.GPUs() })
		})
	}
	if rapid.Bool().Draw(t, "classic") {
		cfg.FairShare.Algorithm = fairshare.Classic
	}
	if rapid.IntRange(0, 3).Draw(t, "fsWeights") == 0 {
		cfg.FairShare.Weights = fairshare.Weights{Age: 500, AgeMax: time.Hour}
	}
	cfg.IgnoreTimeLimits = rapid.IntRange(0, 3).Draw(t, "ignoreLimits") == 0
	cfg.DisablePreemption = rapid.IntRange(0, 5).Draw(t, "noPreemption") == 0
	if rapid.IntRange(0, 4).Draw(t, "reservePolicy") == 0 {
		least := rapid.SampledFrom([]int{2, 8, 16}).Draw(t, "reserveMinGPUs")
		cfg.Reserve = scheduler.ReserveFunc(func(j *scheduler.Job, _ int) bool { return j.GPUs() >= least })
	}
	return cfg
}

// explainRef is what the checks compare Explain with: the snapshot, the
// Step's decision indexed by job, and the cluster after the placements.
type explainRef struct {
	s     *scheduler.Snapshot
	d     *scheduler.Decision
	cfg   scheduler.Config
	place map[string]scheduler.Placement
	resv  map[string]scheduler.Reservation
	wait  map[string]scheduler.Wait
	evict map[string]scheduler.Eviction
	// free GPUs of each node after the Step's placements: healthy, held
	// by no running, evicting or placed job, on a ready node.
	free map[string]int
	// cpuUsed and memUsed are the CPU and memory of each node held by
	// the same jobs: each member holds its job's request.
	cpuUsed, memUsed map[string]int
	types            map[string]bool
	jobs             map[string]*scheduler.Job
	// order is the pending jobs in priority order, rank their places
	// (from 1), and mf the multifactor order in force, if any.
	order []*scheduler.Job
	rank  map[string]int
	mf    *scheduler.Multifactor
}

func newExplainRef(s *scheduler.Snapshot, d *scheduler.Decision, cfg scheduler.Config) *explainRef {
	x := &explainRef{s: s, d: d, cfg: cfg, place: map[string]scheduler.Placement{}, resv: map[string]scheduler.Reservation{},
		wait: map[string]scheduler.Wait{}, evict: map[string]scheduler.Eviction{}, free: map[string]int{},
		cpuUsed: map[string]int{}, memUsed: map[string]int{}, types: map[string]bool{}, jobs: map[string]*scheduler.Job{}, rank: map[string]int{}}
	x.order, x.mf = expectedOrder(s, cfg)
	for k, j := range x.order {
		x.rank[j.ID] = k + 1
	}
	for _, p := range d.Placements {
		x.place[p.Job] = p
	}
	for _, r := range d.Reservations {
		x.resv[r.Job] = r
	}
	for _, w := range d.Pending {
		x.wait[w.Job] = w
	}
	for _, e := range d.Evictions {
		x.evict[e.Job] = e
	}
	held := heldGPUs{}
	hold := func(j *scheduler.Job, a topology.Allocation) {
		held.hold(a)
		for _, ng := range a {
			members := len(ng.GPUs) / j.GPUsPerMember
			x.cpuUsed[ng.Node] += members * j.CPUMillis
			x.memUsed[ng.Node] += members * j.MemoryMiB
		}
	}
	for i := range s.Jobs {
		x.jobs[s.Jobs[i].ID] = &s.Jobs[i]
		if s.Jobs[i].State != scheduler.Pending {
			hold(&s.Jobs[i], s.Jobs[i].Allocation) // evicted jobs keep their GPUs for now
		}
	}
	for _, p := range d.Placements {
		hold(x.jobs[p.Job], p.Allocation)
	}
	for _, n := range s.Cluster.Nodes {
		x.types[n.GPUType] = true
		if n.State != topology.Ready {
			continue
		}
		for g := range n.GPUs {
			if !held[n.Name][g] && !slices.Contains(n.Unhealthy, g) {
				x.free[n.Name]++
			}
		}
	}
	return x
}

func healthy(n *topology.Node) int {
	k := 0
	for g := range n.GPUs {
		if !slices.Contains(n.Unhealthy, g) {
			k++
		}
	}
	return k
}

// byResource is how many members asking for ask of a resource fit in
// what capacity cap leaves beside used: unlimited (-1) when the node or
// the job does not limit it.
func byResource(capacity, used, ask int) int {
	if capacity == 0 || ask == 0 {
		return -1
	}
	return max(0, (capacity-used)/ask)
}

// members is how many members of j fit node n now, by its free GPUs and
// the CPU and memory its held jobs leave.
func (x *explainRef) members(n *topology.Node, j *scheduler.Job) int {
	m := x.free[n.Name] / j.GPUsPerMember
	for _, r := range []int{byResource(n.CPUMillis, x.cpuUsed[n.Name], j.CPUMillis), byResource(n.MemoryMiB, x.memUsed[n.Name], j.MemoryMiB)} {
		if r >= 0 {
			m = min(m, r)
		}
	}
	return m
}

// ofType reports whether node n is ready and of j's GPU type.
func (x *explainRef) ofType(n *topology.Node, j *scheduler.Job) bool {
	return n.State == topology.Ready && (j.GPUType == "" || n.GPUType == j.GPUType)
}

// check compares e, the explanation of j, with the decision and the
// brute-force counts.
func (x *explainRef) check(e *scheduler.Explanation, j *scheduler.Job) error {
	if e.Job != j.ID || e.Members != j.Members || e.GPUsPerMember != j.GPUsPerMember || e.GPUType != j.GPUType {
		return fmt.Errorf("shape: %s %d×%d %q, want %s %d×%d %q", e.Job, e.Members, e.GPUsPerMember, e.GPUType, j.ID, j.Members, j.GPUsPerMember, j.GPUType)
	}
	// Outcome, Reason, Message, Start.
	outcome, reason, msg, start := j.State.String(), "", "", time.Time{}
	if _, ok := x.place[j.ID]; ok {
		outcome = "placed"
	}
	if r, ok := x.resv[j.ID]; ok {
		outcome, start = "reserved", r.Start
	}
	if w, ok := x.wait[j.ID]; ok {
		reason, msg, start = string(w.Reason), w.Message, w.Start
	}
	if ev, ok := x.evict[j.ID]; ok {
		outcome, reason = "evicted", string(ev.Reason)
		if ev.By != "" {
			msg = "preempted by " + ev.By
		}
	}
	if e.Outcome != outcome || e.Reason != reason || e.Message != msg || !e.Start.Equal(start) {
		return fmt.Errorf("outcome %q (%q: %q) start %s, want %q (%q: %q) start %s", e.Outcome, e.Reason, e.Message, e.Start, outcome, reason, msg, start)
	}
	// Rank and Pending are checked over all jobs (see checkRanks); here,
	// that they are zero for a job that is not pending.
	if j.State != scheduler.Pending && (e.Rank != 0 || e.Pending != 0 || e.Priority != nil) {
		return fmt.Errorf("%s job has rank %d of %d, priority %v", j.State, e.Rank, e.Pending, e.Priority)
	}
	// The node funnel and the members that fit.
	var want scheduler.NodeFunnel
	fit := 0
	for i := range x.s.Cluster.Nodes {
		n := &x.s.Cluster.Nodes[i]
		want.Total++
		if j.EligibleNodes != nil && !slices.Contains(j.EligibleNodes, n.Name) {
			continue
		}
		want.Eligible++
		if n.State != topology.Ready {
			continue
		}
		want.Ready++
		if !x.ofType(n, j) {
			continue
		}
		want.OfType++
		if healthy(n) >= j.GPUsPerMember {
			want.BigEnough++
		}
		if free := x.free[n.Name]; free >= j.GPUsPerMember {
			want.FreeEnough++
			switch {
			case byResource(n.CPUMillis, x.cpuUsed[n.Name], j.CPUMillis) == 0:
				want.GPUsStrandedByCPU += free
			case byResource(n.MemoryMiB, x.memUsed[n.Name], j.MemoryMiB) == 0:
				want.CPUEnough++
				want.GPUsStrandedByMemory += free
			default:
				want.CPUEnough++
				want.MemoryEnough++
			}
		}
		fit += x.members(n, j)
	}
	f := e.Nodes
	if f.Total < f.Eligible || f.Eligible < f.Ready || f.Ready < f.OfType || f.OfType < f.BigEnough || f.BigEnough < f.FreeEnough || f.FreeEnough < 0 {
		return fmt.Errorf("node funnel %+v increases", f)
	}
	if f != want {
		return fmt.Errorf("node funnel %+v, want %+v", f, want)
	}
	if e.MembersFitNow != fit {
		return fmt.Errorf("members fit now %d, want %d", e.MembersFitNow, fit)
	}
	if err := x.checkTopology(e, j); err != nil {
		return err
	}
	if err := x.checkQuota(e, j); err != nil {
		return err
	}
	return x.checkDelays(e, j)
}

// checkTopology compares e.Topology with a search of every domain of
// the required level.
func (x *explainRef) checkTopology(e *scheduler.Explanation, j *scheduler.Job) error {
	lvl := slices.Index(x.s.Cluster.Levels, j.Topology.Required)
	if j.Topology.Required == "" || lvl < 0 {
		if e.Topology != nil {
			return fmt.Errorf("topology %+v for a job that requires no level", *e.Topology)
		}
		return nil
	}
	if e.Topology == nil {
		return fmt.Errorf("no topology for a job that requires %s", j.Topology.Required)
	}
	fits := map[string]int{}
	for i := range x.s.Cluster.Nodes {
		n := &x.s.Cluster.Nodes[i]
		var path []string
		for _, l := range x.s.Cluster.Levels[:lvl+1] {
			path = append(path, n.Domains[l])
		}
		p := strings.Join(path, "/")
		fits[p] += 0
		if x.ofType(n, j) {
			fits[p] += x.members(n, j)
		}
	}
	names := make([]string, 0, len(fits))
	for p := range fits {
		names = append(names, p)
	}
	slices.Sort(names)
	best := names[0]
	for _, p := range names {
		if fits[p] > fits[best] {
			best = p
		}
	}
	want := scheduler.DomainFit{Level: j.Topology.Required, Domains: len(fits), Best: best, BestFit: fits[best]}
	if *e.Topology != want {
		return fmt.Errorf("topology %+v, want %+v", *e.Topology, want)
	}
	return nil
}

// checkQuota compares e.Quota with the team's quota and what it holds:
// exactly for a job that is not pending, and for a pending one when the
// Step tried the jobs in priority order (a replay of the decision up to
// its turn); otherwise within the bounds that any order allows.
func (x *explainRef) checkQuota(e *scheduler.Explanation, j *scheduler.Job) error {
	var q *scheduler.Quota
	for _, tm := range x.s.Teams {
		if tm.Name == j.Team {
			q = tm.Quota
		}
	}
	if q == nil || *q == (scheduler.Quota{}) { // a zero quota limits nothing
		if e.Quota != nil {
			return fmt.Errorf("quota %+v for a team without one", *e.Quota)
		}
		return nil
	}
	if e.Quota == nil || e.Quota.Team != j.Team || e.Quota.Nominal != q.GPUs || e.Quota.BorrowLimit != q.BorrowLimit {
		return fmt.Errorf("quota %+v, want team %s %+v", e.Quota, j.Team, *q)
	}
	team := func(id string) bool { return x.jobs[id].Team == j.Team }
	held := 0 // running jobs of the team not evicted at all
	for _, o := range x.s.Jobs {
		if o.Team == j.Team && o.State == scheduler.Running {
			if _, gone := x.evict[o.ID]; !gone {
				held += o.GPUs()
			}
		}
	}
	promised := 0 // placements and reservations of the team
	for id := range x.place {
		if team(id) {
			promised += x.jobs[id].GPUs()
		}
	}
	for id := range x.resv {
		if team(id) {
			promised += x.jobs[id].GPUs()
		}
	}
	if j.State != scheduler.Pending {
		if e.Quota.InUse != held+promised {
			return fmt.Errorf("quota in use %d, want %d running and %d placed or reserved", e.Quota.InUse, held, promised)
		}
		return nil
	}
	// Preemption victims of the team count until their preemptor's turn.
	victims := 0
	for _, ev := range x.d.Evictions {
		if ev.By != "" && team(ev.Job) {
			victims += x.jobs[ev.Job].GPUs()
		}
	}
	own := 0
	if _, ok := x.place[j.ID]; ok {
		own = j.GPUs()
	}
	if _, ok := x.resv[j.ID]; ok {
		own = j.GPUs()
	}
	if u := e.Quota.InUse; u < held || u > held+victims+promised-own {
		return fmt.Errorf("quota in use %d at its turn, outside [%d, %d]", u, held, held+victims+promised-own)
	}
	if !x.inOrder() {
		return nil
	}
	// Replay: the team's running jobs that no eviction before the
	// queue's turn took (time limit, node down), then, job by job before
	// it, the placements and reservations made and the victims evicted.
	want := 0
	for _, o := range x.s.Jobs {
		if ev, gone := x.evict[o.ID]; o.Team == j.Team && o.State == scheduler.Running && (!gone || ev.By != "") {
			want += o.GPUs()
		}
	}
	for _, o := range x.order[:x.rank[j.ID]-1] {
		_, p := x.place[o.ID]
		_, r := x.resv[o.ID]
		if (p || r) && o.Team == j.Team {
			want += o.GPUs()
		}
		for _, ev := range x.d.Evictions {
			if ev.By == o.ID && team(ev.Job) {
				want -= x.jobs[ev.Job].GPUs()
			}
		}
	}
	if e.Quota.InUse != want {
		return fmt.Errorf("quota in use %d at its turn, want %d", e.Quota.InUse, want)
	}
	return nil
}

// inOrder reports whether Step tries the pending jobs in priority
// order: always but with shortest-first EASY backfill, which tries the
// jobs behind the reserved ones by time limit.
func (x *explainRef) inOrder() bool {
	return x.cfg.BackfillOrder != scheduler.ShortestFirst || x.cfg.Reserve != nil || x.cfg.Backfill != scheduler.EASY
}

// checkDelays compares e.Delays with the message of a behind-reservation
// job and with the decision's reservations.
func (x *explainRef) checkDelays(e *scheduler.Explanation, j *scheduler.Job) error {
	if e.Reason != string(scheduler.ReasonBehindReservation) {
		if e.Delays != nil {
			return fmt.Errorf("delays %v for a job not behind a reservation", e.Delays)
		}
		return nil
	}
	var names []string
	for i, dl := range e.Delays {
		id, at, ok := strings.Cut(dl, " at ")
		r, has := x.resv[id]
		if !ok || !has || at != r.Start.Format(time.RFC3339Nano) {
			return fmt.Errorf("delays %q: no such reservation", dl)
		}
		if j.TimeLimit > 0 && !r.Start.Before(x.s.Now.Add(j.TimeLimit+j.CheckpointGrace)) {
			return fmt.Errorf("delays %q, which starts after its run", dl)
		}
		if x.inOrder() && x.rank[id] >= x.rank[j.ID] {
			return fmt.Errorf("delays %q, made after its turn", dl)
		}
		if i < 3 {
			names = append(names, fmt.Sprintf("%q at %s", id, at))
		}
	}
	if more := len(e.Delays) - len(names); more > 0 {
		names = append(names, fmt.Sprintf("%d more", more))
	}
	list := strings.Join(names, ", ")
	if len(names) == 0 {
		list = "an earlier job"
	}
	if want := "fits now but would delay the reservation of " + list; e.Message != want {
		return fmt.Errorf("delays %v, but the message says %q", e.Delays, e.Message)
	}
	return nil
}

// expectedOrder returns the pending jobs of s (pointers into a copy) in
// the order of cfg's Orderer, and the multifactor order in force, if any.
func expectedOrder(s *scheduler.Snapshot, cfg scheduler.Config) ([]*scheduler.Job, *scheduler.Multifactor) {
	var pending []*scheduler.Job
	c := gen.Clone(s)
	for i := range c.Jobs {
		if c.Jobs[i].State == scheduler.Pending {
			pending = append(pending, &c.Jobs[i])
		}
	}
	slices.SortFunc(pending, func(a, b *scheduler.Job) int { return strings.Compare(a.ID, b.ID) })
	o := cfg.Order
	def := &scheduler.Multifactor{Weights: cfg.FairShare.Weights, Algorithm: cfg.FairShare.Algorithm}
	var mf *scheduler.Multifactor
	switch m := o.(type) {
	case nil:
		mf = def
	case *scheduler.Multifactor:
		mf = m
		if m == nil {
			mf = def
		}
	case scheduler.Multifactor:
		mf = &m
	}
	if mf != nil {
		o = *mf
	}
	o.Order(c, pending)
	return pending, mf
}

// checkRanks checks Rank, Pending and Priority over all pending jobs:
// the ranks are 1..P in the order the policy's Orderer gives (whatever
// the backfill order), which for the multifactor order is also the
// order of the factors Explain reports.
func checkRanks(t *rapid.T, x *explainRef, sch *scheduler.Scheduler, s *scheduler.Snapshot) {
	total := 0
	for _, n := range s.Cluster.Nodes {
		total += n.GPUs
	}
	var prev *scheduler.PriorityFactors
	for k, pj := range x.order {
		e, err := sch.Explain(s, pj.ID)
		if err != nil {
			t.Fatalf("Explain(%s): %v", pj.ID, err)
		}
		if e.Rank != k+1 || e.Pending != len(x.order) {
			t.Fatalf("Explain(%s): rank %d of %d, want %d of %d", pj.ID, e.Rank, e.Pending, k+1, len(x.order))
		}
		if (e.Priority != nil) != (x.mf != nil) {
			t.Fatalf("Explain(%s): priority %v under order %T", pj.ID, e.Priority, x.cfg.Order)
		}
		if p := e.Priority; p != nil {
			w := x.mf.Weights.Resolved()
			age := fairshare.AgeFactor(s.Now.Sub(pj.Submitted), w.AgeMax)
			size := min(float64(pj.GPUs())/float64(total), 1)
			if tier := pj.Tier.Level(scheduler.DefaultTiers); p.Tier != tier || p.FairShare < 0 || p.FairShare > 1 || p.Age != age || !near(p.Size, size) {
				t.Fatalf("Explain(%s): factors %+v, want tier %d, age %v, size %v", pj.ID, *p, tier, age, size)
			}
			if want := w.FairShare*p.FairShare + w.Age*p.Age + w.Size*p.Size; !near(p.Priority, want) {
				t.Fatalf("Explain(%s): priority %v, want %v from %+v", pj.ID, p.Priority, want, *p)
			}
			if prev != nil && (prev.Tier > p.Tier || prev.Tier == p.Tier && prev.Priority < p.Priority) {
				t.Fatalf("Explain(%s): rank %d with %+v after %+v", pj.ID, e.Rank, *p, *prev)
			}
			prev = p
		}
	}
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-9*(1+max(a, b)) && -d < 1e-9*(1+max(a, b))
}

// heldGPUs records, per node name, the GPUs held.
type heldGPUs map[string]map[int]bool

// hold records the GPUs of a as held.
func (h heldGPUs) hold(a topology.Allocation) {
	for _, ng := range a {
		if h[ng.Node] == nil {
			h[ng.Node] = map[int]bool{}
		}
		for _, g := range ng.GPUs {
			h[ng.Node][g] = true
		}
	}
}
