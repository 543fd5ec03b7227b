package host

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// Host is the state a host keeps between Steps.
type Host struct {
	// Cluster is the cluster every snapshot carries.
	Cluster topology.Cluster
	// Teams are the fair-share teams every snapshot carries; New leaves
	// them empty.
	Teams []scheduler.Team
	// Jobs are the jobs the host knows now: pending, running, evicting.
	Jobs []scheduler.Job
	// Actual is how long each job really runs (jobs not listed run until
	// their time limit, or forever without one).
	Actual map[string]time.Duration
	// Arrive are future submissions, by Submitted.
	Arrive []scheduler.Job
	// Plan is the reservations of the last decision applied, which the
	// next snapshot carries as its plan, so that promises hold across
	// Steps.
	Plan    []scheduler.Reservation
	requeue map[string]bool
	grace   map[string]time.Duration // of each eviction applied
}

// New returns a host with the given cluster and jobs, all of them known
// from the start whatever their Submitted time; put future submissions in
// Arrive instead, where they wait until Advance reaches their time.
func New(c topology.Cluster, jobs ...scheduler.Job) *Host {
	return &Host{Cluster: c, Jobs: jobs, Actual: map[string]time.Duration{}, requeue: map[string]bool{}, grace: map[string]time.Duration{}}
}

// Job returns the job with the given ID, or nil.
func (h *Host) Job(id string) *scheduler.Job {
	for i := range h.Jobs {
		if h.Jobs[i].ID == id {
			return &h.Jobs[i]
		}
	}
	return nil
}

// Snapshot returns the snapshot at now. The snapshot shares nothing with
// the host that Step could change (Step changes nothing anyway).
func (h *Host) Snapshot(now time.Time) *scheduler.Snapshot {
	return &scheduler.Snapshot{Now: now, Cluster: h.Cluster, Teams: h.Teams, Jobs: slices.Clone(h.Jobs), Plan: slices.Clone(h.Plan)}
}

// Advance brings the host to now: running jobs whose real run has ended
// leave, evicting jobs whose grace is over (or that have no eviction
// time) are gone or back in the queue when their eviction said requeue
// (one that came evicting to New is gone), and jobs submitted by now
// arrive. An evicting job is stopping: it holds its GPUs until its grace
// is over even if its real run would have ended sooner. The grace is the
// one of the eviction Apply carried out (none for node-down), else the
// job's checkpoint grace. It returns what happened, as text.
func (h *Host) Advance(now time.Time) []string {
	var events []string
	kept := h.Jobs[:0]
	for _, j := range h.Jobs {
		run, known := h.Actual[j.ID]
		switch {
		case j.State == scheduler.Running && known && !j.Started.Add(run).After(now):
			events = append(events, fmt.Sprintf("%s finished at %s", j.ID, j.Started.Add(run).Format("15:04")))
			continue
		case j.State == scheduler.Evicting && (j.EvictedAt.IsZero() || !h.gone(j).After(now)):
			requeue := h.requeue[j.ID]
			delete(h.grace, j.ID)
			delete(h.requeue, j.ID) // a later eviction says its own
			if !requeue {
				events = append(events, fmt.Sprintf("%s is gone (killed)", j.ID))
				continue
			}
			events = append(events, fmt.Sprintf("%s is gone and requeued", j.ID))
			j.State, j.Allocation, j.Started, j.EvictedAt = scheduler.Pending, nil, time.Time{}, time.Time{}
		}
		kept = append(kept, j)
	}
	h.Jobs = kept
	slices.SortStableFunc(h.Arrive, func(a, b scheduler.Job) int { return a.Submitted.Compare(b.Submitted) })
	for len(h.Arrive) > 0 && !h.Arrive[0].Submitted.After(now) {
		events = append(events, fmt.Sprintf("%s submitted", h.Arrive[0].ID))
		h.Jobs = append(h.Jobs, h.Arrive[0])
		h.Arrive = h.Arrive[1:]
	}
	return events
}

// Apply carries out a decision made at now: placed jobs run from now on
// their allocation, evicted jobs start their grace period, and its
// reservations become the plan of the next snapshot.
func (h *Host) Apply(now time.Time, d *scheduler.Decision) {
	h.Plan = slices.Clone(d.Reservations)
	for _, p := range d.Placements {
		if j := h.Job(p.Job); j != nil {
			j.State, j.Started, j.Allocation = scheduler.Running, now, p.Allocation.Clone()
		}
	}
	for _, e := range d.Evictions {
		if j := h.Job(e.Job); j != nil {
			j.State, j.EvictedAt = scheduler.Evicting, now
			h.requeue[e.Job] = e.Requeue
			h.grace[e.Job] = e.Grace
		}
	}
}

// gone is when evicting job j is gone: at its eviction time plus the
// grace of the eviction Apply carried out, or its checkpoint grace when
// the eviction came with the job.
func (h *Host) gone(j scheduler.Job) time.Time {
	if g, ok := h.grace[j.ID]; ok {
		return j.EvictedAt.Add(g)
	}
	return j.EvictedAt.Add(j.CheckpointGrace)
}

// Next returns the first moment after now at which something happens
// without a new decision: a real run ends, a time limit passes, an
// eviction's grace ends, a job arrives, a reservation starts or the
// decision's NextWake comes; or
// now+limit when nothing does. It returns now itself when an evicting
// job is gone already (an eviction without grace, for a down node):
// Advance(now) then drops it.
func (h *Host) Next(now time.Time, d *scheduler.Decision, limit time.Duration) time.Time {
	at := now.Add(limit)
	soonest := func(t time.Time) {
		if t.After(now) && t.Before(at) {
			at = t
		}
	}
	for _, j := range h.Jobs {
		switch j.State {
		case scheduler.Evicting:
			if j.EvictedAt.IsZero() || !h.gone(j).After(now) {
				return now
			}
			soonest(h.gone(j))
		case scheduler.Running:
			if run, ok := h.Actual[j.ID]; ok {
				soonest(j.Started.Add(run))
			}
			if j.TimeLimit > 0 {
				soonest(j.Started.Add(j.TimeLimit))
			}
		}
	}
	for _, j := range h.Arrive {
		soonest(j.Submitted)
	}
	if d != nil {
		for _, r := range d.Reservations {
			soonest(r.Start)
		}
		// What the decision says is due besides: a minimum runtime
		// passed, a run from now reaching a reservation, ...
		soonest(d.NextWake)
	}
	return at
}

// Duration formats d as a Go duration string without trailing zero units
// ("2h", "1h30m", "5m", "90s" as "1m30s", zero as "0s"): only a "0s" after
// minutes and then a "0m" after hours are dropped, never digits of a
// larger unit. The result parses back to d.
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-len("0s")]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-len("0m")]
	}
	return s
}

// Compact formats an allocation with runs of whole 8-GPU nodes named
// nNN merged: "n00-n07 n12[0-3]". An entry counts as a whole node when
// it holds GPUs 0 to 7 exactly (the examples' nodes have 8).
func Compact(a topology.Allocation) string {
	a = a.Canonical()
	whole := func(e topology.NodeGPUs) bool { return slices.Equal(e.GPUs, []int{0, 1, 2, 3, 4, 5, 6, 7}) }
	var parts []string
	for i := 0; i < len(a); {
		if !whole(a[i]) {
			parts = append(parts, topology.Allocation{a[i]}.String())
			i++
			continue
		}
		j := i
		for j+1 < len(a) && whole(a[j+1]) && nextNode(a[j].Node) == a[j+1].Node {
			j++
		}
		if j == i {
			parts = append(parts, a[i].Node)
		} else {
			parts = append(parts, a[i].Node+"-"+a[j].Node)
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

// nextNode returns the name of the node after n ("n07" -> "n08").
func nextNode(n string) string {
	var i int
	if _, err := fmt.Sscanf(n, "n%02d", &i); err != nil {
		return ""
	}
	return fmt.Sprintf("n%02d", i+1)
}
