package sim_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
	"github.com/gpusched/gpusched/topology"
)

// TestStrandedGolden: a job holding all of a node's CPU strands the
// node's other GPUs while a job waits that needs CPU; a node that does
// not limit CPU strands nothing.
func TestStrandedGolden(t *testing.T) {
	c := topology.Cluster{Nodes: []topology.Node{
		{Name: "n0", GPUs: 8, CPUMillis: 8000, MemoryMiB: 64},
		{Name: "n1", GPUs: 1},
	}}
	jobs := []sim.Job{
		// A fills n0's CPU with 2 GPUs for 100 s; B, 8 GPUs, waits for
		// n0 until then and takes it whole for 50 s.
		{ID: "a", Run: 100 * s, Limit: 100 * s, Members: 1, GPUsPerMember: 2, CPUMillis: 8000},
		{ID: "b", Run: 50 * s, Limit: 50 * s, Members: 1, GPUsPerMember: 8, CPUMillis: 1000, MemoryMiB: 8},
	}
	res, err := sim.Run(c, jobs, scheduler.Config{Order: scheduler.TierOrder{}}, sim.Options{MaxPoints: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Jobs[1].Start; got != 100*s {
		t.Fatalf("b started at %s, want 100s", got)
	}
	// [0, 100): 6 GPUs of n0 free, no CPU for b. n1's GPUs are free but
	// n1 does not limit CPU. [100, 150): n0 is full.
	if want := 6 * 100.0 / 3600; math.Abs(res.Summary.StrandedGPUHours-want) > 1e-12 {
		t.Fatalf("stranded %v GPU-hours, want %v", res.Summary.StrandedGPUHours, want)
	}
	var stranded, cpu, pending float64
	for _, p := range res.Series {
		if p.At < 100*s {
			stranded, cpu = max(stranded, p.Stranded), max(cpu, p.CPU)
			for _, v := range p.Pending {
				pending = max(pending, v)
			}
		} else if p.Stranded != 0 {
			t.Fatalf("at %s: %v GPUs stranded, want 0", p.At, p.Stranded)
		}
	}
	if stranded != 6 || cpu != 1 || pending != 1 {
		t.Fatalf("before 100s: %v stranded, CPU %v, pending %v; want 6, 1, 1 (reasons %v)", stranded, cpu, pending, res.Reasons)
	}
	if !slices.Equal(res.Reasons, []scheduler.Reason{sim.Reserved}) {
		t.Fatalf("reasons %v, want b's reservation only", res.Reasons)
	}
}

// TestPropertyStrandedMatchesReplay: the GPU-hours stranded by CPU or
// memory equal those recomputed from every job's attempts: between
// events, the free GPUs of nodes whose free CPU or memory is below the
// least any pending job asks (or used up, with none pending), summed over
// time. Worlds of one tier and exact limits, so that a job is pending
// from its submit to its start and runs to its end once.
func TestPropertyStrandedMatchesReplay(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 4).Draw(rt, "nodes")
		per := rapid.IntRange(1, 4).Draw(rt, "gpusPerNode")
		c := topology.Cluster{}
		for n := range nodes {
			c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", n), GPUs: per,
				CPUMillis: rapid.SampledFrom([]int{0, 4, 8}).Draw(rt, "cpu"),
				MemoryMiB: rapid.SampledFrom([]int{0, 4, 8}).Draw(rt, "mem")})
		}
		var jobs []sim.Job
		for i := range rapid.IntRange(1, 12).Draw(rt, "jobs") {
			gpm := rapid.IntRange(1, per).Draw(rt, "gpusPerMember")
			run := rapid.IntRange(1, 15).Draw(rt, "run")
			jobs = append(jobs, sim.Job{
				ID: fmt.Sprintf("j%02d", i), Submit: time.Duration(rapid.IntRange(0, 20).Draw(rt, "submit")) * s,
				Run: time.Duration(run) * s, Limit: time.Duration(run) * s,
				Members: rapid.IntRange(1, nodes*(per/gpm)).Draw(rt, "members"), GPUsPerMember: gpm, Tier: scheduler.P3,
				CPUMillis: rapid.IntRange(0, 5).Draw(rt, "cpuReq"), MemoryMiB: rapid.IntRange(0, 5).Draw(rt, "memReq"),
			})
		}
		cfg := scheduler.Config{Order: scheduler.TierOrder{},
			Backfill: rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative, scheduler.NoBackfill}).Draw(rt, "backfill")}
		res, err := sim.Run(c, jobs, cfg, sim.Options{RecordRuns: true})
		if err != nil {
			rt.Fatalf("run: %v", err)
		}
		want := replayStranded(c, jobs, res)
		if math.Abs(res.Summary.StrandedGPUHours-want) > 1e-9 {
			rt.Fatalf("stranded %v GPU-hours, want %v", res.Summary.StrandedGPUHours, want)
		}
	})
}

// replayStranded recomputes the stranded GPU-hours of a run from its
// attempts.
func replayStranded(c topology.Cluster, jobs []sim.Job, res *sim.Result) float64 {
	var times []time.Duration
	for i, r := range res.Jobs {
		times = append(times, jobs[i].Submit)
		for _, a := range r.Runs {
			times = append(times, a.Start, a.End)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	total := 0.0
	for k := 0; k+1 < len(times); k++ {
		t0 := times[k]
		gpus := make([]int, len(c.Nodes))
		cpu := make([]int, len(c.Nodes))
		mem := make([]int, len(c.Nodes))
		needCPU, needMem, pending := math.MaxInt, math.MaxInt, false
		for i, r := range res.Jobs {
			j := jobs[i]
			if j.Submit <= t0 && (r.Attempts == 0 || r.Start > t0) {
				pending = true
				needCPU, needMem = min(needCPU, j.CPUMillis), min(needMem, j.MemoryMiB)
			}
			for _, a := range r.Runs {
				if a.Start <= t0 && t0 < a.End {
					for _, e := range a.Allocation {
						n := slices.IndexFunc(c.Nodes, func(x topology.Node) bool { return x.Name == e.Node })
						gpus[n] += len(e.GPUs)
						cpu[n] += len(e.GPUs) / j.GPUsPerMember * j.CPUMillis
						mem[n] += len(e.GPUs) / j.GPUsPerMember * j.MemoryMiB
					}
				}
			}
		}
		if !pending {
			needCPU, needMem = 0, 0
		}
		needCPU, needMem = max(needCPU, 1), max(needMem, 1)
		for n, node := range c.Nodes {
			free := node.GPUs - gpus[n]
			if free > 0 && ((node.CPUMillis > 0 && node.CPUMillis-cpu[n] < needCPU) || (node.MemoryMiB > 0 && node.MemoryMiB-mem[n] < needMem)) {
				total += float64(free) * (times[k+1] - t0).Seconds()
			}
		}
	}
	return total / 3600
}

// TestStrandedInsufficientCPU: a job whose GPUs would fit but whose CPU
// does not waits with reason insufficient-cpu, and the node's free GPUs
// are stranded meanwhile.
func TestStrandedInsufficientCPU(t *testing.T) {
	c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 8, CPUMillis: 4000}}}
	jobs := []sim.Job{
		// a has no limit: no reservation can count on its end.
		{ID: "a", Run: 100 * s, Members: 1, GPUsPerMember: 1, CPUMillis: 4000},
		{ID: "b", Submit: 10 * s, Run: 10 * s, Limit: 10 * s, Members: 1, GPUsPerMember: 1, CPUMillis: 1000},
	}
	res, err := sim.Run(c, jobs, scheduler.Config{Order: scheduler.TierOrder{}, Backfill: scheduler.NoBackfill}, sim.Options{MaxPoints: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Jobs[1].Start; got != 100*s {
		t.Fatalf("b started at %s, want 100s, when a frees the CPU", got)
	}
	// [0, 100): 7 GPUs free with no CPU left.
	if want := 7 * 100.0 / 3600; math.Abs(res.Summary.StrandedGPUHours-want) > 1e-12 {
		t.Fatalf("stranded %v GPU-hours, want %v", res.Summary.StrandedGPUHours, want)
	}
	k := slices.Index(res.Reasons, scheduler.ReasonInsufficientCPU)
	if k < 0 {
		t.Fatalf("reasons %v: no insufficient-cpu", res.Reasons)
	}
	waited := 0.0
	for _, p := range res.Series {
		if p.At > 10*s && p.At < 100*s {
			waited = max(waited, p.Pending[k])
		}
	}
	if waited != 1 {
		t.Fatalf("b waiting for CPU: %v jobs, want 1", waited)
	}
}
