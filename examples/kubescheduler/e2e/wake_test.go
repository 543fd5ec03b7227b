package e2e

import (
	"testing"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/controller"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod that reaches its time limit is evicted then, with no event to
// wake the scheduler: only the decision's NextWake does.
func TestTimeLimitEvictionAtNextWake(t *testing.T) {
	e := newEnv(t)
	e.mkNodes("n", 1, uniform(8))
	s := e.start("", controller.Options{})
	e.create(gpuPod("team-a", "x", 8, timeLimit(3*time.Second), grace(1)))
	e.waitFor("x bound", 30*time.Second, func() bool { return e.pod("team-a", "x").Spec.NodeName != "" })
	// The kubelet starts it.
	p := e.pod("team-a", "x")
	started := metav1.Now()
	p.Status.Phase, p.Status.StartTime = v1.PodRunning, &started
	e.must(e.admin.CoreV1().Pods("team-a").UpdateStatus(e.ctx, p, metav1.UpdateOptions{}))
	e.waitFor("x evicted at its limit", 30*time.Second, func() bool { return e.pod("team-a", "x").DeletionTimestamp != nil })
	if ran := time.Since(started.Time); ran < 2*time.Second {
		t.Errorf("x evicted %v after it started, before its 3 s limit", ran)
	}
	// The controller counts an eviction once the API server has taken it,
	// which may be just after the pod shows its deletion.
	counted := func() float64 { return testutil.ToFloat64(s.m.Evictions.WithLabelValues("time-limit")) }
	e.waitFor("the time-limit eviction counted", 10*time.Second, func() bool { return counted() >= 1 })
	if got := counted(); got != 1 {
		t.Errorf("time-limit evictions %v, want 1", got)
	}
	if g := e.pod("team-a", "x").DeletionGracePeriodSeconds; g == nil || *g != 1 {
		t.Errorf("grace %v, want the pod's 1 s", g)
	}
}
