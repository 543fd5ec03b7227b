package scheduler_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// modes are the policies every invariant runs under.
var modes = []struct {
	name string
	cfg  scheduler.Config
}{
	{"easy", scheduler.Config{Backfill: scheduler.EASY}},
	{"conservative", scheduler.Config{Backfill: scheduler.Conservative}},
	{"none", scheduler.Config{Backfill: scheduler.NoBackfill}},
	{"easy-k3-shortest", scheduler.Config{Backfill: scheduler.EASY, Reservations: 3, BackfillOrder: scheduler.ShortestFirst}},
	{"conservative-horizon", scheduler.Config{Backfill: scheduler.Conservative, Horizon: 3 * time.Hour}},
	{"easy-k2-horizon-limits-ignored", scheduler.Config{Backfill: scheduler.EASY, Reservations: 2, Horizon: 90 * time.Minute, IgnoreTimeLimits: true}},
}

// forever marks an interval that never ends.
var forever = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// world indexes a snapshot and its decision for the checkers.
type world struct {
	s     *scheduler.Snapshot
	d     *scheduler.Decision
	cfg   scheduler.Config
	nodes map[string]*topology.Node
	jobs  map[string]*scheduler.Job
	evict map[string]scheduler.Eviction
}

func newWorld(s *scheduler.Snapshot, d *scheduler.Decision, cfg scheduler.Config) *world {
	w := &world{s: s, d: d, cfg: cfg, nodes: map[string]*topology.Node{}, jobs: map[string]*scheduler.Job{}, evict: map[string]scheduler.Eviction{}}
	for i := range s.Cluster.Nodes {
		w.nodes[s.Cluster.Nodes[i].Name] = &s.Cluster.Nodes[i]
	}
	for i := range s.Jobs {
		w.jobs[s.Jobs[i].ID] = &s.Jobs[i]
	}
	for _, e := range d.Evictions {
		w.evict[e.Job] = e
	}
	return w
}

func limitEnd(start time.Time, limit time.Duration) time.Time {
	if limit <= 0 {
		return forever
	}
	return start.Add(limit)
}

// holdEnd is when j, started at start, lets its GPUs go: at its time
// limit, plus the checkpoint grace of the eviction at the limit when
// limits are enforced; never without a limit.
func (w *world) holdEnd(start time.Time, j *scheduler.Job) time.Time {
	end := limitEnd(start, j.TimeLimit)
	if end.Equal(forever) || w.cfg.IgnoreTimeLimits {
		return end
	}
	return end.Add(j.CheckpointGrace)
}

// heldEnd is when a running or evicting job's GPUs are free again,
// replaying the decision: evictions end after their grace, evicting jobs
// at evictedAt+grace (now if that passed or is unknown), running jobs at
// holdEnd from their start (from now when they have none), and never
// past a limit that is ignored.
func (w *world) heldEnd(j *scheduler.Job) time.Time {
	now := w.s.Now
	if e, ok := w.evict[j.ID]; ok {
		return now.Add(e.Grace)
	}
	if j.State == scheduler.Evicting {
		if j.EvictedAt.IsZero() {
			return now
		}
		return maxTime(now, j.EvictedAt.Add(j.CheckpointGrace))
	}
	start := j.Started
	if start.IsZero() {
		start = now
	}
	if at := limitEnd(start, j.TimeLimit); !at.After(now) {
		return forever // past a limit that is ignored
	}
	return w.holdEnd(start, j)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// interval is a use of some GPUs during [from, to).
type interval struct {
	who      string
	from, to time.Time
	alloc    topology.Allocation
}

// uses lists every use of GPUs the decision implies: held jobs, new
// placements and reservations.
func (w *world) uses() []interval {
	var out []interval
	for i := range w.s.Jobs {
		j := &w.s.Jobs[i]
		if j.State != scheduler.Pending {
			out = append(out, interval{"held " + j.ID, time.Time{}, w.heldEnd(j), j.Allocation})
		}
	}
	for _, p := range w.d.Placements {
		out = append(out, interval{"placed " + p.Job, w.s.Now, w.holdEnd(w.s.Now, w.jobs[p.Job]), p.Allocation})
	}
	for _, r := range w.d.Reservations {
		out = append(out, interval{"reserved " + r.Job, r.Start, w.holdEnd(r.Start, w.jobs[r.Job]), r.Allocation})
	}
	return out
}

// checkNoDoubleAllocation is invariant 1.
func checkNoDoubleAllocation(w *world) error {
	owner := map[string]string{}
	add := func(who string, a topology.Allocation) error {
		for _, ng := range a {
			n, ok := w.nodes[ng.Node]
			if !ok {
				return fmt.Errorf("%s: unknown node %q", who, ng.Node)
			}
			for _, g := range ng.GPUs {
				if g < 0 || g >= n.GPUs {
					return fmt.Errorf("%s: GPU %d out of range on node %q of %d GPUs", who, g, n.Name, n.GPUs)
				}
				k := fmt.Sprintf("%s/%d", ng.Node, g)
				if o, dup := owner[k]; dup {
					return fmt.Errorf("GPU %s allocated twice: %s and %s", k, o, who)
				}
				owner[k] = who
			}
		}
		return nil
	}
	for i := range w.s.Jobs {
		if j := &w.s.Jobs[i]; j.State != scheduler.Pending {
			if err := add("held "+j.ID, j.Allocation); err != nil {
				return err
			}
		}
	}
	for _, p := range w.d.Placements {
		if err := add("placed "+p.Job, p.Allocation); err != nil {
			return err
		}
	}
	return nil
}

// checkShape is invariant 2 for one allocation given to pending job j.
func (w *world) checkShape(what string, j *scheduler.Job, a topology.Allocation) error {
	if a.Count() != j.GPUs() {
		return fmt.Errorf("%s %s: %d GPUs, want whole gang %d×%d", what, j.ID, a.Count(), j.Members, j.GPUsPerMember)
	}
	req := -1
	if j.Topology.Required != "" {
		req = slices.Index(w.s.Cluster.Levels, j.Topology.Required)
	}
	path, typ := "", ""
	for i, ng := range a {
		n := w.nodes[ng.Node]
		if n == nil {
			return fmt.Errorf("%s %s: unknown node %q", what, j.ID, ng.Node)
		}
		if n.State != topology.Ready {
			return fmt.Errorf("%s %s: node %s is %s", what, j.ID, n.Name, n.State)
		}
		if len(ng.GPUs)%j.GPUsPerMember != 0 {
			return fmt.Errorf("%s %s: %d GPUs on %s is not whole members of %d", what, j.ID, len(ng.GPUs), n.Name, j.GPUsPerMember)
		}
		for _, g := range ng.GPUs {
			if slices.Contains(n.Unhealthy, g) {
				return fmt.Errorf("%s %s: GPU %d of %s is unhealthy", what, j.ID, g, n.Name)
			}
		}
		if j.GPUType != "" && n.GPUType != j.GPUType {
			return fmt.Errorf("%s %s: node %s has type %s, want %s", what, j.ID, n.Name, n.GPUType, j.GPUType)
		}
		if i == 0 {
			typ = n.GPUType
		} else if !j.MixGPUTypes && n.GPUType != typ {
			return fmt.Errorf("%s %s: members on GPU types %q and %q; the job does not mix types", what, j.ID, typ, n.GPUType)
		}
		p := ""
		for l := 0; l <= req; l++ {
			p += "/" + n.Domains[w.s.Cluster.Levels[l]]
		}
		if i == 0 {
			path = p
		} else if p != path {
			return fmt.Errorf("%s %s: requires one %s, got %s and %s", what, j.ID, j.Topology.Required, path, p)
		}
	}
	return nil
}

// checkGangs is invariant 2 for placements and reservations.
func checkGangs(w *world) error {
	for _, p := range w.d.Placements {
		if err := w.checkShape("placement", w.jobs[p.Job], p.Allocation); err != nil {
			return err
		}
	}
	for _, r := range w.d.Reservations {
		if err := w.checkShape("reservation", w.jobs[r.Job], r.Allocation); err != nil {
			return err
		}
	}
	return nil
}

// checkNoJobLost is invariant 3, plus the time-limit and node-down
// eviction rules.
func checkNoJobLost(w *world) error {
	seen := map[string]string{}
	note := func(id, list string) error {
		j, ok := w.jobs[id]
		if !ok {
			return fmt.Errorf("%s names unknown job %q", list, id)
		}
		if o, dup := seen[id]; dup {
			return fmt.Errorf("job %s is in %s and %s", id, o, list)
		}
		seen[id] = list
		want := scheduler.Pending
		if list == "evictions" {
			want = scheduler.Running
		}
		if j.State != want {
			return fmt.Errorf("%s job %s is in %s", j.State, id, list)
		}
		return nil
	}
	sorted := func(list string, ids []string) error {
		if !slices.IsSorted(ids) {
			return fmt.Errorf("%s not sorted by job ID: %v", list, ids)
		}
		return nil
	}
	var pl, ev, rs, pe []string
	for _, x := range w.d.Placements {
		pl = append(pl, x.Job)
	}
	for _, x := range w.d.Evictions {
		ev = append(ev, x.Job)
	}
	for _, x := range w.d.Reservations {
		rs = append(rs, x.Job)
	}
	for _, x := range w.d.Pending {
		pe = append(pe, x.Job)
	}
	if err := errors.Join(sorted("placements", pl), sorted("evictions", ev), sorted("reservations", rs), sorted("pending", pe)); err != nil {
		return err
	}
	for _, p := range w.d.Placements {
		if err := note(p.Job, "placements"); err != nil {
			return err
		}
	}
	for _, r := range w.d.Reservations {
		if err := note(r.Job, "reservations"); err != nil {
			return err
		}
	}
	for _, p := range w.d.Pending {
		if err := note(p.Job, "pending"); err != nil {
			return err
		}
	}
	for _, e := range w.d.Evictions {
		if err := note(e.Job, "evictions"); err != nil {
			return err
		}
	}
	for i := range w.s.Jobs {
		j := &w.s.Jobs[i]
		_, listed := seen[j.ID]
		if j.State == scheduler.Pending && !listed {
			return fmt.Errorf("pending job %s is lost", j.ID)
		}
		if j.State != scheduler.Running {
			continue
		}
		down := slices.ContainsFunc(j.Allocation, func(a topology.NodeGPUs) bool { return w.nodes[a.Node].State == topology.Down })
		past := j.TimeLimit > 0 && !j.Started.Add(j.TimeLimit).After(w.s.Now) && !w.cfg.IgnoreTimeLimits
		e, evicted := w.evict[j.ID]
		switch {
		case down && (!evicted || e.Reason != scheduler.EvictNodeDown):
			return fmt.Errorf("job %s on a down node: eviction %+v, want node-down", j.ID, e)
		case !down && past && (!evicted || e.Reason != scheduler.EvictTimeLimit):
			return fmt.Errorf("job %s past its limit: eviction %+v, want time-limit", j.ID, e)
		}
	}
	return nil
}

// checkReservationsHold is invariant 5: replaying the decision forward,
// every reserved GPU is, at the reservation's start, on a ready node,
// healthy, and used by nothing else then (held jobs and placements still
// running, or reservations overlapping it in time).
func checkReservationsHold(w *world) error {
	uses := w.uses()
	for _, r := range w.d.Reservations {
		if r.Start.Before(w.s.Now) {
			return fmt.Errorf("reservation %s starts at %s, before now", r.Job, r.Start)
		}
		self := w.holdEnd(r.Start, w.jobs[r.Job])
		mine := gpuKeys(r.Allocation)
		for _, ng := range r.Allocation {
			n := w.nodes[ng.Node]
			if n == nil || n.State != topology.Ready {
				return fmt.Errorf("reservation %s on node %q that is not ready", r.Job, ng.Node)
			}
			for _, g := range ng.GPUs {
				if slices.Contains(n.Unhealthy, g) || g >= n.GPUs {
					return fmt.Errorf("reservation %s on unusable GPU %s/%d", r.Job, n.Name, g)
				}
			}
		}
		for _, u := range uses {
			if u.who == "reserved "+r.Job {
				continue
			}
			var overlaps bool
			if u.from.IsZero() || u.from.Equal(w.s.Now) && u.who[0] == 'p' {
				overlaps = u.to.After(r.Start) // already running at r.Start
			} else {
				overlaps = u.from.Before(self) && u.to.After(r.Start)
			}
			if !overlaps {
				continue
			}
			for k := range gpuKeys(u.alloc) {
				if mine[k] {
					return fmt.Errorf("reservation %s at %s: GPU %s still used by %s until %s", r.Job, r.Start.Format(time.RFC3339), k, u.who, u.to.Format(time.RFC3339))
				}
			}
		}
	}
	return nil
}

func gpuKeys(a topology.Allocation) map[string]bool {
	out := map[string]bool{}
	for _, ng := range a {
		for _, g := range ng.GPUs {
			out[fmt.Sprintf("%s/%d", ng.Node, g)] = true
		}
	}
	return out
}

// checkWorkConserving is invariant 6: a job left waiting for GPUs, CPU
// or memory, or given a reservation, does not fit what is free now once
// held jobs, new placements and the reservations overlapping
// [now, holdEnd) take their GPUs, CPU and memory away.
func checkWorkConserving(w *world) error {
	waits := slices.Clone(w.d.Pending)
	for _, r := range w.d.Reservations {
		waits = append(waits, scheduler.Wait{Job: r.Job, Reason: "reserved", Message: "reserved at " + r.Start.Format(time.RFC3339)})
	}
	for _, p := range waits {
		switch p.Reason {
		case scheduler.ReasonInsufficientGPUs, scheduler.ReasonTopology, scheduler.ReasonBehindReservation, "reserved",
			scheduler.ReasonInsufficientCPU, scheduler.ReasonInsufficientMemory:
		default:
			continue
		}
		j := w.jobs[p.Job]
		end := w.holdEnd(w.s.Now, j)
		ix, err := topology.NewIndex(&w.s.Cluster)
		if err != nil {
			return err
		}
		for _, u := range w.uses() {
			if u.who == "reserved "+j.ID || !(u.from.IsZero() || u.from.Before(end)) {
				continue
			}
			holder := w.jobs[u.who[strings.IndexByte(u.who, ' ')+1:]] // "held ID", "placed ID", "reserved ID"
			for _, ng := range u.alloc {
				if err := takeAllocation(ix, topology.Allocation{ng}); err != nil {
					return err
				}
				n, _ := ix.Lookup(ng.Node)
				cpu, mem := usePer(holder, len(ng.GPUs))
				ix.AddUse(n, cpu, mem)
			}
		}
		req := gang.NewRequest(j.Members, j.GPUsPerMember)
		req.CPUMillis, req.MemoryMiB = int64(j.CPUMillis), int64(j.MemoryMiB)
		if err := fitsNow(ix, j, p, req); err != nil {
			return err
		}
	}
	return nil
}

// fitsNow returns an error when job j, which waits (p), fits now on ix
// under req: on its own GPU type, or, for a gang that names no type and
// does not mix types, on some one type.
func fitsNow(ix *topology.Index, j *scheduler.Job, p scheduler.Wait, req gang.Request) error {
	c, ok := ix.Class(j.GPUType)
	if !ok {
		return fmt.Errorf("job %s waits with %s but no node has type %q", j.ID, p.Reason, j.GPUType)
	}
	req.Class = c
	if l, ok := ix.LevelOf(j.Topology.Required); ok {
		req.Required = l
	}
	classes := []topology.Class{c}
	if c == topology.AnyType && j.Members > 1 && !j.MixGPUTypes && ix.NumTypes() > 1 {
		classes = classes[:0] // all members on one type: try each
		for i := range ix.NumTypes() {
			tc, _ := ix.TypeClass(i)
			classes = append(classes, tc)
		}
	}
	for _, c := range classes {
		req.Class = c
		if pl, out := gang.Place(ix, req, nil); out == gang.Placed {
			return fmt.Errorf("job %s waits (%s: %s) but fits now on %s", j.ID, p.Reason, p.Message, pl.Allocation(ix))
		}
	}
	return nil
}

// step runs one Step and fails the check on an error.
func step(t *rapid.T, cfg scheduler.Config, s *scheduler.Snapshot) *scheduler.Decision {
	d, err := scheduler.New(cfg).Step(s)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return d
}

// checkAll runs the checkers of one decision.
func checkAll(w *world, checks ...func(*world) error) error {
	var errs []error
	for _, c := range checks {
		if err := c(w); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func forModes(t *testing.T, check func(t *rapid.T, cfg scheduler.Config)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { check(t, m.cfg) })
		})
	}
}

func propertyOf(c func(*world) error) func(t *rapid.T, cfg scheduler.Config) {
	return func(t *rapid.T, cfg scheduler.Config) {
		s := gen.Snapshot(t)
		d := step(t, cfg, s)
		if err := c(newWorld(s, d, cfg)); err != nil {
			t.Fatalf("%v\n%s", err, dump(s, d))
		}
	}
}

func TestInvariantNoDoubleAllocation(t *testing.T) { forModes(t, propertyOf(checkNoDoubleAllocation)) }

func TestInvariantGangsWhole(t *testing.T) { forModes(t, propertyOf(checkGangs)) }

func TestInvariantNoJobLost(t *testing.T) { forModes(t, propertyOf(checkNoJobLost)) }

func TestInvariantReservationsHold(t *testing.T) { forModes(t, propertyOf(checkReservationsHold)) }

func TestInvariantWorkConserving(t *testing.T) { forModes(t, propertyOf(checkWorkConserving)) }

// TestInvariantDeterminism is invariant 7: the decision does not depend
// on the order of nodes, teams, jobs or allocation entries, and Step
// leaves the snapshot as it found it.
func TestInvariantDeterminism(t *testing.T) {
	forModes(t, func(t *rapid.T, cfg scheduler.Config) {
		s := gen.Snapshot(t)
		before := gen.Clone(s)
		d := step(t, cfg, s)
		if !reflect.DeepEqual(s, before) {
			t.Fatalf("Step modified the snapshot:\nbefore %+v\nafter  %+v", before, s)
		}
		sh := gen.Shuffle(t, s)
		shBefore := gen.Clone(sh)
		d2 := step(t, cfg, sh)
		if !reflect.DeepEqual(sh, shBefore) {
			t.Fatalf("Step modified the shuffled snapshot")
		}
		if !reflect.DeepEqual(d, d2) {
			t.Fatalf("decision depends on input order:\n%+v\nvs shuffled\n%+v", d, d2)
		}
		if err := checkAll(newWorld(s, d, cfg), checkNoDoubleAllocation, checkGangs, checkNoJobLost, checkReservationsHold, checkWorkConserving); err != nil {
			t.Fatal(err)
		}
	})
}

// TestInvariantDeterminismAllocationOrder is invariant 7 for the order
// of the node entries inside each running job's allocation.
// (Step holds running allocations node by node in ID order, which
// TestAllocationOrderChangesPlacement pins down on the smallest case.)
func TestInvariantDeterminismAllocationOrder(t *testing.T) {
	forModes(t, func(t *rapid.T, cfg scheduler.Config) {
		s := gen.Snapshot(t)
		d := step(t, cfg, s)
		d2 := step(t, cfg, gen.ShuffleAllocations(t, s))
		if !reflect.DeepEqual(d, d2) {
			t.Fatalf("decision depends on the order of allocation entries:\n%+v\nvs shuffled\n%+v", d, d2)
		}
	})
}

// TestGeneratorCoverage guards the generators against drifting into
// trivial snapshots: across many draws, each outcome the invariants
// look at must occur. (topology is rare here; the gang tests cover it.)
func TestGeneratorCoverage(t *testing.T) {
	seen := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot(t)
		d := step(t, scheduler.Config{}, s)
		if len(d.Placements) > 0 {
			seen["placement"]++
		}
		if len(d.Reservations) > 0 {
			seen["reservation"]++
		}
		for _, e := range d.Evictions {
			seen[string(e.Reason)]++
		}
		for _, p := range d.Pending {
			seen[string(p.Reason)]++
		}
	})
	for _, k := range []string{"placement", "reservation", "time-limit", "node-down", "insufficient-gpus", "behind-reservation", "gpu-type", "unsatisfiable"} {
		if seen[k] == 0 {
			t.Errorf("no snapshot produced %s: %v", k, seen)
		}
	}
	t.Logf("%v", seen)
}

// TestAllocationOrderChangesPlacement is the smallest case of invariant
// 7 failing for allocation order: one running job holds GPU 0 of nodes
// a and b; listing its allocation as [b, a] instead of [a, b] moves a
// one-GPU job from one node to the other.
func TestAllocationOrderChangesPlacement(t *testing.T) {
	snap := func(order ...string) *scheduler.Snapshot {
		s := &scheduler.Snapshot{Now: gen.Now, Cluster: topology.Cluster{Nodes: []topology.Node{
			{Name: "a", GPUs: 2, Domains: map[string]string{}},
			{Name: "b", GPUs: 2, Domains: map[string]string{}},
		}}}
		run := scheduler.Job{ID: "R", Members: 2, GPUsPerMember: 1, State: scheduler.Running, Started: gen.Now.Add(-time.Hour)}
		for _, n := range order {
			run.Allocation = append(run.Allocation, topology.NodeGPUs{Node: n, GPUs: []int{0}})
		}
		s.Jobs = []scheduler.Job{run, {ID: "P", Members: 1, GPUsPerMember: 1}}
		return s
	}
	d1, err := scheduler.New(scheduler.Config{}).Step(snap("a", "b"))
	require.NoError(t, err)
	d2, err := scheduler.New(scheduler.Config{}).Step(snap("b", "a"))
	require.NoError(t, err)
	require.Equal(t, d1.Placements, d2.Placements)
}

// dump formats a snapshot and its decision compactly for failure reports.
func dump(s *scheduler.Snapshot, d *scheduler.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "levels %v\n", s.Cluster.Levels)
	for _, n := range s.Cluster.Nodes {
		fmt.Fprintf(&b, "node %s gpus=%d type=%s %v %s unhealthy=%v\n", n.Name, n.GPUs, n.GPUType, n.Domains, n.State, n.Unhealthy)
	}
	for _, j := range s.Jobs {
		fmt.Fprintf(&b, "job %s %s tier=%d %dx%d type=%q limit=%s grace=%s topo=%+v %s started=%s evictedAt=%s alloc=%s\n",
			j.ID, j.State, j.Tier, j.Members, j.GPUsPerMember, j.GPUType, j.TimeLimit, j.CheckpointGrace, j.Topology, j.Placement,
			j.Started.Sub(s.Now), j.EvictedAt.Sub(s.Now), j.Allocation)
	}
	for _, p := range d.Placements {
		fmt.Fprintf(&b, "placed %s %s\n", p.Job, p.Allocation)
	}
	for _, e := range d.Evictions {
		fmt.Fprintf(&b, "evicted %s %s grace=%s\n", e.Job, e.Reason, e.Grace)
	}
	for _, r := range d.Reservations {
		fmt.Fprintf(&b, "reserved %s at +%s %s\n", r.Job, r.Start.Sub(s.Now), r.Allocation)
	}
	for _, w := range d.Pending {
		fmt.Fprintf(&b, "pending %s %s: %s\n", w.Job, w.Reason, w.Message)
	}
	return b.String()
}

// TestFittingJobIsPlaced is the smallest case found of invariant 6
// failing under conservative backfill. On nodes n0, n1 (2 GPUs) and n2
// (1 GPU), R holds n0 for an hour and Q holds n2 for ten minutes. A
// (2×2) is reserved at +1h on n0 and n1; B (1×1, no limit) does not fit
// now and is reserved after A; D (1×1, spread) is reserved at +10m on
// n2. C (1×1, 30 minutes) fits now on n1, which is free until A's
// reservation at +1h, and must start.
func TestFittingJobIsPlaced(t *testing.T) {
	now := gen.Now
	node := func(name string, gpus int) topology.Node { return topology.Node{Name: name, GPUs: gpus} }
	job := func(id string, tier, members, gpus int, limit time.Duration, age int) scheduler.Job {
		return scheduler.Job{ID: id, Tier: scheduler.TierN(tier), Members: members, GPUsPerMember: gpus, TimeLimit: limit,
			Submitted: now.Add(-time.Duration(age) * time.Minute)}
	}
	r := job("R", 0, 1, 2, time.Hour, 100)
	r.State, r.Started, r.Allocation = scheduler.Running, now, topology.Allocation{{Node: "n0", GPUs: []int{0, 1}}}
	q := job("Q", 0, 1, 1, 10*time.Minute, 100)
	q.State, q.Started, q.Allocation = scheduler.Running, now, topology.Allocation{{Node: "n2", GPUs: []int{0}}}
	d := job("D", 1, 1, 1, 0, 3)
	d.Placement = scheduler.Spread
	snap := &scheduler.Snapshot{Now: now, Cluster: topology.Cluster{Nodes: []topology.Node{node("n0", 2), node("n1", 2), node("n2", 1)}},
		Jobs: []scheduler.Job{r, q, job("A", 0, 2, 2, 2*time.Hour, 5), job("B", 1, 1, 1, 0, 4), d, job("C", 2, 1, 1, 30*time.Minute, 2)}}
	cfg := scheduler.Config{Backfill: scheduler.Conservative, Order: scheduler.TierOrder{}}
	dec, err := scheduler.New(cfg).Step(snap)
	require.NoError(t, err)
	require.NoError(t, checkWorkConserving(newWorld(snap, dec, cfg)), dump(snap, dec))
	require.Equal(t, []scheduler.Placement{{Job: "C", Allocation: topology.Allocation{{Node: "n1", GPUs: []int{0}}}}}, dec.Placements, dump(snap, dec))
}

// A running job whose limit ends less than a second from now holds its
// GPU until then: the reservation of the job waiting for it starts at
// that instant, not at now (invariant 5).
func TestReservationAfterSubSecondRelease(t *testing.T) {
	now := gen.Now
	r := scheduler.Job{ID: "R", Members: 1, GPUsPerMember: 1, State: scheduler.Running, TimeLimit: time.Hour,
		Started: now.Add(-time.Hour + 500*time.Millisecond), Allocation: topology.Allocation{{Node: "n0", GPUs: []int{0}}}}
	p := scheduler.Job{ID: "P", Members: 1, GPUsPerMember: 1, TimeLimit: time.Hour, Submitted: now.Add(-time.Minute)}
	snap := &scheduler.Snapshot{Now: now, Cluster: topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 1}}},
		Jobs: []scheduler.Job{r, p}}
	for _, cfg := range []scheduler.Config{{}, {Backfill: scheduler.Conservative}} {
		dec, err := scheduler.New(cfg).Step(snap)
		require.NoError(t, err)
		require.Len(t, dec.Reservations, 1, dump(snap, dec))
		require.Equal(t, now.Add(500*time.Millisecond), dec.Reservations[0].Start)
		require.NoError(t, checkReservationsHold(newWorld(snap, dec, cfg)), dump(snap, dec))
	}
}

// takeAllocation holds in ix the GPUs of a that it does not hold yet.
func takeAllocation(ix *topology.Index, a topology.Allocation) error {
	for _, ng := range a {
		n, _ := ix.Lookup(ng.Node)
		if err := ix.TakeSet(n, topology.SetOf(ng.GPUs...)&^ix.Held(n)); err != nil {
			return err
		}
	}
	return nil
}
