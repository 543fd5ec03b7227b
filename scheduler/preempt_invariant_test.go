package scheduler_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// preemptWorld draws a small, nearly full cluster where preemption is
// what a Step mostly decides: gangs of running jobs spanning nodes, two
// GPU types, racks, draining and down nodes, unhealthy GPUs, evicting
// jobs (some past their grace), teams with quotas, and a queue of
// preemptors of a few shapes; with a policy drawn from every option that
// touches preemption.
func preemptWorld(t *rapid.T) (*scheduler.Snapshot, scheduler.Config) {
	now := gen.Now
	s := &scheduler.Snapshot{Now: now}
	s.Cluster.Levels = []string{"rack"}
	nodes := rapid.IntRange(1, 6).Draw(t, "nodes")
	perRack := rapid.IntRange(1, 3).Draw(t, "perRack")
	types := rapid.IntRange(1, 2).Draw(t, "types")
	for i := range nodes {
		n := topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: rapid.SampledFrom([]int{4, 8}).Draw(t, "ngpus"),
			GPUType: []string{"A", "B"}[rapid.IntRange(0, types-1).Draw(t, "ntype")],
			Domains: map[string]string{"rack": fmt.Sprintf("r%d", i/perRack)}}
		switch rapid.IntRange(0, 9).Draw(t, "state") {
		case 0:
			n.State = topology.Draining
		case 1:
			n.State = topology.Down
		}
		if rapid.IntRange(0, 5).Draw(t, "sick") == 0 {
			n.Unhealthy = []int{rapid.IntRange(0, n.GPUs-1).Draw(t, "sickGPU")}
		}
		s.Cluster.Nodes = append(s.Cluster.Nodes, n)
	}
	teams := []string{"a", "b", "c"}
	for _, name := range teams {
		tm := scheduler.Team{Name: name, Share: 1}
		if rapid.IntRange(0, 2).Draw(t, "quota") == 0 {
			tm.Quota = &scheduler.Quota{GPUs: rapid.IntRange(0, 16).Draw(t, "qgpus"), BorrowLimit: rapid.IntRange(0, 16).Draw(t, "qborrow")}
		}
		s.Teams = append(s.Teams, tm)
	}
	// Running jobs fill the nodes in chunks of 1, 2, 4 or 8 GPUs, leaving
	// a few holes; a chunk may be one more member of the job before it,
	// so that gangs span nodes.
	id := 0
	for ni := range nodes {
		n := s.Cluster.Nodes[ni]
		for lo := 0; lo < n.GPUs; {
			g := min(rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "rgpus"), n.GPUs-lo)
			gpus := make([]int, g)
			for k := range gpus {
				gpus[k] = lo + k
			}
			lo += g
			if rapid.IntRange(0, 5).Draw(t, "hole") == 0 {
				continue
			}
			if k := len(s.Jobs) - 1; k >= 0 && s.Jobs[k].GPUsPerMember == g && s.Jobs[k].Allocation[len(s.Jobs[k].Allocation)-1].Node != n.Name &&
				rapid.IntRange(0, 2).Draw(t, "join") == 0 {
				s.Jobs[k].Members++
				s.Jobs[k].Allocation = append(s.Jobs[k].Allocation, topology.NodeGPUs{Node: n.Name, GPUs: gpus})
				continue
			}
			j := scheduler.Job{ID: fmt.Sprintf("r%02d", id), Team: rapid.SampledFrom(teams).Draw(t, "rteam"),
				Tier: scheduler.TierN(rapid.IntRange(0, 3).Draw(t, "rtier")), State: scheduler.Running, Members: 1, GPUsPerMember: g,
				Submitted:       now.Add(-10 * time.Hour),
				Started:         now.Add(-time.Duration(rapid.IntRange(1, 120).Draw(t, "rago")) * time.Minute),
				CheckpointGrace: time.Duration(rapid.SampledFrom([]int{0, 2, 5, 10, 30}).Draw(t, "rgrace")) * time.Minute,
				Allocation:      topology.Allocation{{Node: n.Name, GPUs: gpus}}}
			id++
			if rapid.IntRange(0, 2).Draw(t, "rlimited") > 0 {
				j.TimeLimit = now.Sub(j.Started) + time.Duration(rapid.IntRange(-1, 40).Draw(t, "rleft"))*time.Minute
			} else {
				j.Kind = scheduler.Inference
			}
			if rapid.IntRange(0, 6).Draw(t, "evicting") == 0 {
				j.State = scheduler.Evicting
				if rapid.IntRange(0, 3).Draw(t, "evictedAt") > 0 {
					j.EvictedAt = now.Add(-time.Duration(rapid.IntRange(0, 40).Draw(t, "evago")) * time.Minute)
				}
			}
			s.Jobs = append(s.Jobs, j)
		}
	}
	type shape struct {
		members, gpus int
		limit         time.Duration
		typ, req      string
	}
	var shapes []shape
	for range rapid.IntRange(1, 3).Draw(t, "shapes") {
		sh := shape{members: rapid.IntRange(1, 3).Draw(t, "members"), gpus: rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")}
		if rapid.Bool().Draw(t, "limited") {
			sh.limit = time.Duration(rapid.IntRange(1, 12).Draw(t, "limit")) * 10 * time.Minute
		}
		if types > 1 && rapid.Bool().Draw(t, "typed") {
			sh.typ = rapid.SampledFrom([]string{"A", "B"}).Draw(t, "typ")
		}
		if rapid.IntRange(0, 2).Draw(t, "inRack") == 0 {
			sh.req = "rack"
		}
		shapes = append(shapes, sh)
	}
	for i := range rapid.IntRange(1, 8).Draw(t, "pending") {
		sh := rapid.SampledFrom(shapes).Draw(t, "shape")
		j := scheduler.Job{ID: fmt.Sprintf("p%02d", i), Team: rapid.SampledFrom(teams).Draw(t, "team"),
			Tier:    scheduler.TierN(rapid.SampledFrom([]int{0, 0, 1, 1, 2, 3}).Draw(t, "tier")),
			Members: sh.members, GPUsPerMember: sh.gpus, TimeLimit: sh.limit, GPUType: sh.typ,
			Topology:        scheduler.TopologySpec{Required: sh.req},
			CheckpointGrace: time.Duration(rapid.IntRange(0, 10).Draw(t, "grace")) * time.Minute,
			Submitted:       now.Add(-time.Duration(rapid.IntRange(0, 60).Draw(t, "submit")) * time.Minute)}
		if rapid.IntRange(0, 3).Draw(t, "longer") == 0 {
			j.TimeLimit = time.Duration(rapid.IntRange(1, 12).Draw(t, "olimit")) * 10 * time.Minute
		}
		if j.TimeLimit == 0 {
			j.Kind = scheduler.Inference
		}
		if rapid.IntRange(0, 3).Draw(t, "spread") == 0 {
			j.Placement = scheduler.Spread
		}
		s.Jobs = append(s.Jobs, j)
	}

	var cfg scheduler.Config
	cfg.Backfill = rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative, scheduler.NoBackfill}).Draw(t, "backfill")
	cfg.Reservations = rapid.IntRange(0, 3).Draw(t, "k")
	if rapid.IntRange(0, 3).Draw(t, "sjf") == 0 {
		cfg.BackfillOrder = scheduler.ShortestFirst
	}
	cfg.Order = rapid.SampledFrom([]scheduler.Orderer{nil, scheduler.TierOrder{}}).Draw(t, "order")
	cfg.IgnoreTimeLimits = rapid.IntRange(0, 3).Draw(t, "ignoreLimits") == 0
	if rapid.IntRange(0, 3).Draw(t, "horizon") == 0 {
		cfg.Horizon = time.Duration(rapid.IntRange(1, 60).Draw(t, "horizonMin")) * time.Minute
	}
	if rapid.Bool().Draw(t, "customMatrix") {
		m := make(preempt.Matrix, 4)
		for p := range m {
			m[p] = make([]bool, 4)
		}
		for p := range 4 {
			for v := 1; v < 4; v++ {
				if p != v && !m[v][p] && rapid.Bool().Draw(t, "cell") {
					m[p][v] = true
					if m.Validate() != nil {
						m[p][v] = false // it would close a circle of preemption
					}
				}
			}
		}
		cfg.Preemption = m
	}
	if rapid.IntRange(0, 3).Draw(t, "reservePolicy") == 0 {
		may := map[string]bool{}
		for _, j := range s.Jobs {
			may[j.ID] = rapid.Bool().Draw(t, "mayReserve")
		}
		cfg.Reserve = scheduler.ReserveFunc(func(j *scheduler.Job, _ int) bool { return may[j.ID] })
	}
	return s, cfg
}

// checkPreemptions is DESIGN invariant 4 on one decision: each victim is
// of a tier the matrix lets its preemptor preempt (never tier 0), was
// running, keeps its checkpoint grace and is requeued; the preemptor gets
// a reservation at the end of the longest grace of its victims, on GPUs
// free now or held by its victims; and no victim can be spared. The last
// is checked on a narrower view than the Step had at the preemptor's
// turn: GPUs free now once the decision's placements and every other
// reservation are taken away, plus those of the other victims. If the
// preemptor fits there without one victim, it did at its turn too.
func checkPreemptions(w *world) error {
	m := w.cfg.Preemption
	if m == nil {
		m = preempt.Ordered(scheduler.DefaultTiers)
	}
	victims := map[string][]*scheduler.Job{}
	for _, e := range w.d.Evictions {
		if e.Reason != scheduler.EvictPreempted {
			if e.By != "" {
				return fmt.Errorf("eviction of %s for %s names %s", e.Job, e.Reason, e.By)
			}
			continue
		}
		if w.cfg.DisablePreemption {
			return fmt.Errorf("%s preempted with preemption off", e.Job)
		}
		v, p := w.jobs[e.Job], w.jobs[e.By]
		if p == nil || p.State != scheduler.Pending {
			return fmt.Errorf("%s preempted by %q, not a pending job", e.Job, e.By)
		}
		vt, pt := v.Tier.Level(m.Tiers()), p.Tier.Level(m.Tiers())
		if vt == 0 || !m.CanPreempt(pt, vt) {
			return fmt.Errorf("tier %d %s preempted by tier %d %s", vt, v.ID, pt, p.ID)
		}
		if e.Grace != v.CheckpointGrace || !e.Requeue {
			return fmt.Errorf("eviction of %s: grace %s requeue %v, want %s and true", v.ID, e.Grace, e.Requeue, v.CheckpointGrace)
		}
		victims[p.ID] = append(victims[p.ID], v)
	}
	resv := map[string]scheduler.Reservation{}
	for _, r := range w.d.Reservations {
		resv[r.Job] = r
	}
	for pid, vs := range victims {
		r, ok := resv[pid]
		if !ok {
			return fmt.Errorf("preemptor %s has no reservation", pid)
		}
		var grace time.Duration
		for _, v := range vs {
			grace = max(grace, v.CheckpointGrace)
		}
		if !r.Start.Equal(w.s.Now.Add(grace)) {
			return fmt.Errorf("preemptor %s reserved at %s, want the end of its victims' grace %s", pid, r.Start.Sub(w.s.Now), grace)
		}
		for _, spare := range vs {
			ix, err := w.narrowView(pid, vs, spare)
			if err != nil {
				return err
			}
			p := w.jobs[pid]
			req := gang.NewRequest(p.Members, p.GPUsPerMember)
			req.Class, _ = ix.Class(p.GPUType)
			if p.GPUType == "" && p.Members > 1 && !p.MixGPUTypes && ix.NumTypes() > 1 {
				// A gang that names no type runs on one: the type of
				// its reservation, for which its victims were chosen.
				req.Class, _ = ix.Class(w.nodes[r.Allocation[0].Node].GPUType)
			}
			if l, ok := ix.LevelOf(p.Topology.Required); ok {
				req.Required = l
			}
			_, out := gang.Place(ix, req, nil)
			if out == gang.Placed {
				return fmt.Errorf("preemptor %s fits without evicting %s (victims %d)", pid, spare.ID, len(vs))
			}
		}
		// Its reservation lies on GPUs free now or its victims'.
		mine := map[string]bool{}
		for _, v := range vs {
			for k := range gpuKeys(v.Allocation) {
				mine[k] = true
			}
		}
		for i := range w.s.Jobs {
			j := &w.s.Jobs[i]
			if j.State == scheduler.Pending || slices.Contains(vs, j) {
				continue
			}
			for k := range gpuKeys(j.Allocation) {
				if gpuKeys(r.Allocation)[k] {
					return fmt.Errorf("preemptor %s reserved GPU %s that %s holds", pid, k, j.ID)
				}
			}
		}
	}
	return nil
}

// narrowView is the cluster with every GPU taken but those free now and
// those of the victims of pid other than spare, and less those of the
// decision's placements and other reservations.
func (w *world) narrowView(pid string, vs []*scheduler.Job, spare *scheduler.Job) (*topology.Index, error) {
	ix, err := topology.NewIndex(&w.s.Cluster)
	if err != nil {
		return nil, err
	}
	take := func(a topology.Allocation) error { return takeAllocation(ix, a) }
	for i := range w.s.Jobs {
		j := &w.s.Jobs[i]
		if j.State == scheduler.Pending || (slices.Contains(vs, j) && j != spare) {
			continue
		}
		if err := take(j.Allocation); err != nil {
			return nil, err
		}
	}
	for _, p := range w.d.Placements {
		if err := take(p.Allocation); err != nil {
			return nil, err
		}
	}
	for _, r := range w.d.Reservations {
		if r.Job != pid {
			if err := take(r.Allocation); err != nil {
				return nil, err
			}
		}
	}
	return ix, nil
}

// TestInvariantPreemption checks every invariant on preemption worlds.
func TestInvariantPreemption(t *testing.T) {
	preemptions, multi, awaiting, steps := 0, 0, 0, 0
	rapid.Check(t, func(t *rapid.T) {
		s, cfg := preemptWorld(t)
		d := step(t, cfg, s)
		w := newWorld(s, d, cfg)
		if err := checkAll(w, checkNoDoubleAllocation, checkGangs, checkNoJobLost, checkReservationsHold, checkWorkConserving, checkPreemptions); err != nil {
			t.Fatalf("%v\ncfg %+v\n%s", err, cfg, dump(s, d))
		}
		steps++
		by := map[string]int{}
		for _, e := range d.Evictions {
			if e.Reason == scheduler.EvictPreempted {
				preemptions++
				if by[e.By]++; by[e.By] == 2 {
					multi++
				}
			}
		}
		for _, p := range d.Pending {
			if p.Reason == scheduler.ReasonAwaitingPreemption {
				awaiting++
			}
		}
		ref, err := scheduler.NewWithoutMemo(cfg).Step(s)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d, ref) {
			t.Fatalf("the preemption memo changed the decision:\nwith memo    %s\nwithout memo %s\n%s", show(d), show(ref), dump(s, d))
		}
		sh := gen.Shuffle(t, s)
		if d2 := step(t, cfg, sh); !reflect.DeepEqual(d, d2) {
			t.Fatalf("decision depends on input order:\n%s\nvs shuffled\n%s\n%s", show(d), show(d2), dump(s, d))
		}
	})
	if preemptions == 0 {
		t.Fatal("no preemption drawn")
	}
	t.Logf("%d steps: %d preemptions, %d preemptors with several victims, %d awaiting preemption", steps, preemptions, multi, awaiting)
}

// TestInvariantPreemptionOverSteps carries preemption worlds through a
// few host steps, checking every invariant on each decision.
func TestInvariantPreemptionOverSteps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, cfg := preemptWorld(t)
		h := host.New(s.Cluster, slices.Clone(s.Jobs)...)
		h.Teams = s.Teams
		var hist history
		for range 6 {
			d := step(t, cfg, s)
			hist = append(hist, stepRecord{s, d})
			w := newWorld(s, d, cfg)
			if err := checkAll(w, checkNoDoubleAllocation, checkGangs, checkNoJobLost, checkReservationsHold, checkWorkConserving, checkPreemptions); err != nil {
				t.Fatalf("%v\ncfg %+v%s", err, cfg, hist)
			}
			ref, err := scheduler.NewWithoutMemo(cfg).Step(s)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d, ref) {
				t.Fatalf("the preemption memo changed the decision:\nwith memo    %s\nwithout memo %s%s", show(d), show(ref), hist)
			}
			h.Apply(s.Now, d)
			now := h.Next(s.Now, d, time.Hour)
			h.Advance(now)
			s = h.Snapshot(now)
		}
	})
}
