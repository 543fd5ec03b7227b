package sim_test

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
	"github.com/gpusched/gpusched/topology"
)

// world is a random small simulation input: a uniform cluster, a
// workload of mixed tiers, kinds, teams, limits and graces, node
// failures, drains and repairs, and a policy.
type world struct {
	cluster topology.Cluster
	jobs    []sim.Job
	cfg     scheduler.Config
	opt     sim.Options
}

// drawWorld draws a world. Node events never put two changes of one node
// at one instant, so their input order does not matter.
func drawWorld(t *rapid.T) world {
	nodes := rapid.IntRange(1, 4).Draw(t, "nodes")
	per := rapid.IntRange(1, 4).Draw(t, "gpusPerNode")
	w := world{cluster: sim.Uniform(nodes, per)}
	n := rapid.IntRange(1, 12).Draw(t, "jobs")
	for i := range n {
		gpm := rapid.IntRange(1, per).Draw(t, "gpusPerMember")
		j := sim.Job{
			ID:              fmt.Sprintf("j%02d", i),
			Submit:          time.Duration(rapid.IntRange(0, 20).Draw(t, "submit")) * s,
			Run:             time.Duration(rapid.IntRange(1, 15).Draw(t, "run")) * s,
			Members:         rapid.IntRange(1, nodes*(per/gpm)).Draw(t, "members"),
			GPUsPerMember:   gpm,
			Team:            rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, "team"),
			Tier:            scheduler.TierN(rapid.IntRange(0, 3).Draw(t, "tier")),
			Kind:            rapid.SampledFrom([]scheduler.Kind{scheduler.Training, scheduler.Inference}).Draw(t, "kind"),
			CheckpointGrace: time.Duration(rapid.IntRange(0, 2).Draw(t, "grace")) * s,
		}
		if rapid.Bool().Draw(t, "hasLimit") {
			j.Limit = time.Duration(rapid.IntRange(1, 20).Draw(t, "limit")) * s
		}
		w.jobs = append(w.jobs, j)
	}
	seen := map[[2]int]bool{}
	for range rapid.IntRange(0, 4).Draw(t, "nodeEvents") {
		at := rapid.IntRange(0, 30).Draw(t, "at")
		k := rapid.IntRange(0, nodes-1).Draw(t, "node")
		if seen[[2]int{at, k}] {
			continue
		}
		seen[[2]int{at, k}] = true
		w.opt.NodeEvents = append(w.opt.NodeEvents, sim.NodeEvent{
			At: time.Duration(at) * s, Node: w.cluster.Nodes[k].Name,
			State: rapid.SampledFrom([]topology.NodeState{topology.Ready, topology.Draining, topology.Down}).Draw(t, "state"),
		})
	}
	w.opt.CheckpointInterval = time.Duration(rapid.IntRange(0, 4).Draw(t, "checkpoint")) * s
	w.opt.RecordRuns = true
	w.opt.MaxPreemptions = 500
	w.cfg = scheduler.Config{
		Backfill:         rapid.SampledFrom([]scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative, scheduler.NoBackfill}).Draw(t, "backfill"),
		BackfillOrder:    rapid.SampledFrom([]scheduler.BackfillOrder{scheduler.ByPriority, scheduler.ShortestFirst}).Draw(t, "order"),
		IgnoreTimeLimits: rapid.IntRange(0, 3).Draw(t, "ignoreLimits") == 0,
	}
	if rapid.Bool().Draw(t, "tierOrder") {
		w.cfg.Order = scheduler.TierOrder{}
	}
	return w
}

// runWorld runs w. A policy that does not enforce time limits can preempt
// and requeue jobs without end (see Options.MaxPreemptions): such a world
// is skipped.
func runWorld(rt *rapid.T, w world) *sim.Result {
	res, err := sim.Run(w.cluster, w.jobs, w.cfg, w.opt)
	if err != nil && w.cfg.IgnoreTimeLimits && strings.Contains(err.Error(), "preemptions while no job arrived or finished") {
		rt.Skip("endless preemption, as documented for policies that ignore time limits")
	}
	if err != nil {
		rt.Fatalf("run: %v", err)
	}
	return res
}

// nodeStateAt returns the state of node after every node event at or
// before t (events of one instant in input order).
func nodeStateAt(evs []sim.NodeEvent, node string, t time.Duration) topology.NodeState {
	st, at := topology.Ready, time.Duration(math.MinInt64)
	for _, e := range evs {
		if e.Node == node && e.At <= t && e.At >= at {
			st, at = e.State, e.At
		}
	}
	return st
}

// keptWork is the work an attempt that ran for ran leaves to the next
// one, as the package documentation defines it.
func keptWork(kind scheduler.Kind, ran, interval time.Duration) time.Duration {
	if kind == scheduler.Inference {
		return ran
	}
	if interval <= 0 {
		return 0
	}
	return ran / interval * interval
}

// TestPropertyReplayLog replays random worlds with preemption, node
// failures, checkpoints and both kinds of job, and checks the recorded
// attempts of every job against the rules of the package documentation:
// attempts start after the submit time on nodes that are ready then,
// never overlap in time or on a GPU, stop at their time limit (plus the
// checkpoint grace) when limits are enforced, are cut at once by a
// node failure, and add up, with the work each eviction keeps, to the
// job's run time; and every job ends in exactly one outcome that its
// last attempt explains.
func TestPropertyReplayLog(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := drawWorld(rt)
		res := runWorld(rt, w)
		type hold struct {
			from, to time.Duration
			job      string
		}
		byGPU := map[string][]hold{}
		for i := range res.Jobs {
			r := &res.Jobs[i]
			j := w.jobs[i]
			if r.ID != j.ID || r.Team != j.Team || r.Submit != j.Submit {
				rt.Fatalf("result %d is %+v for job %+v", i, r, j)
			}
			if len(r.Runs) != r.Attempts {
				rt.Fatalf("job %s: %d attempts, %d recorded", r.ID, r.Attempts, len(r.Runs))
			}
			if r.Attempts > 0 && r.Start != r.Runs[0].Start {
				rt.Fatalf("job %s: start %s, first attempt %+v", r.ID, r.Start, r.Runs[0])
			}
			var kept time.Duration
			evictions, preemptions := 0, 0
			prevEnd := j.Submit
			for k, a := range r.Runs {
				last := k == len(r.Runs)-1
				if a.Start < prevEnd || a.Evicted < a.Start || a.End < a.Evicted {
					rt.Fatalf("job %s (submit %s) attempt %d out of order: %+v (previous ends %s)", r.ID, j.Submit, k, a, prevEnd)
				}
				prevEnd = a.End
				if got := a.Allocation.Count(); got != j.Members*j.GPUsPerMember {
					rt.Fatalf("job %s attempt %d holds %d GPUs, want %d", r.ID, k, got, j.Members*j.GPUsPerMember)
				}
				for _, ng := range a.Allocation {
					if st := nodeStateAt(w.opt.NodeEvents, ng.Node, a.Start); st != topology.Ready {
						rt.Fatalf("job %s attempt %d starts at %s on node %s, which is %s", r.ID, k, a.Start, ng.Node, st)
					}
					// A node that fails under a running attempt ends it at
					// that instant (completions of the instant come first).
					for _, e := range w.opt.NodeEvents {
						if e.Node == ng.Node && e.State == topology.Down && e.At > a.Start && e.At < a.Evicted {
							rt.Fatalf("job %s attempt %d %+v kept running on node %s, down at %s", r.ID, k, a, e.Node, e.At)
						}
					}
					for _, g := range ng.GPUs {
						key := fmt.Sprintf("%s/%d", ng.Node, g)
						byGPU[key] = append(byGPU[key], hold{a.Start, a.End, r.ID})
					}
				}
				ran := a.Evicted - a.Start
				if j.Limit > 0 && !w.cfg.IgnoreTimeLimits && ran > j.Limit {
					rt.Fatalf("job %s attempt %d ran %s past its limit %s", r.ID, k, ran, j.Limit)
				}
				switch a.Reason {
				case "":
					if !last || r.Outcome != sim.Completed || a.End != a.Evicted || kept+ran != j.Run {
						rt.Fatalf("job %s: completed attempt %d %+v after %s of kept work, run %s, outcome %s", r.ID, k, a, kept, j.Run, r.Outcome)
					}
				case scheduler.EvictTimeLimit:
					evictions++
					// Only a job with more work left than its limit is
					// killed: one whose work ends at the limit completes.
					if !last || r.Outcome != sim.Killed || w.cfg.IgnoreTimeLimits || ran != j.Limit || j.Run-kept <= j.Limit || a.End-a.Evicted != j.CheckpointGrace {
						rt.Fatalf("job %s: attempt %d %+v killed at limit %s (grace %s), outcome %s", r.ID, k, a, j.Limit, j.CheckpointGrace, r.Outcome)
					}
					if r.Run != min(kept+ran, j.Run) {
						rt.Fatalf("job %s killed: run %s, want %s", r.ID, r.Run, min(kept+ran, j.Run))
					}
				case scheduler.EvictPreempted, scheduler.EvictNodeDown:
					evictions++
					grace := j.CheckpointGrace
					if a.Reason == scheduler.EvictPreempted {
						preemptions++
					} else {
						grace = 0
						if !slices.ContainsFunc(a.Allocation, func(ng topology.NodeGPUs) bool {
							return nodeStateAt(w.opt.NodeEvents, ng.Node, a.Evicted) == topology.Down
						}) {
							rt.Fatalf("job %s attempt %d %+v evicted for node-down with no node down", r.ID, k, a)
						}
					}
					if a.End-a.Evicted != grace {
						rt.Fatalf("job %s attempt %d %+v: grace %s, want %s", r.ID, k, a, a.End-a.Evicted, grace)
					}
					kept = min(kept+keptWork(j.Kind, ran, w.opt.CheckpointInterval), j.Run)
					if last && r.Outcome != sim.Unfinished {
						rt.Fatalf("job %s: requeued after its last attempt, yet outcome %s", r.ID, r.Outcome)
					}
				default:
					rt.Fatalf("job %s attempt %d: reason %q", r.ID, k, a.Reason)
				}
			}
			if r.Evictions != evictions || r.Preemptions != preemptions {
				rt.Fatalf("job %s: %d evictions, %d preemptions; its attempts show %d, %d", r.ID, r.Evictions, r.Preemptions, evictions, preemptions)
			}
			switch r.Outcome {
			case sim.Unfinished:
			case sim.Completed, sim.Killed:
				if r.Attempts == 0 || r.Finish != r.Runs[r.Attempts-1].End {
					rt.Fatalf("job %s %s: finish %s, attempts %+v", r.ID, r.Outcome, r.Finish, r.Runs)
				}
				if r.Outcome == sim.Completed && r.Run != j.Run {
					rt.Fatalf("job %s completed: run %s, want %s", r.ID, r.Run, j.Run)
				}
				if r.Wait != r.Finish-r.Submit-r.Run || r.Wait < 0 {
					rt.Fatalf("job %s: wait %s, finish %s, submit %s, run %s", r.ID, r.Wait, r.Finish, r.Submit, r.Run)
				}
			default: // Step never drops a job: every eviction that does not requeue is at the time limit.
				rt.Fatalf("job %s: outcome %s", r.ID, r.Outcome)
			}
		}
		for k, hs := range byGPU {
			// A job placed and evicted with no grace at one instant holds
			// its GPUs for no time: [t, t) comes before [t, u).
			slices.SortFunc(hs, func(a, b hold) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
			for i := 1; i < len(hs); i++ {
				if hs[i].from < hs[i-1].to {
					rt.Fatalf("GPU %s held by %s [%s,%s) and %s [%s,%s)", k, hs[i-1].job, hs[i-1].from, hs[i-1].to, hs[i].job, hs[i].from, hs[i].to)
				}
			}
		}
		checkSummary(rt, w, res)
	})
}

// checkSummary recomputes the summary from the jobs' results and
// attempts, the straightforward way, and compares.
func checkSummary(rt *rapid.T, w world, res *sim.Result) {
	gpus := 0
	for _, n := range w.cluster.Nodes {
		gpus += n.GPUs
	}
	var want sim.Summary
	want.Jobs = len(w.jobs)
	first, last := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	var waits []time.Duration
	var sumWait, sumFlow time.Duration
	var sumB float64
	type team struct {
		jobs, done int
		held, bsld float64
		wait       time.Duration
	}
	teams := map[string]*team{}
	var held float64
	for i, r := range res.Jobs {
		j := w.jobs[i]
		first = min(first, r.Submit)
		tm := teams[j.Team]
		if tm == nil {
			tm = &team{}
			teams[j.Team] = tm
		}
		tm.jobs++
		for _, a := range r.Runs {
			g := float64(j.Members * j.GPUsPerMember)
			held += g * (a.End - a.Start).Seconds()
			tm.held += g * (a.End - a.Start).Seconds()
			switch a.Reason {
			case scheduler.EvictPreempted:
				want.Preemptions++
			case scheduler.EvictNodeDown:
				want.NodeDown++
			}
		}
		switch r.Outcome {
		case sim.Unfinished:
			want.Unfinished++
			continue
		case sim.Completed:
			want.Completed++
		case sim.Killed:
			want.KilledAtLimit++
		case sim.Dropped:
			want.Dropped++
		}
		want.Finished++
		last = max(last, r.Finish)
		waits = append(waits, r.Wait)
		sumWait += r.Wait
		sumFlow += r.Finish - r.Submit
		b := max(1, float64(r.Wait+r.Run)/float64(max(r.Run, 10*s)))
		sumB += b
		want.MaxBoundedSlowdown = max(want.MaxBoundedSlowdown, b)
		tm.done++
		tm.wait += r.Wait
		tm.bsld += b
	}
	var inSpan float64
	if want.Finished > 0 {
		n := want.Finished
		want.MeanWait = sumWait / time.Duration(n)
		want.MeanFlowTime = sumFlow / time.Duration(n)
		want.MeanBoundedSlowdown = sumB / float64(n)
		slices.Sort(waits)
		want.MaxWait = waits[n-1]
		want.P95Wait = waits[int(math.Ceil(0.95*float64(n)))-1]
		if n%2 == 1 {
			want.MedianWait = waits[n/2]
		} else {
			want.MedianWait = (waits[n/2-1] + waits[n/2]) / 2
		}
		want.Makespan = last - first
		for i, r := range res.Jobs {
			j := w.jobs[i]
			for _, a := range r.Runs {
				if e := min(a.End, last); e > a.Start {
					inSpan += float64(j.Members*j.GPUsPerMember) * (e - a.Start).Seconds()
				}
			}
		}
		if want.Makespan > 0 {
			want.Utilization = inSpan / (float64(gpus) * want.Makespan.Seconds())
		}
	}
	got := res.Summary
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"jobs", got.Jobs, want.Jobs}, {"finished", got.Finished, want.Finished}, {"unfinished", got.Unfinished, want.Unfinished},
		{"completed", got.Completed, want.Completed}, {"killed", got.KilledAtLimit, want.KilledAtLimit}, {"dropped", got.Dropped, want.Dropped},
		{"preemptions", got.Preemptions, want.Preemptions}, {"nodeDown", got.NodeDown, want.NodeDown},
		{"makespan", got.Makespan, want.Makespan}, {"meanWait", got.MeanWait, want.MeanWait}, {"medianWait", got.MedianWait, want.MedianWait},
		{"p95Wait", got.P95Wait, want.P95Wait}, {"maxWait", got.MaxWait, want.MaxWait}, {"meanFlow", got.MeanFlowTime, want.MeanFlowTime},
	} {
		if c.got != c.want {
			rt.Fatalf("summary %s = %v, recomputed %v", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"utilization", got.Utilization, want.Utilization}, {"gpuHours", got.GPUHours, held / 3600},
		{"meanBoundedSlowdown", got.MeanBoundedSlowdown, want.MeanBoundedSlowdown},
		{"maxBoundedSlowdown", got.MaxBoundedSlowdown, want.MaxBoundedSlowdown},
	} {
		if !near(c.got, c.want) {
			rt.Fatalf("summary %s = %v, recomputed %v", c.name, c.got, c.want)
		}
	}
	if got.Utilization > 1 {
		rt.Fatalf("utilization %v above 1", got.Utilization)
	}
	names := make([]string, 0, len(teams))
	for name := range teams {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(got.Teams) != len(names) || !reflect.DeepEqual(res.Teams, names) {
		rt.Fatalf("teams %+v (series %v), want %v", got.Teams, res.Teams, names)
	}
	var sx, sxx float64
	for k, name := range names {
		tm, ts := teams[name], got.Teams[k]
		if ts.Team != name || ts.Jobs != tm.jobs || !near(ts.GPUHours, tm.held/3600) {
			rt.Fatalf("team %q: %+v, recomputed jobs %d, GPU-hours %v", name, ts, tm.jobs, tm.held/3600)
		}
		if held > 0 && !near(ts.Share, tm.held/held) {
			rt.Fatalf("team %q: share %v, recomputed %v", name, ts.Share, tm.held/held)
		}
		if tm.done > 0 && (ts.MeanWait != tm.wait/time.Duration(tm.done) || !near(ts.MeanBoundedSlowdown, tm.bsld/float64(tm.done))) {
			rt.Fatalf("team %q: %+v, recomputed mean wait %s, bsld %v", name, ts, tm.wait/time.Duration(tm.done), tm.bsld/float64(tm.done))
		}
		x := tm.held / 3600 // no Options.Teams: every weight is 1
		sx += x
		sxx += x * x
	}
	jain := 0.0
	if sxx > 0 {
		jain = sx * sx / (float64(len(names)) * sxx)
	}
	if !near(got.Jain, jain) {
		rt.Fatalf("jain %v, recomputed %v", got.Jain, jain)
	}
}
