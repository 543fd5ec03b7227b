package scheduler_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestPropertyWaitMessagesAtTurn recomputes, by brute force over the
// snapshot and the placements made before each job's turn, the numbers
// of the wait messages (free GPUs, members they hold, domains with room,
// quota figures) and checks both the exact text of the
// insufficient-gpus and topology messages and that each reason agrees
// with those numbers. Steps that try jobs out of priority order
// (shortest-first backfill) are left out.
func TestPropertyWaitMessagesAtTurn(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, _ := drawExplainSnapshot(t)
		cfg := explainConfig(t, s)
		d, err := scheduler.New(cfg).Step(gen.Clone(s))
		if err != nil {
			t.Fatalf("Step: %v", err)
		}
		x := newExplainRef(s, d, cfg)
		if !x.inOrder() {
			return
		}
		nodes := map[string]*topology.Node{}
		held := heldGPUs{}
		hold := held.hold
		for i := range s.Cluster.Nodes {
			nodes[s.Cluster.Nodes[i].Name] = &s.Cluster.Nodes[i]
		}
		for _, j := range s.Jobs {
			if j.State != scheduler.Pending {
				hold(j.Allocation)
			}
		}
		types := map[string]bool{}
		for _, n := range s.Cluster.Nodes {
			types[n.GPUType] = true
		}
		sch := scheduler.New(cfg)
		for _, j := range x.order {
			w, waits := x.wait[j.ID]
			if waits {
				check(t, s, j, w, held, types)
				if w.Reason == scheduler.ReasonQuota {
					checkQuotaMsg(t, s, sch, x, j, w, held)
				}
			}
			if p, ok := x.place[j.ID]; ok {
				hold(p.Allocation)
			}
		}
	})
}

var seenReasons = map[scheduler.Reason]int{}

// fitStats are the brute-force figures of a job's wait message over the
// nodes of one GPU type (or of every type).
type fitStats struct {
	free, capacity, bestDom int
	// readyMost and allMost are the most members the ready nodes, and
	// all nodes, hold with every job gone (in one domain of the required
	// level, when the job has one).
	readyMost, allMost int
}

func statsOf(s *scheduler.Snapshot, j *scheduler.Job, typ string, anyType bool, held map[string]map[int]bool) fitStats {
	g := j.GPUsPerMember
	var st fitStats
	lvl := slices.Index(s.Cluster.Levels, j.Topology.Required)
	dom := map[string]int{}
	readyDom, allDom := map[string]int{}, map[string]int{}
	for _, n := range s.Cluster.Nodes {
		if !anyType && n.GPUType != typ {
			continue
		}
		path := ""
		if lvl >= 0 {
			for _, l := range s.Cluster.Levels[:lvl+1] {
				path += "/" + n.Domains[l]
			}
		}
		h := 0
		f := 0
		for k := range n.GPUs {
			if slices.Contains(n.Unhealthy, k) {
				continue
			}
			h++
			if !held[n.Name][k] {
				f++
			}
		}
		allDom[path] += h / g
		if n.State == topology.Ready {
			readyDom[path] += h / g
		}
		if n.State != topology.Ready {
			continue
		}
		st.free += f
		st.capacity += f / g
		dom[path] += f / g
	}
	for _, c := range dom {
		st.bestDom = max(st.bestDom, c)
	}
	for _, c := range readyDom {
		st.readyMost = max(st.readyMost, c)
	}
	for _, c := range allDom {
		st.allMost = max(st.allMost, c)
	}
	return st
}

func check(t *rapid.T, s *scheduler.Snapshot, j *scheduler.Job, w scheduler.Wait, held map[string]map[int]bool, types map[string]bool) {
	g, m := j.GPUsPerMember, j.Members
	// A gang that names no type and does not mix types runs on one: its
	// figures are those of the type with the most free GPUs among those
	// whose ready nodes could hold it (the first by name among equals);
	// it is unsatisfiable when no type could hold it with every node up;
	// it fits now when some type does.
	st := statsOf(s, j, j.GPUType, j.GPUType == "", held)
	suffix := ""
	fitsSome := st.capacity >= m && (st.bestDom >= m || j.Topology.Required == "")
	readyMost, allMost := st.readyMost, st.allMost
	if j.GPUType == "" && j.Members > 1 && !j.MixGPUTypes && len(types) > 1 {
		all := st
		best, found := "", false
		fitsSome, readyMost, allMost = false, 0, 0
		for _, name := range slices.Sorted(maps.Keys(types)) {
			o := statsOf(s, j, name, false, held)
			if o.readyMost >= m && (!found || o.free > st.free) { // types whose ready nodes could hold it
				st, best, found = o, name, true
			}
			fitsSome = fitsSome || o.capacity >= m && (o.bestDom >= m || j.Topology.Required == "")
			readyMost, allMost = max(readyMost, o.readyMost), max(allMost, o.allMost)
		}
		if all.free > st.free {
			suffix = fmt.Sprintf(" (all its members go on one GPU type; counted on %s, the type with the most free GPUs that could hold it)", best)
			if best == "" {
				suffix = " (all its members go on one GPU type; counted on the nodes without a type, which have the most free GPUs of the types that could hold it)"
			}
		}
	}
	free, capacity, bestDom := st.free, st.capacity, st.bestDom
	typ := ""
	if j.GPUType != "" {
		typ = " " + j.GPUType
	}
	shapeTyp := typ // in the messages of satisfiable
	if j.GPUType == "" && j.Members > 1 && !j.MixGPUTypes && len(types) > 1 {
		shapeTyp = " same-type"
	}
	seenReasons[w.Reason]++
	msg, _, _ := strings.Cut(w.Message, "; no start")
	switch w.Reason {
	case scheduler.ReasonGPUType:
		if types[j.GPUType] {
			t.Fatalf("%s: gpu-type but a node has %q", j.ID, j.GPUType)
		}
	case scheduler.ReasonUnsatisfiable:
		if m <= allMost {
			t.Fatalf("%s: unsatisfiable %q, but %d members fit the empty cluster with every node up", j.ID, w.Message, allMost)
		}
	case scheduler.ReasonInsufficientGPUs:
		if m > readyMost {
			// It waits for nodes that are down or draining.
			noun := "members"
			if readyMost == 1 {
				noun = "member"
			}
			want := fmt.Sprintf("needs %d×%d%s GPUs; the ready nodes hold at most %d such %s (%d with every node up): it waits for nodes that are down or draining", m, g, shapeTyp, readyMost, noun, allMost)
			if j.Topology.Required != "" {
				want = fmt.Sprintf("needs %d×%d%s GPUs in one %s; no %s holds more than %d such %s on ready nodes (%d with every node up): it waits for nodes that are down or draining",
					m, g, shapeTyp, j.Topology.Required, j.Topology.Required, readyMost, noun, allMost)
			}
			if w.Message != want || m > allMost {
				t.Fatalf("%s: message %q, want %q (unsatisfiable beyond %d members)", j.ID, w.Message, want, allMost)
			}
			seenReasons["down-or-draining"]++
			return
		}
		want := fmt.Sprintf("needs %d×%d%s GPUs, %d free", m, g, typ, free)
		if free >= m*g {
			noun := "members"
			if capacity == 1 {
				noun = "member"
			}
			want = fmt.Sprintf("needs %d×%d%s GPUs, %d free but split across nodes: room for %d %s", m, g, typ, free, capacity, noun)
		}
		want += suffix
		if msg != want {
			t.Fatalf("%s: message %q, want %q", j.ID, msg, want)
		}
		if capacity >= m {
			t.Fatalf("%s: insufficient-gpus but %d members fit at its turn", j.ID, capacity)
		}
	case scheduler.ReasonTopology:
		want := fmt.Sprintf("needs %d×%d%s GPUs in one %s; %d free in the cluster but no %s has room", m, g, typ, j.Topology.Required, free, j.Topology.Required) + suffix
		if msg != want {
			t.Fatalf("%s: message %q, want %q", j.ID, msg, want)
		}
		if capacity < m || bestDom >= m {
			t.Fatalf("%s: topology with capacity %d, best domain %d, members %d", j.ID, capacity, bestDom, m)
		}
	case scheduler.ReasonBehindReservation:
		if strings.Contains(w.Message, "an earlier job") {
			t.Fatalf("%s: %q names no reservation", j.ID, w.Message)
		}
		if !fitsSome {
			t.Fatalf("%s: behind-reservation, but at its turn capacity %d, best domain %d < %d members", j.ID, capacity, bestDom, m)
		}
	}
}

func checkQuotaMsg(t *rapid.T, s *scheduler.Snapshot, sch *scheduler.Scheduler, x *explainRef, j *scheduler.Job, w scheduler.Wait, held map[string]map[int]bool) {
	e, err := sch.Explain(s, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var team string
	var u, nom, b, need, borrowed, idle int
	if strings.Contains(w.Message, "borrowable") {
		if _, err := fmt.Sscanf(w.Message, "%s uses %d of %d nominal + %d borrowable GPUs; job needs %d", &team, &u, &nom, &b, &need); err != nil {
			t.Fatalf("%q: %v", w.Message, err)
		}
	} else {
		var unit string
		if _, err := fmt.Sscanf(w.Message, "%s uses %d of %d nominal GPUs; job needs %d, of which %d borrowed, but only %d %s", &team, &u, &nom, &need, &borrowed, &idle, &unit); err != nil {
			t.Fatalf("%q: %v", w.Message, err)
		}
		if wantUnit := map[bool]string{true: "GPU is idle", false: "GPUs are idle"}[idle == 1]; !strings.HasSuffix(w.Message, fmt.Sprintf(" %d %s", idle, wantUnit)) {
			t.Fatalf("%q: want it to end %q", w.Message, fmt.Sprintf("%d %s", idle, wantUnit))
		}
		seenReasons["idle-branch"]++
		evicting := map[string]map[int]bool{}
		for _, o := range s.Jobs {
			ev, gone := x.evict[o.ID]
			if o.State == scheduler.Evicting || gone && ev.By == "" {
				for _, a := range o.Allocation {
					if evicting[a.Node] == nil {
						evicting[a.Node] = map[int]bool{}
					}
					for _, g := range a.GPUs {
						evicting[a.Node][g] = true
					}
				}
			}
		}
		for _, o := range x.order[:x.rank[j.ID]-1] {
			if r, ok := x.resv[o.ID]; ok {
				for _, a := range r.Allocation {
					for _, g := range a.GPUs {
						delete(evicting[a.Node], g)
					}
				}
			}
		}
		want := 0
		for _, n := range s.Cluster.Nodes {
			if n.State != topology.Ready {
				continue
			}
			for k := range n.GPUs {
				if slices.Contains(n.Unhealthy, k) {
					continue
				}
				if !held[n.Name][k] || evicting[n.Name][k] {
					want++
				}
			}
		}
		if idle != want {
			t.Fatalf("%s: %q: idle %d, want %d", j.ID, w.Message, idle, want)
		}
	}
	if e.Quota == nil || e.Quota.InUse != u || e.Quota.Nominal != nom || (b != 0 && e.Quota.BorrowLimit != b) || team != j.Team || need != j.GPUs() {
		t.Fatalf("%s: message %q, explanation quota %+v", j.ID, w.Message, e.Quota)
	}
}
