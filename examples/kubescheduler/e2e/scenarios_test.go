package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/controller"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func bound(pods []v1.Pod, prefix string) (n int, nodes map[string]int) {
	nodes = map[string]int{}
	for _, p := range pods {
		if strings.HasPrefix(p.Name, prefix) && p.Spec.NodeName != "" {
			n++
			nodes[p.Spec.NodeName]++
		}
	}
	return n, nodes
}

// A 96-GPU gang on a 96-GPU cluster waits whole while job A holds 8
// GPUs, and starts, all twelve members at once, when A ends.
func TestGangWaitsWholeAndStartsWhenAEnds(t *testing.T) {
	e := newEnv(t)
	e.mkNodes("n", 12, uniform(8))
	s := e.start("", controller.Options{})
	e.create(gpuPod("team-a", "a", 8, timeLimit(time.Hour)))
	e.waitFor("A bound", 30*time.Second, func() bool { return e.pod("team-a", "a").Spec.NodeName != "" })

	var members []*v1.Pod
	for i := range 12 {
		members = append(members, gpuPod("team-b", fmt.Sprintf("c-%02d", i), 8, gang("c", 12), timeLimit(24*time.Hour)))
	}
	e.create(members...)
	e.waitFor("C's members told why they wait", 30*time.Second, func() bool {
		for _, p := range e.pods("team-b") {
			if c := condition(&p); c == nil || c.Status != v1.ConditionFalse {
				return false
			}
		}
		return true
	})
	if n, _ := bound(e.pods("team-b"), "c-"); n != 0 {
		t.Fatalf("%d members of C bound while A holds 8 of the 96 GPUs", n)
	}
	msg := condition(ptr(e.pods("team-b")[0])).Message
	if !strings.HasPrefix(msg, "reserved: starts by ") {
		t.Errorf("C waits with %q, want a reservation at A's end", msg)
	}

	e.finish("team-a", "a")
	e.waitFor("all of C bound", 30*time.Second, func() bool { n, _ := bound(e.pods("team-b"), "c-"); return n == 12 })
	_, nodes := bound(e.pods("team-b"), "c-")
	if len(nodes) != 12 {
		t.Errorf("C on %d nodes, want 12 (8 GPUs each)", len(nodes))
	}
	e.checkNoOverbooking(8, "team-a", "team-b")
	if got := testutil.ToFloat64(s.m.Promises.WithLabelValues("kept")); got != 1 {
		t.Errorf("promises kept %v, want 1 (C's)", got)
	}
}

func ptr[T any](v T) *T { return &v }

// Small pods pack onto the fewest nodes.
func TestPodsPack(t *testing.T) {
	e := newEnv(t)
	e.mkNodes("n", 4, uniform(8))
	e.start("", controller.Options{})
	var pods []*v1.Pod
	for i := range 8 {
		pods = append(pods, gpuPod("team-a", fmt.Sprintf("p-%d", i), 2))
	}
	e.create(pods...)
	e.waitFor("all bound", 30*time.Second, func() bool { n, _ := bound(e.pods("team-a"), "p-"); return n == 8 })
	_, nodes := bound(e.pods("team-a"), "p-")
	if len(nodes) != 2 {
		t.Errorf("8 pods of 2 GPUs on %d nodes %v, want 2 full nodes", len(nodes), nodes)
	}
	e.checkNoOverbooking(8, "team-a")
}

// A P3 pod is evicted for a P1 gang through the Eviction API, keeps its
// GPUs for its grace, and the gang starts once it is gone.
func TestP3EvictedForP1GangAfterGrace(t *testing.T) {
	e := newEnv(t)
	e.mkNodes("n", 2, uniform(8))
	e.priorityClasses(map[string]int32{"p1": 1000, "p3": 10})
	e.configMap(`{"tiers": {"p1": 1, "p3": 3}}`, "")
	e.reap("team-a")
	s := e.start("", controller.Options{})
	e.create(gpuPod("team-a", "low-0", 8, priorityClass("p3"), grace(3)), gpuPod("team-a", "low-1", 8, priorityClass("p3"), grace(3)))
	e.waitFor("the P3 pods bound", 30*time.Second, func() bool { n, _ := bound(e.pods("team-a"), "low-"); return n == 2 })

	e.create(gpuPod("team-b", "hi-0", 8, priorityClass("p1"), gang("hi", 2)), gpuPod("team-b", "hi-1", 8, priorityClass("p1"), gang("hi", 2)))
	var evictedAt time.Time
	e.waitFor("the P3 pods evicted with their grace", 30*time.Second, func() bool {
		for _, p := range e.pods("team-a") {
			if p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 3 {
				return false
			}
		}
		evictedAt = time.Now()
		return true
	})
	if n, _ := bound(e.pods("team-b"), "hi-"); n != 0 {
		t.Fatalf("the gang bound while its victims still hold their GPUs")
	}
	e.waitFor("the gang bound", 30*time.Second, func() bool { n, _ := bound(e.pods("team-b"), "hi-"); return n == 2 })
	if waited := time.Since(evictedAt); waited < 2*time.Second {
		t.Errorf("the gang started %v after the evictions, before the 3 s grace", waited)
	}
	if got := testutil.ToFloat64(s.m.Evictions.WithLabelValues("preempted")); got != 2 {
		t.Errorf("preempted evictions %v, want 2", got)
	}
	e.checkNoOverbooking(8, "team-a", "team-b")
}

// A node that goes NotReady is down: its pods are evicted (node-down) and
// nothing new lands on it.
func TestNodeNotReady(t *testing.T) {
	e := newEnv(t)
	names := e.mkNodes("n", 2, uniform(8))
	e.reap("team-a")
	s := e.start("", controller.Options{})
	e.create(gpuPod("team-a", "x", 8))
	e.waitFor("x bound", 30*time.Second, func() bool { return e.pod("team-a", "x").Spec.NodeName != "" })
	down := e.pod("team-a", "x").Spec.NodeName
	e.setNodeReady(down, false)
	// The eviction is visible in the API before the call returns to the
	// scheduler and its counter moves: wait for both.
	e.waitFor("x evicted, and counted", 30*time.Second, func() bool {
		p, err := e.admin.CoreV1().Pods("team-a").Get(e.ctx, "x", metav1.GetOptions{})
		return (err != nil || p.DeletionTimestamp != nil) && testutil.ToFloat64(s.m.Evictions.WithLabelValues("node-down")) >= 1
	})
	if got := testutil.ToFloat64(s.m.Evictions.WithLabelValues("node-down")); got != 1 {
		t.Errorf("node-down evictions %v", got)
	}
	e.create(gpuPod("team-a", "y", 8), gpuPod("team-a", "z", 8))
	e.waitFor("one of y, z bound and the other told why it waits", 30*time.Second, func() bool {
		n, _ := bound(e.pods("team-a"), "")
		c := 0
		for _, p := range e.pods("team-a") {
			if p.Spec.NodeName == "" && condition(&p) != nil {
				c++
			}
		}
		return n == 1 && c == 1
	})
	for _, p := range e.pods("team-a") {
		if p.Spec.NodeName == down {
			t.Errorf("%s bound to the NotReady node %s", p.Name, down)
		}
	}
	_ = names
}

// The leader dies after binding half a gang; the next leader rebuilds
// from the API and binds the rest, nothing twice.
func TestSchedulerRestartMidGang(t *testing.T) {
	e := newEnv(t)
	e.mkNodes("n", 4, uniform(8))
	first := e.start("first", controller.Options{}, func(c *counter) { c.failAfter.Store(2) })
	var pods []*v1.Pod
	for i := range 4 {
		pods = append(pods, gpuPod("team-a", fmt.Sprintf("g-%d", i), 8, gang("g", 4)))
	}
	e.create(pods...)
	e.waitFor("half the gang bound by the first leader", 30*time.Second, func() bool {
		n, _ := bound(e.pods("team-a"), "g-")
		return n == 2 && testutil.ToFloat64(first.m.BindErrors) >= 2
	})
	first.stop()
	second := e.start("second", controller.Options{})
	// A binding is visible in the API before the call returns to the
	// scheduler and its counter moves: wait for both.
	e.waitFor("the whole gang bound, and counted", 30*time.Second, func() bool {
		n, _ := bound(e.pods("team-a"), "g-")
		return n == 4 && testutil.ToFloat64(second.m.PodsBound)+testutil.ToFloat64(second.m.BindErrors) >= 2
	})
	if got := testutil.ToFloat64(second.m.BindErrors); got != 0 {
		t.Errorf("the second leader had %v binding errors, want 0 (nothing bound twice)", got)
	}
	if got := testutil.ToFloat64(second.m.PodsBound); got != 2 {
		t.Errorf("the second leader bound %v pods, want the 2 left", got)
	}
	if _, nodes := bound(e.pods("team-a"), "g-"); len(nodes) != 4 {
		t.Errorf("gang on %v, want 4 nodes", nodes)
	}
}

// Bad input is named on the pods concerned and the rest is scheduled.
func TestBadInputDoesNotStopTheCluster(t *testing.T) {
	e := newEnv(t)
	e.mkNodes("n", 2, uniform(8))
	e.configMap(`{"tiers": {"x": 9}}`, "")
	e.start("", controller.Options{})
	bad := gpuPod("team-a", "bad", 1, gang("g", 2))
	bad.Labels["gpusched.io/gang-size"] = "two"
	m0 := gpuPod("team-a", "m-0", 8, gang("m", 2))
	m1 := gpuPod("team-a", "m-1", 4, gang("m", 2))
	e.create(bad, m0, m1, gpuPod("team-a", "ok", 1))
	e.waitFor("ok bound and the bad pods told why", 30*time.Second, func() bool {
		if e.pod("team-a", "ok").Spec.NodeName == "" {
			return false
		}
		for _, n := range []string{"bad", "m-0", "m-1"} {
			if condition(e.pod("team-a", n)) == nil {
				return false
			}
		}
		return true
	})
	if c := condition(e.pod("team-a", "bad")); c.Reason != "BadGangLabel" || !strings.Contains(c.Message, `gang-size="two"`) {
		t.Errorf("bad: %s %q", c.Reason, c.Message)
	}
	if c := condition(e.pod("team-a", "m-1")); c.Reason != "GangMembersDisagree" {
		t.Errorf("m-1: %s %q", c.Reason, c.Message)
	}
	cm, _ := e.admin.CoreV1().ConfigMaps("gpusched-system").Get(e.ctx, "gpusched", metav1.GetOptions{})
	if a := cm.Annotations[controller.AnnotationConfigError]; !strings.Contains(a, `tiers["x"]`) {
		t.Errorf("ConfigMap annotation %q, want the error", a)
	}
	evs, _ := e.admin.CoreV1().Events("team-a").List(e.ctx, metav1.ListOptions{})
	seen := false
	for _, ev := range evs.Items {
		if ev.InvolvedObject.Name == "bad" && ev.Reason == "BadGangLabel" {
			seen = true
		}
	}
	if !seen {
		t.Errorf("no BadGangLabel event on pod bad")
	}
}
