package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/adapter"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
	v1 "k8s.io/api/core/v1"
)

func TestTranslate(t *testing.T) {
	g0, g1, g2 := pod("g-0", 4, "g", 3), pod("g-1", 4, "g", 3), pod("g-2", 4, "g", 3)
	x, r, w, bad := pod("x", 8, "", 0), pod("r", 8, "", 0), pod("w", 8, "", 0), pod("bad", 1, "", 0)
	res := &adapter.Result{Jobs: map[string]*adapter.JobPods{
		"ns/gang:g": {Pods: []*v1.Pod{g0, g1, g2}, GPUsPerMember: 4, Gang: "ns/g"},
		"ns/x":      {Pods: []*v1.Pod{x}, GPUsPerMember: 8},
		"ns/r":      {Pods: []*v1.Pod{r}, GPUsPerMember: 8, Gang: "ns/h", BoundMembers: 2},
		"ns/w":      {Pods: []*v1.Pod{w}, GPUsPerMember: 8},
	}, Problems: []adapter.Problem{{Pod: bad, Reason: adapter.ReasonBadGangLabel, Message: "label broken"}}}
	d := &scheduler.Decision{
		Placements: []scheduler.Placement{{Job: "ns/gang:g", Allocation: topology.Allocation{
			{Node: "a", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Node: "b", GPUs: []int{4, 5, 6, 7}}}}},
		Evictions: []scheduler.Eviction{{Job: "ns/x", Reason: scheduler.EvictPreempted, By: "ns/gang:g", Grace: time.Minute}},
		Reservations: []scheduler.Reservation{{Job: "ns/r", Start: t0.Add(time.Hour), Allocation: topology.Allocation{{Node: "c", GPUs: []int{0}}},
			Message: `its promised start 2026-12-02T00:30:00Z no longer holds: node "d" is down`}},
		Pending: []scheduler.Wait{{Job: "ns/w", Reason: scheduler.ReasonInsufficientGPUs, Message: "needs 1×8 GPUs, 4 free"}},
	}
	a, err := Translate(res, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Binds) != 3 || a.Binds[0].Node != "a" || a.Binds[1].Node != "a" || a.Binds[2].Node != "b" || a.Binds[2].Pod != g2 {
		t.Errorf("binds %+v, want g-0 and g-1 on a, g-2 on b", a.Binds)
	}
	if len(a.Evicts) != 1 || a.Evicts[0].Pod != x || a.Evicts[0].Grace != time.Minute || a.Evicts[0].By != "ns/gang:g" {
		t.Errorf("evicts %+v", a.Evicts)
	}
	want := map[*v1.Pod]string{
		r: "gang ns/h: 2 members bound, these 1 wait: reserved: starts by 2026-12-02T01:00:00Z on 1 nodes; " +
			`its promised start 2026-12-02T00:30:00Z no longer holds: node "d" is down`,
		w:   "insufficient-gpus: needs 1×8 GPUs, 4 free",
		bad: "label broken",
	}
	if len(a.Statuses) != 3 {
		t.Fatalf("%d statuses", len(a.Statuses))
	}
	for _, s := range a.Statuses {
		if s.Message != want[s.Pod] {
			t.Errorf("%s: %q, want %q", s.Pod.Name, s.Message, want[s.Pod])
		}
		if (s.Pod == bad) != (s.Reason == adapter.ReasonBadGangLabel && s.Warning) {
			t.Errorf("%s: reason %s warning %v", s.Pod.Name, s.Reason, s.Warning)
		}
	}
	// A placement that does not split into whole members is an error, not
	// a wrong binding.
	d.Placements[0].Allocation[1].GPUs = []int{4, 5}
	if _, err := Translate(res, d); err == nil || !strings.Contains(err.Error(), "not a whole number of members") {
		t.Errorf("err %v", err)
	}
}
