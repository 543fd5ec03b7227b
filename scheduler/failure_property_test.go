package scheduler_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// failureWorld draws a snapshot of gen.Snapshot with the edge cases of
// failures and ends of jobs made common: running jobs exactly at their
// limit, running jobs the host gives no start, evicting jobs with and
// without an eviction time, some after now; and a policy of modes, with time limits
// enforced or ignored.
func failureWorld(t *rapid.T) (*scheduler.Snapshot, scheduler.Config) {
	s := gen.Snapshot(t)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.State == scheduler.Evicting && rapid.IntRange(0, 3).Draw(t, "evictedLater") == 0 {
			// Told to stop after now, as a host whose clocks disagree may say.
			j.EvictedAt = s.Now.Add(time.Duration(rapid.IntRange(1, 20).Draw(t, "evictedIn")) * time.Minute)
		}
		if j.State != scheduler.Running {
			continue
		}
		switch rapid.IntRange(0, 5).Draw(t, "edge") {
		case 0: // exactly at its limit
			j.TimeLimit = s.Now.Sub(j.Started)
			j.Kind = scheduler.Training
		case 1: // one nanosecond short of it
			j.TimeLimit = s.Now.Sub(j.Started) + 1
			j.Kind = scheduler.Training
		case 2: // the host did not say when it started
			j.Started = time.Time{}
		}
	}
	cfg := rapid.SampledFrom(modes).Draw(t, "mode").cfg
	cfg.IgnoreTimeLimits = rapid.IntRange(0, 3).Draw(t, "ignoreLimits") == 0
	return s, cfg
}

// onDown reports whether j holds GPUs on a down node of s.
func onDown(s *scheduler.Snapshot, j *scheduler.Job) bool {
	return slices.ContainsFunc(j.Allocation, func(a topology.NodeGPUs) bool {
		i := slices.IndexFunc(s.Cluster.Nodes, func(n topology.Node) bool { return n.Name == a.Node })
		return s.Cluster.Nodes[i].State == topology.Down
	})
}

// pastLimit reports whether running job j has reached its time limit at
// now: it has a limit, a start, and started + limit is not after now.
func pastLimit(now time.Time, j *scheduler.Job) bool {
	return j.TimeLimit > 0 && !j.Started.IsZero() && !j.Started.Add(j.TimeLimit).After(now)
}

// checkFailureEvictions: every running job on a down node is evicted
// node-down, requeued, with no grace; every other running job past its
// limit is evicted time-limit, not requeued, with its checkpoint grace,
// unless limits are ignored; no job is evicted node-down or time-limit
// otherwise, and no job being evicted already is evicted again.
func checkFailureEvictions(w *world) error {
	want := map[string]scheduler.Eviction{}
	for i := range w.s.Jobs {
		j := &w.s.Jobs[i]
		if j.State != scheduler.Running {
			continue
		}
		switch {
		case onDown(w.s, j):
			want[j.ID] = scheduler.Eviction{Job: j.ID, Reason: scheduler.EvictNodeDown, Requeue: true}
		case pastLimit(w.s.Now, j) && !w.cfg.IgnoreTimeLimits:
			want[j.ID] = scheduler.Eviction{Job: j.ID, Reason: scheduler.EvictTimeLimit, Grace: j.CheckpointGrace}
		}
	}
	for _, e := range w.d.Evictions {
		j := w.jobs[e.Job]
		if j == nil || j.State != scheduler.Running {
			return fmt.Errorf("eviction of %q, which is not a running job", e.Job)
		}
		if e.Reason == scheduler.EvictPreempted {
			if _, ok := want[e.Job]; ok {
				return fmt.Errorf("job %s preempted, want %+v", e.Job, want[e.Job])
			}
			continue
		}
		if want[e.Job] != e {
			return fmt.Errorf("eviction %+v, want %+v", e, want[e.Job])
		}
		delete(want, e.Job)
	}
	for _, e := range want {
		return fmt.Errorf("job %s not evicted, want %+v", e.Job, e)
	}
	return nil
}

// checkFailureUsable: placements and reservations use only healthy GPUs
// of ready nodes; a placement no GPU that a running or evicting job
// holds; a reservation a held GPU only from its release on.
func checkFailureUsable(w *world) error {
	holder := map[string]*scheduler.Job{}
	for i := range w.s.Jobs {
		j := &w.s.Jobs[i]
		for k := range gpuKeys(j.Allocation) {
			holder[k] = j
		}
	}
	check := func(what, job string, from time.Time, a topology.Allocation) error {
		for _, ng := range a {
			n := w.nodes[ng.Node]
			if n == nil || n.State != topology.Ready {
				return fmt.Errorf("%s %s on node %q that is not ready", what, job, ng.Node)
			}
			for _, g := range ng.GPUs {
				if slices.Contains(n.Unhealthy, g) {
					return fmt.Errorf("%s %s on unhealthy GPU %s/%d", what, job, n.Name, g)
				}
				h := holder[fmt.Sprintf("%s/%d", n.Name, g)]
				if h == nil {
					continue
				}
				if what == "placement" {
					return fmt.Errorf("placement %s on GPU %s/%d held by %s job %s", job, n.Name, g, h.State, h.ID)
				}
				if rel := w.heldEnd(h); from.Before(rel) {
					return fmt.Errorf("reservation %s at %s on GPU %s/%d that %s job %s releases at %s",
						job, from.Format(time.RFC3339Nano), n.Name, g, h.State, h.ID, rel.Format(time.RFC3339Nano))
				}
			}
		}
		return nil
	}
	for _, p := range w.d.Placements {
		if err := check("placement", p.Job, w.s.Now, p.Allocation); err != nil {
			return err
		}
	}
	for _, r := range w.d.Reservations {
		if err := check("reservation", r.Job, r.Start, r.Allocation); err != nil {
			return err
		}
	}
	return nil
}

// TestFailureEvictionsExact: over random node states, unhealthy GPUs and
// held jobs (some exactly at their limit, some without a start, evicting
// ones with and without an eviction time), with limits enforced or
// ignored, Step evicts node-down exactly the running jobs on down nodes
// and time-limit exactly the others that reached their limit.
func TestFailureEvictionsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, cfg := failureWorld(t)
		d := step(t, cfg, s)
		if err := checkFailureEvictions(newWorld(s, d, cfg)); err != nil {
			t.Fatalf("%v\n%s", err, dump(s, d))
		}
	})
}

// TestFailurePlacementsAvoidFailures: on the same worlds, no placement or
// reservation touches a draining or down node or an unhealthy GPU, no
// placement a GPU held by a running or evicting job, and no reservation
// a held GPU before the release the Step was told of.
func TestFailurePlacementsAvoidFailures(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, cfg := failureWorld(t)
		d := step(t, cfg, s)
		if err := checkFailureUsable(newWorld(s, d, cfg)); err != nil {
			t.Fatalf("%v\n%s", err, dump(s, d))
		}
	})
}

// failureSteps is the world of TestFailureOverSteps: a small cluster,
// its running and evicting jobs (gen.Running, every one of them ending
// by itself), and a queue of jobs that fit it (on one GPU type) once
// every node is ready and every GPU healthy, each running for its limit, shorter or longer
// (then it is stopped at the limit).
func failureSteps(t *rapid.T) (*host.Host, scheduler.Config) {
	c := gen.SmallCluster(t)
	jobs := gen.Running(t, c)
	most := 0
	for _, n := range c.Nodes {
		most = max(most, n.GPUs)
	}
	for i := range rapid.IntRange(1, 12).Draw(t, "queue") {
		g := rapid.IntRange(1, most).Draw(t, "g")
		// Members of g GPUs the healed cluster holds on one GPU type,
		// where a job that names no type runs.
		perType := map[string]int{}
		fit := 0
		for _, n := range c.Nodes {
			perType[n.GPUType] += n.GPUs / g
			fit = max(fit, perType[n.GPUType])
		}
		j := scheduler.Job{ID: fmt.Sprintf("q%02d", i), Team: rapid.SampledFrom(gen.Teams).Draw(t, "team"),
			Tier: scheduler.TierN(rapid.IntRange(0, 3).Draw(t, "tier")), Members: rapid.IntRange(1, max(1, min(3, fit))).Draw(t, "members"),
			GPUsPerMember: g, Submitted: gen.Now.Add(-time.Duration(rapid.IntRange(0, 60).Draw(t, "age")) * time.Minute),
			TimeLimit:       time.Duration(rapid.IntRange(1, 8).Draw(t, "limit")) * 30 * time.Minute,
			CheckpointGrace: time.Duration(rapid.IntRange(0, 3).Draw(t, "grace")) * 5 * time.Minute}
		jobs = append(jobs, j)
	}
	h := host.New(c, jobs...)
	for _, j := range jobs {
		limit := j.TimeLimit
		if limit == 0 {
			limit = 4 * time.Hour
		}
		// Some end early, some would run past their limit.
		h.Actual[j.ID] = time.Duration(rapid.Int64Range(int64(time.Minute), int64(limit+time.Hour)).Draw(t, "actual")).Truncate(time.Minute)
	}
	cfg := rapid.SampledFrom(modes).Draw(t, "mode").cfg
	cfg.Order = rapid.SampledFrom([]scheduler.Orderer{nil, scheduler.TierOrder{}}).Draw(t, "order")
	cfg.IgnoreTimeLimits = rapid.IntRange(0, 3).Draw(t, "ignoreLimits") == 0
	return h, cfg
}

// TestFailureOverSteps drives Step with the host applying its decisions
// while nodes go down, drain and come back and GPUs turn unhealthy
// (during the first failSteps Steps, after which every node is ready and
// every GPU healthy again), with no new arrivals. At every Step the
// single-Step checks hold (no GPU allocated twice, no job lost, eviction
// rules, placements and reservations clear of failures and of held GPUs
// until their release). Across Steps: no job is lost or duplicated; a
// job evicted at its time limit never returns; a requeued job returns as
// pending exactly once per eviction; and the queue drains: every job is
// gone within maxSteps Steps after the failures stop.
func TestFailureOverSteps(t *testing.T) {
	const failSteps, maxSteps = 6, 120
	var faults, requeues, killed, longest int
	rapid.Check(t, func(t *rapid.T) {
		h, cfg := failureSteps(t)
		all := map[string]bool{}
		for _, j := range h.Jobs {
			all[j.ID] = true
		}
		done := map[string]string{} // job -> how it left
		owed := map[string]int{}    // job -> requeues not yet seen back
		var hist history
		now := gen.Now
		step := 0
		defer func() { longest = max(longest, step-failSteps) }()
		for ; len(h.Jobs) > 0; step++ {
			if step >= failSteps+maxSteps {
				t.Fatalf("queue not drained %d Steps after the failures stopped: %d jobs left%s", maxSteps, len(h.Jobs), hist)
			}
			if step < failSteps {
				faults += injectFaults(t, &h.Cluster)
			} else if step == failSteps {
				for i := range h.Cluster.Nodes {
					h.Cluster.Nodes[i].State, h.Cluster.Nodes[i].Unhealthy = topology.Ready, nil
				}
			}
			s := h.Snapshot(now)
			s.Cluster = gen.Clone(s).Cluster // the history keeps it
			d, err := scheduler.New(cfg).Step(s)
			if err != nil {
				t.Fatalf("step %d: %v%s", step, err, hist)
			}
			hist = append(hist, stepRecord{s, d})
			if len(hist) > 4 {
				hist = hist[1:]
			}
			w := newWorld(s, d, cfg)
			if err := checkAll(w, checkNoDoubleAllocation, checkNoJobLost, checkFailureEvictions, checkFailureUsable); err != nil {
				t.Fatalf("step %d: %v%s", step, err, hist)
			}
			for _, e := range d.Evictions {
				if e.Requeue {
					owed[e.Job]++
					requeues++
				} else {
					killed++
				}
			}
			h.Apply(now, d)
			before := map[string]scheduler.JobState{}
			for _, j := range h.Jobs {
				before[j.ID] = j.State
			}
			now = h.Next(now, d, time.Hour)
			h.Advance(now)
			seen := map[string]bool{}
			for _, j := range h.Jobs {
				if seen[j.ID] {
					t.Fatalf("step %d: job %s twice in the host%s", step, j.ID, hist)
				}
				seen[j.ID] = true
				if how, ok := done[j.ID]; ok {
					t.Fatalf("step %d: job %s is back after it %s%s", step, j.ID, how, hist)
				}
				if j.State == scheduler.Pending && before[j.ID] == scheduler.Evicting {
					if owed[j.ID]--; owed[j.ID] < 0 {
						t.Fatalf("step %d: job %s requeued more often than evicted with requeue%s", step, j.ID, hist)
					}
				}
			}
			for id := range all {
				if seen[id] || done[id] != "" {
					continue
				}
				switch before[id] {
				case scheduler.Running:
					done[id] = "finished"
				case scheduler.Evicting:
					if owed[id] > 0 {
						t.Fatalf("step %d: job %s evicted with requeue is gone without returning%s", step, id, hist)
					}
					done[id] = "was stopped at its limit"
				default:
					t.Fatalf("step %d: %s job %s vanished%s", step, before[id], id, hist)
				}
			}
		}
		for id, n := range owed {
			if n != 0 {
				t.Fatalf("job %s: %d requeues never came back", id, n)
			}
		}
	})
	if faults == 0 || requeues == 0 || killed == 0 {
		t.Fatalf("the worlds were too tame: %d faults, %d requeues, %d time-limit evictions", faults, requeues, killed)
	}
	t.Logf("%d faults, %d requeued evictions, %d time-limit evictions; drained at most %d Steps after the failures stopped", faults, requeues, killed, longest)
}

// injectFaults changes the state of a few nodes of c (down, draining,
// back to ready) and marks a few GPUs unhealthy; it returns how many
// changes it made.
func injectFaults(t *rapid.T, c *topology.Cluster) int {
	n := 0
	for range rapid.IntRange(0, 2).Draw(t, "faults") {
		nd := &c.Nodes[rapid.IntRange(0, len(c.Nodes)-1).Draw(t, "faultNode")]
		switch rapid.IntRange(0, 3).Draw(t, "fault") {
		case 0:
			nd.State = topology.Down
		case 1:
			nd.State = topology.Draining
		case 2:
			nd.State = topology.Ready
		case 3:
			g := rapid.IntRange(0, nd.GPUs-1).Draw(t, "sickGPU")
			if !slices.Contains(nd.Unhealthy, g) {
				nd.Unhealthy = append(slices.Clone(nd.Unhealthy), g)
			}
		}
		n++
	}
	return n
}
