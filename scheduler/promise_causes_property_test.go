package scheduler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// TestPromiseCausesNamed is the other half of DESIGN invariant 9: in a
// world where things do go wrong (jobs end early, jobs of any tier arrive,
// nodes go down and come back), a promised start may move later, but the
// decision that moves it says why: a reservation later than the job's
// promise carries a message, and so does a job left waiting without one
// ("its promised start ... no longer holds: <cause>"). A job never starts
// later than it was promised without such a decision in between.
func TestPromiseCausesNamed(t *testing.T) {
	for _, mode := range []scheduler.BackfillMode{scheduler.Conservative, scheduler.EASY} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { promiseCausesNamed(t, mode) })
		})
	}
}

func promiseCausesNamed(t *rapid.T, mode scheduler.BackfillMode) {
	var c topology.Cluster
	g := rapid.SampledFrom([]int{1, 2, 4}).Draw(t, "gpus")
	for i := range rapid.IntRange(2, 5).Draw(t, "nodes") {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: g})
	}
	now := gen.Now
	tiers := []scheduler.Tier{scheduler.P0, scheduler.P1, scheduler.P2, scheduler.P3}
	job := func(i int, at time.Time) scheduler.Job {
		return scheduler.Job{ID: fmt.Sprintf("j%02d", i), Team: "t", Tier: rapid.SampledFrom(tiers[1:]).Draw(t, "tier"),
			Members: rapid.IntRange(1, 2).Draw(t, "members"), GPUsPerMember: rapid.IntRange(1, g).Draw(t, "gpm"),
			TimeLimit: time.Duration(rapid.IntRange(1, 24).Draw(t, "limit")) * 10 * time.Minute, Submitted: at}
	}
	h := host.New(c)
	n := rapid.IntRange(2, 10).Draw(t, "jobs")
	for i := range n {
		h.Jobs = append(h.Jobs, job(i, now.Add(time.Duration(i)*time.Second)))
	}
	for i := range rapid.IntRange(0, 4).Draw(t, "arrivals") {
		j := job(n+i, now.Add(time.Duration(rapid.IntRange(1, 30).Draw(t, "arrive"))*10*time.Minute))
		j.Tier = rapid.SampledFrom(tiers).Draw(t, "arrivalTier")
		h.Arrive = append(h.Arrive, j)
	}
	for _, j := range append(h.Jobs, h.Arrive...) {
		h.Actual[j.ID] = time.Duration(rapid.IntRange(1, int(j.TimeLimit/time.Minute)).Draw(t, "run")) * time.Minute
	}
	s := scheduler.New(scheduler.Config{Backfill: mode})
	promised := promiseBook{}
	for range 200 {
		if rapid.IntRange(0, 3).Draw(t, "fail") == 0 {
			k := rapid.IntRange(0, len(h.Cluster.Nodes)-1).Draw(t, "node")
			nodes := append([]topology.Node(nil), h.Cluster.Nodes...)
			nodes[k].State = rapid.SampledFrom([]topology.NodeState{topology.Ready, topology.Down, topology.Draining}).Draw(t, "state")
			h.Cluster.Nodes = nodes
		}
		d, err := s.Step(h.Snapshot(now))
		if err != nil {
			t.Fatalf("at %v: %v", now, err)
		}
		promised.check(t, now, d, func(msg string) bool { return strings.Contains(msg, "no longer holds: ") })
		h.Apply(now, d)
		next := h.Next(now, d, 48*time.Hour)
		if !next.After(now) && len(h.Jobs) == 0 && len(h.Arrive) == 0 {
			return
		}
		now = next
		h.Advance(now)
		if len(h.Jobs) == 0 && len(h.Arrive) == 0 {
			return
		}
	}
}

// promiseBook follows the promises of a host loop's decisions: the start
// each job was last promised.
type promiseBook map[string]time.Time

// check checks decision d, made at now, against the promises before it
// and records its own: no job starts later than it was promised, and a
// job's start moves later, or a promised job waits without a
// reservation, only with a message that explained accepts (nil: never).
func (b promiseBook) check(t *rapid.T, now time.Time, d *scheduler.Decision, explained func(msg string) bool) {
	ok := func(msg string) bool { return explained != nil && explained(msg) }
	for _, p := range d.Placements {
		if at, found := b[p.Job]; found && now.After(at) {
			t.Fatalf("%s started at %v, promised %v, and no decision said why", p.Job, now, at)
		}
		delete(b, p.Job)
	}
	for _, r := range d.Reservations {
		if at, found := b[r.Job]; found && r.Start.After(at) && !ok(r.Message) {
			t.Fatalf("at %v: %s's start moved from %v to %v, and its reservation says %q", now, r.Job, at, r.Start, r.Message)
		}
		b[r.Job] = r.Start
	}
	for _, w := range d.Pending {
		if at, found := b[w.Job]; found && !ok(w.Message) {
			t.Fatalf("at %v: %s, promised %v, waits without a reservation: %s", now, w.Job, at, w.Message)
		}
		delete(b, w.Job)
	}
	for _, e := range d.Evictions {
		delete(b, e.Job) // running: no promise
	}
}
