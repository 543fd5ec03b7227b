package sim_test

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/scheduler/sim"
)

// TestPropertyReplayDeterministic runs each random world twice as given,
// which must give equal results, and once with its jobs, its nodes and
// its node events shuffled (no node changes twice at one instant, so
// their order carries no meaning). Step does not depend on the order of
// the snapshot's nodes and jobs (DESIGN invariant 7), so every job must
// have the same attempts on the same GPUs, and the summary and series
// must agree but for the rounding of float sums taken in another order.
func TestPropertyReplayDeterministic(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := drawWorld(rt)
		a := runWorld(rt, w)
		b, err := sim.Run(w.cluster, w.jobs, w.cfg, w.opt)
		if err != nil {
			rt.Fatalf("second run: %v", err)
		}
		if !reflect.DeepEqual(a, b) {
			rt.Fatalf("two runs of one input differ:\n%+v\n%+v", a, b)
		}

		perm := rapid.Permutation(indices(len(w.jobs))).Draw(rt, "jobOrder")
		jobs := make([]sim.Job, len(perm))
		for k, i := range perm {
			jobs[k] = w.jobs[i]
		}
		c := w.cluster
		c.Nodes = rapid.Permutation(c.Nodes).Draw(rt, "nodeOrder")
		opt := w.opt
		opt.NodeEvents = rapid.Permutation(opt.NodeEvents).Draw(rt, "eventOrder")
		sh, err := sim.Run(c, jobs, w.cfg, opt)
		if err != nil {
			rt.Fatalf("shuffled run: %v", err)
		}
		for k, i := range perm {
			if !reflect.DeepEqual(sh.Jobs[k], a.Jobs[i]) {
				rt.Fatalf("job %s: shuffled input gives\n%+v\nwant\n%+v", a.Jobs[i].ID, sh.Jobs[k], a.Jobs[i])
			}
		}
		if !reflect.DeepEqual(sh.Teams, a.Teams) || len(sh.Series) != len(a.Series) {
			rt.Fatalf("shuffled input: teams %v, %d points; want %v, %d points", sh.Teams, len(sh.Series), a.Teams, len(a.Series))
		}
		sumA, sumS := a.Summary, sh.Summary
		if !nearSummary(sumS, sumA) {
			rt.Fatalf("shuffled input: summary\n%+v\nwant\n%+v", sumS, sumA)
		}
		for k := range a.Series {
			p, q := sh.Series[k], a.Series[k]
			if p.At != q.At || p.Width != q.Width || !near(p.Utilization, q.Utilization) || !near(p.Queue, q.Queue) ||
				!near(p.Running, q.Running) || !slices.EqualFunc(p.TeamShare, q.TeamShare, near) {
				rt.Fatalf("shuffled input: point %d is %+v, want %+v", k, p, q)
			}
		}
	})
}

func indices(n int) []int {
	ix := make([]int, n)
	for i := range ix {
		ix[i] = i
	}
	return ix
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// nearSummary compares summaries exactly but for their float fields,
// which may differ by rounding.
func nearSummary(a, b sim.Summary) bool {
	fa := []float64{a.Utilization, a.GPUHours, a.MeanBoundedSlowdown, a.MaxBoundedSlowdown, a.Jain}
	fb := []float64{b.Utilization, b.GPUHours, b.MeanBoundedSlowdown, b.MaxBoundedSlowdown, b.Jain}
	if !slices.EqualFunc(fa, fb, near) || len(a.Teams) != len(b.Teams) {
		return false
	}
	for k := range a.Teams {
		p, q := a.Teams[k], b.Teams[k]
		if p.Team != q.Team || p.Jobs != q.Jobs || p.MeanWait != q.MeanWait || !near(p.GPUHours, q.GPUHours) ||
			!near(p.Share, q.Share) || !near(p.MeanBoundedSlowdown, q.MeanBoundedSlowdown) {
			return false
		}
	}
	a.Utilization, a.GPUHours, a.MeanBoundedSlowdown, a.MaxBoundedSlowdown, a.Jain, a.Teams = 0, 0, 0, 0, 0, nil
	b.Utilization, b.GPUHours, b.MeanBoundedSlowdown, b.MaxBoundedSlowdown, b.Jain, b.Teams = 0, 0, 0, 0, 0, nil
	return reflect.DeepEqual(a, b)
}
