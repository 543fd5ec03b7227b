package scheduler_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// usePer is what job j uses on a node where it holds gpus GPUs: its
// members there (a part member counted whole) times its request.
func usePer(j *scheduler.Job, gpus int) (cpu, mem int64) {
	m := int64(1)
	if g := j.GPUsPerMember; g > 0 {
		m = int64(max((gpus+g-1)/g, 1))
	}
	return m * int64(j.CPUMillis), m * int64(j.MemoryMiB)
}

// overCommitted reports how node n is over-committed by used CPU and
// memory (cpu, mem), or "".
func overCommitted(n *topology.Node, cpu, mem int64) string {
	switch {
	case n.CPUMillis > 0 && cpu > int64(n.CPUMillis):
		return fmt.Sprintf("CPU %d of %d", cpu, n.CPUMillis)
	case n.MemoryMiB > 0 && mem > int64(n.MemoryMiB):
		return fmt.Sprintf("memory %d of %d", mem, n.MemoryMiB)
	}
	return ""
}

// checkResources is invariant 11: no node's CPU or memory is
// over-committed by running, evicting and new jobs. A snapshot may
// report a node over-committed already; no placement may then add CPU
// (or memory) to it.
func checkResources(w *world) error {
	type use struct{ cpu, mem, newCPU, newMem int64 }
	per := map[string]*use{}
	at := func(node string) *use {
		if per[node] == nil {
			per[node] = &use{}
		}
		return per[node]
	}
	for i := range w.s.Jobs {
		j := &w.s.Jobs[i]
		if j.State == scheduler.Pending {
			continue
		}
		for _, ng := range j.Allocation {
			c, m := usePer(j, len(ng.GPUs))
			u := at(ng.Node)
			u.cpu, u.mem = u.cpu+c, u.mem+m
		}
	}
	for _, p := range w.d.Placements {
		j := w.jobs[p.Job]
		for _, ng := range p.Allocation {
			c, m := usePer(j, len(ng.GPUs))
			u := at(ng.Node)
			u.cpu, u.mem, u.newCPU, u.newMem = u.cpu+c, u.mem+m, u.newCPU+c, u.newMem+m
		}
	}
	for name, u := range per {
		n := w.nodes[name]
		if (u.newCPU > 0 && n.CPUMillis > 0 && u.cpu > int64(n.CPUMillis)) || (u.newMem > 0 && n.MemoryMiB > 0 && u.mem > int64(n.MemoryMiB)) {
			return fmt.Errorf("node %s over-committed by new placements: %s", name, overCommitted(n, u.cpu, u.mem))
		}
	}
	return nil
}

// checkReservationResources is invariant 5 for CPU and memory: replaying
// the decision forward, at every moment of each reservation's run its
// nodes hold its CPU and memory besides those of every use running then
// (held jobs and placements not yet ended, other reservations), where it
// asks for some.
func checkReservationResources(w *world) error {
	uses := w.uses()
	jobOf := func(who string) *scheduler.Job {
		for _, p := range []string{"held ", "placed ", "reserved "} {
			if len(who) > len(p) && who[:len(p)] == p {
				return w.jobs[who[len(p):]]
			}
		}
		return nil
	}
	for _, r := range w.d.Reservations {
		j := w.jobs[r.Job]
		self := w.holdEnd(r.Start, j)
		// The moments at which the use can grow during the run.
		moments := []time.Time{r.Start}
		for _, u := range uses {
			if u.from.After(r.Start) && u.from.Before(self) {
				moments = append(moments, u.from)
			}
		}
		for _, ng := range r.Allocation {
			addCPU, addMem := usePer(j, len(ng.GPUs))
			if addCPU == 0 && addMem == 0 {
				continue
			}
			for _, m := range moments {
				cpu, mem := addCPU, addMem
				for _, u := range uses {
					if u.who == "reserved "+r.Job || u.from.After(m) || !u.to.After(m) {
						continue
					}
					for _, ung := range u.alloc {
						if ung.Node == ng.Node {
							c, me := usePer(jobOf(u.who), len(ung.GPUs))
							cpu, mem = cpu+c, mem+me
						}
					}
				}
				n := w.nodes[ng.Node]
				if (addCPU > 0 && n.CPUMillis > 0 && cpu > int64(n.CPUMillis)) || (addMem > 0 && n.MemoryMiB > 0 && mem > int64(n.MemoryMiB)) {
					return fmt.Errorf("reservation %s at %s on %s, at %s: %s", r.Job, r.Start.Format(time.RFC3339), ng.Node, m.Format(time.RFC3339), overCommitted(n, cpu, mem))
				}
			}
		}
	}
	return nil
}

// propertyWithResources is propertyOf on snapshots whose nodes limit CPU
// and memory and whose jobs ask for some (gen.WithResources).
func propertyWithResources(c func(*world) error) func(t *rapid.T, cfg scheduler.Config) {
	return func(t *rapid.T, cfg scheduler.Config) {
		s := gen.WithResources(t, gen.Snapshot(t))
		d := step(t, cfg, s)
		if err := c(newWorld(s, d, cfg)); err != nil {
			t.Fatalf("%v\n%s%s", err, dump(s, d), resDump(s))
		}
	}
}

// resDump lists the CPU and memory of a snapshot's nodes and jobs.
func resDump(s *scheduler.Snapshot) string {
	out := ""
	for _, n := range s.Cluster.Nodes {
		out += fmt.Sprintf("node %s cpu=%d mem=%d\n", n.Name, n.CPUMillis, n.MemoryMiB)
	}
	for _, j := range s.Jobs {
		out += fmt.Sprintf("job %s cpu=%d mem=%d\n", j.ID, j.CPUMillis, j.MemoryMiB)
	}
	return out
}

// TestInvariantResources is invariant 11 over random clusters and
// workloads with CPU and memory set, under every backfill mode.
// Planted once each: running jobs' CPU and memory not held when the
// Step starts; a slot placed now not holding its CPU and memory; both
// failed it at once.
func TestInvariantResources(t *testing.T) {
	forModes(t, propertyWithResources(checkResources))
}

// TestInvariantReservationResources: reservations keep CPU and memory
// for their run (invariant 5 for them). Planted once: reservations not
// pinning their CPU and memory; it failed.
func TestInvariantReservationResources(t *testing.T) {
	forModes(t, propertyWithResources(checkReservationResources))
}

// The invariants of invariants_test.go, rerun on snapshots with CPU and
// memory set.
func TestInvariantsWithResources(t *testing.T) {
	forModes(t, propertyWithResources(func(w *world) error {
		return checkAll(w, checkNoDoubleAllocation, checkGangs, checkNoJobLost, checkReservationsHold, checkWorkConserving)
	}))
}

// TestInvariantDeterminismWithResources is invariant 7 with CPU and
// memory set: the decision does not depend on input order.
func TestInvariantDeterminismWithResources(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.WithResources(t, gen.Snapshot(t))
		cfg := scheduler.Config{Backfill: rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative}).Draw(t, "mode")}
		d1 := step(t, cfg, s)
		d2 := step(t, cfg, gen.Shuffle(t, s))
		if a, b := fmt.Sprintf("%+v", *d1), fmt.Sprintf("%+v", *d2); a != b {
			t.Fatalf("decisions differ with the input shuffled:\n%s\n%s", a, b)
		}
	})
}

// TestExplainCountsResources: Explain's funnel counts the nodes with a
// member's GPUs free, then those with its CPU too, then its memory too,
// and the members that fit count all three; the reason names the
// resource that stops the job.
func TestExplainCountsResources(t *testing.T) {
	now := gen.Now
	c := topology.Cluster{Nodes: []topology.Node{
		{Name: "n0", GPUs: 8, CPUMillis: 64000, MemoryMiB: 524288},
		{Name: "n1", GPUs: 8, CPUMillis: 64000, MemoryMiB: 524288},
		{Name: "n2", GPUs: 8, CPUMillis: 64000, MemoryMiB: 524288},
	}}
	running := func(id, node string, cpu, mem int) scheduler.Job {
		return scheduler.Job{ID: id, Team: "a", State: scheduler.Running, Members: 1, GPUsPerMember: 2, CPUMillis: cpu, MemoryMiB: mem,
			Kind: scheduler.Inference, Started: now.Add(-time.Hour), Allocation: topology.Allocation{{Node: node, GPUs: []int{0, 1}}}}
	}
	snap := &scheduler.Snapshot{Now: now, Cluster: c, Teams: []scheduler.Team{{Name: "a", Share: 1}}, Jobs: []scheduler.Job{
		running("cpu-heavy", "n0", 48000, 0),
		running("mem-heavy", "n1", 0, 458752),
		{ID: "C", Team: "a", Members: 2, GPUsPerMember: 4, CPUMillis: 40000, MemoryMiB: 131072, Submitted: now, TimeLimit: time.Hour},
	}}
	e, err := scheduler.New(scheduler.Config{}).Explain(snap, "C")
	if err != nil {
		t.Fatal(err)
	}
	// n0's 6 free GPUs are stranded by its CPU (16 CPUs free), n1's by
	// its memory (64 GiB free).
	want := scheduler.NodeFunnel{Total: 3, Eligible: 3, Ready: 3, OfType: 3, BigEnough: 3, FreeEnough: 3, CPUEnough: 2, MemoryEnough: 1,
		GPUsStrandedByCPU: 6, GPUsStrandedByMemory: 6}
	// By GPUs and CPU, n1 and n2 hold a member each: memory is what
	// stops C.
	if e.Nodes != want || e.Reason != string(scheduler.ReasonInsufficientMemory) {
		t.Fatalf("funnel %+v reason %s, want %+v insufficient-memory:\n%s", e.Nodes, e.Reason, want, e)
	}
	if e.MembersFitNow != 1 { // n2 holds one member by CPU (40 of 64) and memory
		t.Fatalf("members fit now %d, want 1", e.MembersFitNow)
	}
	if !strings.Contains(e.String(), "(6 free GPUs stranded by CPU, 6 by memory)") {
		t.Fatalf("explanation does not count the stranded GPUs:\n%s", e)
	}
}

// TestQuotaCPUAndMemory: a team's CPU and memory caps (quota keys
// "cpuMillis" and "memoryMiB") hold its jobs to them, running ones
// counted, while another team's job alike starts; and the JSON keys
// read and write back.
func TestQuotaCPUAndMemory(t *testing.T) {
	in := `{"now": "2026-12-02T00:00:00Z",
	 "cluster": {"nodes": [{"name": "n0", "gpus": 8, "cpuMillis": 128000}, {"name": "n1", "gpus": 8, "cpuMillis": 128000}]},
	 "teams": [{"name": "a", "share": 1, "quota": {"cpuMillis": 64000, "memoryMiB": 1048576}}, {"name": "b", "share": 1}],
	 "jobs": [
	  {"id": "R", "team": "a", "kind": "inference", "gpusPerMember": 2, "cpuMillis": 48000, "state": "running",
	   "started": "2026-12-01T23:00:00Z", "allocation": [{"node": "n0", "gpus": [0, 1]}]},
	  {"id": "A", "team": "a", "gpusPerMember": 2, "cpuMillis": 32000, "timeLimit": "1h"},
	  {"id": "A2", "team": "a", "gpusPerMember": 2, "cpuMillis": 16000, "timeLimit": "1h", "submitted": "2026-12-02T00:00:00Z"},
	  {"id": "B", "team": "b", "gpusPerMember": 2, "cpuMillis": 32000, "timeLimit": "1h"}]}`
	snap, err := scheduler.DecodeSnapshot(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if q := snap.Teams[0].Quota; q == nil || q.CPUMillis != 64000 || q.MemoryMiB != 1048576 || q.GPUs != 0 {
		t.Fatalf("quota %+v", q)
	}
	d, err := scheduler.New(scheduler.Config{}).Step(snap)
	if err != nil {
		t.Fatal(err)
	}
	var placed []string
	for _, p := range d.Placements {
		placed = append(placed, p.Job)
	}
	if !slices.Equal(placed, []string{"A2", "B"}) || len(d.Pending) != 1 || d.Pending[0].Job != "A" || d.Pending[0].Reason != scheduler.ReasonQuota {
		t.Fatalf("placed %v, pending %+v; want A2 and B placed (a: 48+16 of 64 CPUs), A waiting for quota", placed, d.Pending)
	}
	if want := "a uses 48 CPUs of 64 CPUs; job needs 32 CPUs"; d.Pending[0].Message != want {
		t.Fatalf("message %q, want %q", d.Pending[0].Message, want)
	}
	var out strings.Builder
	if err := scheduler.EncodeSnapshot(&out, snap); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"cpuMillis": 64000`) || !strings.Contains(out.String(), `"memoryMiB": 1048576`) {
		t.Fatalf("encoded quota missing its CPU and memory: %s", out.String())
	}
	back, err := scheduler.DecodeSnapshot(strings.NewReader(out.String()))
	if err != nil || *back.Teams[0].Quota != *snap.Teams[0].Quota {
		t.Fatalf("round trip: %v %+v", err, back.Teams[0].Quota)
	}
	snap.Teams[0].Quota.CPUMillis = -1
	if _, err := scheduler.New(scheduler.Config{}).Step(snap); err == nil || !strings.Contains(err.Error(), "quota.cpuMillis") {
		t.Fatalf("negative cpuMillis quota: %v", err)
	}
}

// TestInvariantPromisesWithResources is invariant 9 with CPU limited on
// the nodes and asked by the jobs: no promised start moves later.
func TestInvariantPromisesWithResources(t *testing.T) {
	for _, mode := range []scheduler.BackfillMode{scheduler.Conservative, scheduler.EASY} {
		for _, early := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/early=%v", mode, early), func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) { promisesHold(t, mode, early, true, false) })
			})
		}
	}
}
