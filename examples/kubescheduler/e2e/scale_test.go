package e2e

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/controller"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// bindWatch records when each pod of a namespace is first seen bound.
type bindWatch struct {
	mu    sync.Mutex
	at    map[string]time.Time
	first time.Time
	last  time.Time
}

func (e *env) watchBinds(ns string) *bindWatch {
	e.t.Helper()
	bw := &bindWatch{at: map[string]time.Time{}}
	seen := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		now := time.Now()
		bw.mu.Lock()
		if _, seen := bw.at[p.Name]; !seen {
			bw.at[p.Name] = now
			if bw.first.IsZero() {
				bw.first = now
			}
			bw.last = now
		}
		bw.mu.Unlock()
	}
	f := informers.NewSharedInformerFactoryWithOptions(e.admin, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, n any) { seen(n) }})
	f.Start(e.ctx.Done())
	f.WaitForCacheSync(e.ctx.Done())
	return bw
}

func (bw *bindWatch) count(prefix string) (n int, last time.Time) {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	for name, at := range bw.at {
		if strings.HasPrefix(name, prefix) {
			n++
			if at.After(last) {
				last = at
			}
		}
	}
	return n, last
}

// callsReport formats a scheduler's API calls.
func callsReport(c *counter) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var kinds []string
	for k, n := range c.byKind {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(kinds)
	return strings.Join(kinds, " ")
}

// 1,000 pods of 8 GPUs on 1,000 nodes of 8 GPUs: every pod bound, one per
// node.
func TestThousandPodsOnThousandNodes(t *testing.T) {
	e := newEnv(t)
	e.mkNodes("n", 1000, uniform(8))
	s := e.start("", controller.Options{})
	bw := e.watchBinds("team-a")
	var pods []*v1.Pod
	for i := range 1000 {
		pods = append(pods, gpuPod("team-a", fmt.Sprintf("p-%04d", i), 8))
	}
	start := time.Now()
	e.create(pods...)
	created := time.Since(start)
	e.waitFor("1,000 pods bound", 40*time.Second, func() bool { n, _ := bw.count("p-"); return n == 1000 })
	_, last := bw.count("p-")
	took := last.Sub(start)
	held := e.checkNoOverbooking(8, "team-a")
	if len(held) != 1000 {
		t.Errorf("pods on %d nodes, want 1,000", len(held))
	}
	bound := testutil.ToFloat64(s.m.PodsBound)
	t.Logf("1,000 pods on 1,000 nodes: created in %v, last bound %v after the first create (%.0f pods/s), %d passes, %.2f API calls per bound pod (%s)",
		created.Round(time.Millisecond), took.Round(time.Millisecond), 1000/took.Seconds(), int(testutil.ToFloat64(s.m.StepsRun)),
		float64(s.calls.n.Load())/bound, callsReport(s.calls))
}

// TestPerf measures, on 1,000 and 5,000 nodes of 8 GPUs, pods bound per
// second with 10,000 pods of one GPU created at once, and the time from
// creating a 64-pod gang (8 GPUs a member, a higher tier, on 64 nodes
// kept for it by a taint) to its last binding while those 10,000 are
// being scheduled. It runs only with GPUSCHED_E2E_PERF=1.
func TestPerf(t *testing.T) {
	if os.Getenv("GPUSCHED_E2E_PERF") == "" {
		t.Skip("set GPUSCHED_E2E_PERF=1 to run the scale measurements")
	}
	for _, pool := range []bool{true, false} {
		for _, nodes := range []int{1000, 5000} {
			t.Run(fmt.Sprintf("nodes=%d/gangpool=%v", nodes, pool), func(t *testing.T) { perf(t, nodes, pool) })
		}
	}
}

// perf runs one measurement. With pool, the last 64 nodes are tainted and
// labelled for the gang, so the 10,000 pods each carry a list of the other
// nodes as eligible nodes; without, every node is eligible for every pod
// and the gang, of a higher tier, goes first among the pods that wait.
func perf(t *testing.T, nodes int, pool bool) {
	e := newEnv(t)
	e.priorityClasses(map[string]int32{"p1": 1000})
	e.configMap(`{"tiers": {"p1": 1}}`, "")
	taint := v1.Taint{Key: "pool", Value: "gang", Effect: v1.TaintEffectNoSchedule}
	tStart := time.Now()
	e.mkNodes("n", nodes, func(i int) nodeSpec {
		if pool && i >= nodes-64 {
			return nodeSpec{gpus: 8, labels: map[string]string{"pool": "gang"}, taints: []v1.Taint{taint}}
		}
		return nodeSpec{gpus: 8, labels: map[string]string{"pool": "general"}}
	})
	t.Logf("%d nodes created in %v", nodes, time.Since(tStart).Round(time.Millisecond))
	e.reap("team-a") // pods evicted for the gang, if it has to preempt
	s := e.start("", controller.Options{})
	bwA := e.watchBinds("team-a")
	bwB := e.watchBinds("team-b")
	const bulk = 10000
	var pods []*v1.Pod
	for i := range bulk {
		pods = append(pods, gpuPod("team-a", fmt.Sprintf("p-%05d", i), 1))
	}
	start := time.Now()
	e.create(pods...)
	created := time.Since(start)
	n0, _ := bwA.count("p-")

	var members []*v1.Pod
	for i := range 64 {
		p := gpuPod("team-b", fmt.Sprintf("g-%02d", i), 8, gang("g", 64), priorityClass("p1"))
		if pool {
			p.Spec.NodeSelector = map[string]string{"pool": "gang"}
			p.Spec.Tolerations = []v1.Toleration{{Key: "pool", Operator: v1.TolerationOpEqual, Value: "gang", Effect: v1.TaintEffectNoSchedule}}
		}
		members = append(members, p)
	}
	gStart := time.Now()
	e.create(members...)
	e.waitFor("the gang bound", 300*time.Second, func() bool { n, _ := bwB.count("g-"); return n == 64 })
	_, gLast := bwB.count("g-")
	want := min(bulk, (nodes-64)*8) // the gang's 512 GPUs are not theirs, whichever nodes it took
	// At least: pods evicted for the gang (when it had to preempt) were bound too.
	e.waitFor("the bulk bound", 600*time.Second, func() bool { n, _ := bwA.count("p-"); return n >= want })
	_, last := bwA.count("p-")
	bwA.mu.Lock()
	first := bwA.first
	bwA.mu.Unlock()
	bound := testutil.ToFloat64(s.m.PodsBound)
	e.checkNoOverbooking(8, "team-a", "team-b")
	want, _ = bwA.count("p-")
	t.Logf("evictions for the gang: %v", testutil.ToFloat64(s.m.Evictions.WithLabelValues("preempted")))
	t.Logf("nodes=%d gangpool=%v: 10,000 pods created in %v (%d bound by then); %d bound, last %v after the first create: %.0f pods/s end to end, %.0f pods/s from first to last binding; "+
		"64-pod gang created to last binding %v; %d passes, %s; %.2f API calls per bound pod (%s)",
		nodes, pool, created.Round(time.Millisecond), n0, want, last.Sub(start).Round(time.Millisecond), float64(want)/last.Sub(start).Seconds(),
		float64(want)/last.Sub(first).Seconds(), gLast.Sub(gStart).Round(time.Millisecond), int(testutil.ToFloat64(s.m.StepsRun)),
		stepSummary(s.m), float64(s.calls.n.Load())/bound, callsReport(s.calls))
}

// stepSummary gives the mean and count of the step histogram.
func stepSummary(m *controller.Metrics) string {
	return fmt.Sprintf("mean %.0f ms over %d passes", 1000*histMean(m), int(testutil.ToFloat64(m.StepsRun)))
}

func histMean(m *controller.Metrics) float64 {
	var d dto.Metric
	if err := m.StepSeconds.Write(&d); err != nil || d.Histogram.GetSampleCount() == 0 {
		return 0
	}
	return d.Histogram.GetSampleSum() / float64(d.Histogram.GetSampleCount())
}
