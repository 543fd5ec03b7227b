package controller

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/adapter"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var t0 = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

func node(name string, gpus int) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{adapter.DefaultGPUResource: *resource.NewQuantity(int64(gpus), resource.DecimalSI)},
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		}}
}

func pod(name string, gpus int, gang string, size int) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{}},
		Spec: v1.PodSpec{SchedulerName: "gpusched", Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{adapter.DefaultGPUResource: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}}}}}}
	if gang != "" {
		p.Labels[adapter.LabelGang] = gang
		p.Labels[adapter.LabelGangSize] = fmt.Sprint(size)
	}
	return p
}

// harness is a controller on a fake clientset whose binding subresource
// sets spec.nodeName, as the API server does, and fails for pods in
// failBind (once each).
type harness struct {
	t        *testing.T
	client   *fake.Clientset
	c        *Controller
	mu       sync.Mutex
	failBind map[string]bool
}

func newHarness(t *testing.T, objs ...runtime.Object) *harness {
	h := &harness{t: t, client: fake.NewClientset(objs...), failBind: map[string]bool{}}
	h.client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca, ok := a.(k8stesting.CreateAction)
		if !ok || ca.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := ca.GetObject().(*v1.Binding)
		h.mu.Lock()
		fail := h.failBind[b.Name]
		delete(h.failBind, b.Name)
		h.mu.Unlock()
		if fail {
			return true, nil, fmt.Errorf("planted failure binding %s", b.Name)
		}
		o, err := h.client.Tracker().Get(v1.SchemeGroupVersion.WithResource("pods"), b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		p := o.(*v1.Pod).DeepCopy()
		if p.Spec.NodeName != "" {
			return true, nil, fmt.Errorf("pod %s is already bound to %s", p.Name, p.Spec.NodeName)
		}
		p.Spec.NodeName = b.Target.Name
		return true, nil, h.client.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), p, b.Namespace)
	})
	h.c = New(h.client, nil, Options{Clock: func() time.Time { return t0 }, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := h.c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// settle waits until the informer shows what cond wants.
func (h *harness) settle(what string, cond func() bool) {
	h.t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("informer never showed %s", what)
}

func (h *harness) pod(name string) *v1.Pod {
	p, err := h.client.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) count(verb, sub string) int {
	n := 0
	for _, a := range h.client.Actions() {
		if a.GetVerb() == verb && a.GetSubresource() == sub {
			n++
		}
	}
	return n
}

func scheduledCond(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func TestPassBindsAndWritesConditionsOnlyWhenChanged(t *testing.T) {
	h := newHarness(t, node("a", 8), pod("single", 4, "", 0), pod("g-0", 8, "g", 2), pod("g-1", 8, "g", 2))
	h.settle("the pods", func() bool { l, _ := h.c.pods.List(everything()); return len(l) == 3 })
	h.c.Pass(context.Background())
	if got := h.pod("single").Spec.NodeName; got != "a" {
		t.Fatalf("single bound to %q, want a", got)
	}
	for _, n := range []string{"g-0", "g-1"} {
		c := scheduledCond(h.pod(n))
		if c == nil || c.Status != v1.ConditionFalse || c.Reason != ReasonUnschedulable || !strings.HasPrefix(c.Message, "unsatisfiable: ") {
			t.Errorf("%s condition %+v, want Unschedulable unsatisfiable (one node of 8 GPUs)", n, c)
		}
	}
	if n := testutil.ToFloat64(h.c.m.PodsBound); n != 1 {
		t.Errorf("pods bound metric %v", n)
	}
	if n := testutil.ToFloat64(h.c.m.Pending.WithLabelValues("unsatisfiable")); n != 2 {
		t.Errorf("pending metric %v", n)
	}
	patches := h.count("patch", "status")
	h.settle("the binding", func() bool { p, _ := h.c.pods.Pods("ns").Get("single"); return p.Spec.NodeName == "a" })
	h.settle("the conditions", func() bool { p, _ := h.c.pods.Pods("ns").Get("g-1"); return scheduledCond(p) != nil })
	h.c.Pass(context.Background())
	if got := h.count("patch", "status"); got != patches {
		t.Errorf("second pass wrote %d conditions, want none (nothing changed)", got-patches)
	}
	if got := h.count("create", "binding"); got != 1 {
		t.Errorf("%d bindings, want 1", got)
	}
}

func TestGangBindFailingMidwayRecoversWithoutDoubleBooking(t *testing.T) {
	h := newHarness(t, node("a", 8), node("b", 8), pod("g-0", 8, "g", 2), pod("g-1", 8, "g", 2), pod("late", 8, "", 0))
	h.failBind["g-1"] = true
	// "late" waits behind the gang only if it is younger: make the gang older.
	h.settle("the pods", func() bool { l, _ := h.c.pods.List(everything()); return len(l) == 3 })
	h.c.Pass(context.Background())
	g0 := h.pod("g-0").Spec.NodeName
	if g0 == "" || h.pod("g-1").Spec.NodeName != "" {
		t.Fatalf("after the planted failure g-0 on %q, g-1 on %q: want g-0 bound, g-1 not", g0, h.pod("g-1").Spec.NodeName)
	}
	if n := testutil.ToFloat64(h.c.m.BindErrors); n != 1 {
		t.Errorf("bind errors %v", n)
	}
	h.settle("g-0 bound", func() bool { p, _ := h.c.pods.Pods("ns").Get("g-0"); return p.Spec.NodeName != "" })
	h.c.Pass(context.Background())
	h.settle("everything bound", func() bool {
		for _, n := range []string{"g-0", "g-1"} {
			if p, _ := h.c.pods.Pods("ns").Get(n); p.Spec.NodeName == "" {
				return false
			}
		}
		return true
	})
	held := map[string]int{}
	for _, n := range []string{"g-0", "g-1", "late"} {
		if node := h.pod(n).Spec.NodeName; node != "" {
			held[node] += 8
		}
	}
	if held["a"] > 8 || held["b"] > 8 || h.pod("g-0").Spec.NodeName == h.pod("g-1").Spec.NodeName {
		t.Errorf("GPUs held per node %v: a node is double booked", held)
	}
	if h.pod("late").Spec.NodeName != "" {
		t.Errorf("late bound to %s while the gang's rest waited", h.pod("late").Spec.NodeName)
	}
}

func TestBadConfigMapKeepsSchedulingAndSaysWhy(t *testing.T) {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "gpusched-system", Name: "gpusched"},
		Data: map[string]string{adapter.ConfigKey: `{"tiers": `}}
	h := newHarness(t, cm, node("a", 8), pod("p", 1, "", 0))
	h.settle("the objects", func() bool {
		l, _ := h.c.pods.List(everything())
		_, err := h.c.cms.ConfigMaps("gpusched-system").Get("gpusched")
		return len(l) == 1 && err == nil
	})
	h.c.Pass(context.Background())
	if h.pod("p").Spec.NodeName != "a" {
		t.Errorf("p not bound while the ConfigMap is bad")
	}
	got, _ := h.client.CoreV1().ConfigMaps("gpusched-system").Get(context.Background(), "gpusched", metav1.GetOptions{})
	if msg := got.Annotations[AnnotationConfigError]; !strings.HasPrefix(msg, "config.json: ") {
		t.Errorf("annotation %q, want the parse error", msg)
	}
	if v := testutil.ToFloat64(h.c.m.ConfigValid); v != 0 {
		t.Errorf("config valid %v", v)
	}
}

func everything() labels.Selector { return labels.Everything() }
