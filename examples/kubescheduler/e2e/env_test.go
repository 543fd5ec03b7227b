package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/adapter"
	"github.com/gpusched/gpusched/examples/kubescheduler/controller"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const gpu = v1.ResourceName(adapter.DefaultGPUResource)

// env is one API server with an admin client for the test's own calls.
type env struct {
	t     *testing.T
	cfg   *rest.Config
	admin kubernetes.Interface
	ctx   context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg := startAPIServer(t)
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &env{t: t, cfg: cfg, admin: admin, ctx: ctx}
	for _, ns := range []string{"gpusched-system", "team-a", "team-b", "team-c"} {
		e.must(admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
	}
	return e
}

func (e *env) must(_ any, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// parallel runs f(i) for i < n, 32 at a time.
func parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var first atomic.Value
	sem := make(chan struct{}, 32)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(i); err != nil {
				first.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

// nodeSpec describes the nodes to create.
type nodeSpec struct {
	gpus   int
	labels map[string]string
	taints []v1.Taint
}

// mkNodes creates n ready nodes named prefix-0000... as the kubelet would
// report them: GPUs, 64 CPUs, 512 GiB allocatable.
func (e *env) mkNodes(prefix string, n int, spec func(i int) nodeSpec) []string {
	e.t.Helper()
	names := make([]string, n)
	err := parallel(n, func(i int) error {
		s := spec(i)
		name := fmt.Sprintf("%s-%04d", prefix, i)
		names[i] = name
		nd, err := e.admin.CoreV1().Nodes().Create(e.ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: s.labels},
			Spec: v1.NodeSpec{Taints: s.taints}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		res := v1.ResourceList{gpu: *resource.NewQuantity(int64(s.gpus), resource.DecimalSI),
			v1.ResourceCPU: resource.MustParse("64"), v1.ResourceMemory: resource.MustParse("512Gi"), v1.ResourcePods: resource.MustParse("110")}
		nd.Status = v1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "KubeletReady"}}}
		_, err = e.admin.CoreV1().Nodes().UpdateStatus(e.ctx, nd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return names
}

func uniform(gpus int) func(int) nodeSpec { return func(int) nodeSpec { return nodeSpec{gpus: gpus} } }

// podOpt changes a pod before it is created.
type podOpt func(*v1.Pod)

func gang(name string, size int) podOpt {
	return func(p *v1.Pod) {
		p.Labels[adapter.LabelGang] = name
		p.Labels[adapter.LabelGangSize] = fmt.Sprint(size)
	}
}

func priorityClass(name string) podOpt {
	return func(p *v1.Pod) { p.Spec.PriorityClassName = name }
}

func grace(s int64) podOpt {
	return func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = &s }
}

func timeLimit(d time.Duration) podOpt {
	return func(p *v1.Pod) { p.Annotations[adapter.AnnotationTimeLimit] = d.String() }
}

func gpuPod(ns, name string, gpus int, opts ...podOpt) *v1.Pod {
	q := *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec: v1.PodSpec{SchedulerName: "gpusched", Containers: []v1.Container{{Name: "main", Image: "trainer",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{gpu: q, v1.ResourceCPU: resource.MustParse("1")}, Limits: v1.ResourceList{gpu: q}}}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func (e *env) create(pods ...*v1.Pod) {
	e.t.Helper()
	if err := parallel(len(pods), func(i int) error {
		_, err := e.admin.CoreV1().Pods(pods[i].Namespace).Create(e.ctx, pods[i], metav1.CreateOptions{})
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) pod(ns, name string) *v1.Pod {
	e.t.Helper()
	p, err := e.admin.CoreV1().Pods(ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) pods(ns string) []v1.Pod {
	e.t.Helper()
	l, err := e.admin.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

// waitFor polls cond until it holds or the timeout passes.
func (e *env) waitFor(what string, timeout time.Duration, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// finish plays the kubelet: the pod's containers ended.
func (e *env) finish(ns, name string) {
	e.t.Helper()
	p := e.pod(ns, name)
	p.Status.Phase = v1.PodSucceeded
	e.must(e.admin.CoreV1().Pods(ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{}))
}

// reap plays the kubelet for evicted pods: a pod being deleted is removed
// once its grace period has passed.
func (e *env) reap(ns string) {
	go func() {
		for e.ctx.Err() == nil {
			l, err := e.admin.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{})
			if err == nil {
				for _, p := range l.Items {
					if p.DeletionTimestamp != nil && !time.Now().Before(p.DeletionTimestamp.Time) {
						zero := int64(0)
						_ = e.admin.CoreV1().Pods(ns).Delete(e.ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

func (e *env) setNodeReady(name string, ready bool) {
	e.t.Helper()
	n, err := e.admin.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	st := v1.ConditionTrue
	if !ready {
		st = v1.ConditionFalse
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == v1.NodeReady {
			n.Status.Conditions[i].Status = st
		}
	}
	e.must(e.admin.CoreV1().Nodes().UpdateStatus(e.ctx, n, metav1.UpdateOptions{}))
}

func (e *env) configMap(config, policy string) {
	e.t.Helper()
	e.must(e.admin.CoreV1().ConfigMaps("gpusched-system").Create(e.ctx, &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gpusched-system", Name: "gpusched"},
		Data:       map[string]string{adapter.ConfigKey: config, adapter.PolicyKey: policy}}, metav1.CreateOptions{}))
}

func (e *env) priorityClasses(values map[string]int32) {
	e.t.Helper()
	for name, v := range values {
		e.must(e.admin.SchedulingV1().PriorityClasses().Create(e.ctx, &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}, metav1.CreateOptions{}))
	}
}

// counter counts the HTTP requests of one client.
type counter struct {
	n      atomic.Int64
	mu     sync.Mutex
	byKind map[string]int
	// failBinds, when positive, is how many bindings succeed before every
	// later one fails (a scheduler that dies midway).
	failAfter atomic.Int64
	binds     atomic.Int64
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		c.n.Add(1)
		kind := r.Method + " " + resourceOf(r.URL.Path)
		c.mu.Lock()
		c.byKind[kind]++
		c.mu.Unlock()
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/binding") {
			if n := c.binds.Add(1); c.failAfter.Load() > 0 && n > c.failAfter.Load() {
				return nil, fmt.Errorf("planted: the scheduler died before this binding")
			}
		}
		return rt.RoundTrip(r)
	})
}

// resourceOf shortens an API path to its resource and subresource.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var out []string
	for i, p := range parts {
		switch p {
		case "pods", "nodes", "events", "configmaps", "leases", "priorityclasses", "podgroups", "namespaces":
			out = append(out, p)
			if i+2 < len(parts) {
				out = append(out, parts[i+2])
			}
		}
	}
	if len(out) == 0 {
		return path
	}
	return strings.Join(out, "/")
}

// sched is a running scheduler.
type sched struct {
	c      *controller.Controller
	m      *controller.Metrics
	calls  *counter
	cancel context.CancelFunc
	done   chan error
}

func quiet() *slog.Logger {
	if os.Getenv("GPUSCHED_E2E_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// client returns a client whose requests are counted.
func (e *env) client(cnt *counter) kubernetes.Interface {
	cfg := rest.CopyConfig(e.cfg)
	cfg.Wrap(cnt.wrap)
	cfg.QPS, cfg.Burst = -1, 0
	cl, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return cl
}

// start runs a scheduler; with lease set, through leader election.
func (e *env) start(lease string, opts controller.Options, mod ...func(*counter)) *sched {
	cnt := &counter{byKind: map[string]int{}}
	for _, f := range mod {
		f(cnt)
	}
	cl := e.client(cnt)
	if opts.Logger == nil {
		opts.Logger = quiet()
	}
	if opts.Coalesce == 0 {
		opts.Coalesce = 20 * time.Millisecond
	}
	opts.Metrics = controller.NewMetrics()
	var dyn dynamic.Interface
	if opts.PodGroups == "" {
		opts.PodGroups = "off"
	}
	if opts.PodGroups != "off" {
		cfg := rest.CopyConfig(e.cfg)
		cfg.Wrap(cnt.wrap)
		var err error
		if dyn, err = dynamic.NewForConfig(cfg); err != nil {
			e.t.Fatal(err)
		}
	}
	c := controller.New(cl, dyn, opts)
	ctx, cancel := context.WithCancel(e.ctx)
	s := &sched{c: c, m: opts.Metrics, calls: cnt, cancel: cancel, done: make(chan error, 1)}
	go func() {
		if lease == "" {
			s.done <- c.Run(ctx)
			return
		}
		s.done <- c.RunAsLeader(ctx, cl, controller.LeaderOptions{Namespace: "gpusched-system", Name: "gpusched", Identity: lease,
			LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond})
	}()
	e.t.Cleanup(func() { s.stop() })
	return s
}

func (s *sched) stop() {
	s.cancel()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
}

// condition returns the pod's PodScheduled condition, or nil.
func condition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// gpusPerNode sums the GPU requests of the bound pods per node, and
// fails the test where a node holds more than its 8 GPUs... or cap.
func (e *env) checkNoOverbooking(capacity int, namespaces ...string) map[string]int {
	e.t.Helper()
	held := map[string]int{}
	for _, ns := range namespaces {
		for _, p := range e.pods(ns) {
			if p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
				continue
			}
			q := p.Spec.Containers[0].Resources.Requests[gpu]
			held[p.Spec.NodeName] += int(q.Value())
		}
	}
	for n, g := range held {
		if g > capacity {
			e.t.Errorf("node %s holds %d GPUs, has %d", n, g, capacity)
		}
	}
	return held
}
