// Package controller runs gpusched against a Kubernetes API server: it
// keeps shared informers on pods, nodes, pod groups, priority classes and
// its ConfigMap, builds a snapshot (package adapter) on every relevant
// event and at the decision's NextWake, Steps, and acts through the
// Binding and Eviction APIs and the pods' PodScheduled conditions.
package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/adapter"
	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/scheduler"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// PodGroupGVR is the scheduler-plugins PodGroup resource.
var PodGroupGVR = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}

// AnnotationConfigError is set on the ConfigMap while it does not parse,
// to the error; the scheduler then runs on its last good configuration.
const AnnotationConfigError = "gpusched.io/config-error"

// Options configure a Controller. The zero value of each field has a
// sensible default.
type Options struct {
	// SchedulerName is the spec.schedulerName of the pods to schedule
	// (default "gpusched").
	SchedulerName string
	// ConfigMapNamespace and ConfigMapName locate the ConfigMap (default
	// "gpusched-system" and "gpusched").
	ConfigMapNamespace string
	ConfigMapName      string
	// Coalesce is how long a pass waits after the first event, so that a
	// burst of events makes one pass (default 50ms).
	Coalesce time.Duration
	// Workers is how many API calls (bindings, evictions, status
	// updates) run at once (default 32).
	Workers int
	// MessageRefresh is the least time between two updates of a pod's
	// condition whose reason stays the same and only the message changes
	// (default 1m); a change of reason is written at once.
	MessageRefresh time.Duration
	// PodGroups says whether to watch PodGroups: "auto" (default: when
	// the API serves them), "on" or "off".
	PodGroups string
	// Clock returns the time (default time.Now).
	Clock func() time.Time
	// Logger logs (default slog.Default()).
	Logger *slog.Logger
	// Metrics, when nil, is NewMetrics().
	Metrics *Metrics
}

func (o *Options) defaults() {
	if o.SchedulerName == "" {
		o.SchedulerName = "gpusched"
	}
	if o.ConfigMapNamespace == "" {
		o.ConfigMapNamespace = "gpusched-system"
	}
	if o.ConfigMapName == "" {
		o.ConfigMapName = "gpusched"
	}
	if o.Coalesce <= 0 {
		o.Coalesce = 50 * time.Millisecond
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.MessageRefresh <= 0 {
		o.MessageRefresh = time.Minute
	}
	if o.PodGroups == "" {
		o.PodGroups = "auto"
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
}

// written is what the controller last wrote to a pod's condition.
type written struct {
	reason, message string
	at              time.Time
}

// Controller is one scheduler. Create it with New, then Run it (as the
// leader).
type Controller struct {
	client kubernetes.Interface
	dyn    dynamic.Interface
	opts   Options
	log    *slog.Logger
	m      *Metrics

	factory    informers.SharedInformerFactory
	podFactory podInformer
	cmFactory  informers.SharedInformerFactory
	dynFac     dynamicinformer.DynamicSharedInformerFactory
	pods       corelisters.PodLister
	nodes      corelisters.NodeLister
	cms        corelisters.ConfigMapLister
	pgs        cache.GenericLister
	synced     []cache.InformerSynced

	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder

	kick      chan struct{}
	ready     atomic.Bool
	startOnce sync.Once
	startErr  error

	// The state below is touched only by the scheduling loop.
	cfg       *adapter.Config
	cfgRV     string
	cfgErr    string
	cfgLoaded bool
	assumed   map[types.UID]string
	evicted   map[types.UID]time.Time
	plan      []scheduler.Reservation
	promises  map[string]time.Time
	ledger    *fairshare.Ledger
	lastUsage time.Time
	running   map[string]int // team -> GPUs held at the last pass
	written   map[types.UID]written
	warned    map[types.UID]string
}

// New creates a controller. dyn may be nil (no PodGroups).
func New(client kubernetes.Interface, dyn dynamic.Interface, opts Options) *Controller {
	opts.defaults()
	c := &Controller{client: client, dyn: dyn, opts: opts, log: opts.Logger, m: opts.Metrics,
		kick:     make(chan struct{}, 1),
		cfg:      adapter.DefaultConfig(),
		assumed:  map[types.UID]string{},
		evicted:  map[types.UID]time.Time{},
		promises: map[string]time.Time{},
		running:  map[string]int{},
		written:  map[types.UID]written{},
		warned:   map[types.UID]string{},
	}
	strip := func(obj any) (any, error) {
		if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
			a.GetObjectMeta().SetManagedFields(nil)
		}
		return obj, nil
	}
	c.factory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(strip))
	podInf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(strip),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.AndSelectors(
				fields.OneTermNotEqualSelector("status.phase", string(v1.PodSucceeded)),
				fields.OneTermNotEqualSelector("status.phase", string(v1.PodFailed))).String()
		})).Core().V1().Pods()
	// Pods come from their own factory (for the field selector); keep it
	// started with the others.
	c.podFactory = podInf
	c.pods = podInf.Lister()
	c.nodes = c.factory.Core().V1().Nodes().Lister()
	pcInf := c.factory.Scheduling().V1().PriorityClasses()
	c.cmFactory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(opts.ConfigMapNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", opts.ConfigMapName).String()
		}))
	cmInf := c.cmFactory.Core().V1().ConfigMaps()
	c.cms = cmInf.Lister()

	_, _ = podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.Kick() },
		UpdateFunc: func(o, n any) { c.podChanged(o, n) },
		DeleteFunc: func(any) { c.Kick() },
	})
	_, _ = c.factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.Kick() },
		UpdateFunc: func(o, n any) { c.nodeChanged(o, n) },
		DeleteFunc: func(any) { c.Kick() },
	})
	kickAll := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.Kick() },
		UpdateFunc: func(any, any) { c.Kick() },
		DeleteFunc: func(any) { c.Kick() },
	}
	_, _ = pcInf.Informer().AddEventHandler(kickAll)
	_, _ = cmInf.Informer().AddEventHandler(kickAll)
	c.synced = []cache.InformerSynced{podInf.Informer().HasSynced, c.factory.Core().V1().Nodes().Informer().HasSynced,
		pcInf.Informer().HasSynced, cmInf.Informer().HasSynced}

	if dyn != nil && c.podGroupsServed() {
		c.dynFac = dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
		pg := c.dynFac.ForResource(PodGroupGVR)
		_, _ = pg.Informer().AddEventHandler(kickAll)
		c.pgs = pg.Lister()
		c.synced = append(c.synced, pg.Informer().HasSynced)
	}

	c.broadcaster = record.NewBroadcaster()
	c.recorder = c.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: opts.SchedulerName})
	return c
}

// podGroupsServed reports whether to watch PodGroups.
func (c *Controller) podGroupsServed() bool {
	switch c.opts.PodGroups {
	case "on":
		return true
	case "off":
		return false
	}
	_, err := c.client.Discovery().ServerResourcesForGroupVersion(PodGroupGVR.GroupVersion().String())
	if err != nil {
		c.log.Info("PodGroups are not served; gangs come from the gang labels only", "groupVersion", PodGroupGVR.GroupVersion().String())
		return false
	}
	return true
}

// Kick asks for a scheduling pass.
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// podChanged kicks on changes that matter to scheduling, not on the
// condition updates the controller writes itself.
func (c *Controller) podChanged(o, n any) {
	op, ok1 := o.(*v1.Pod)
	np, ok2 := n.(*v1.Pod)
	if !ok1 || !ok2 || op.Spec.NodeName != np.Spec.NodeName || op.Status.Phase != np.Status.Phase ||
		(op.DeletionTimestamp == nil) != (np.DeletionTimestamp == nil) || !labels.Equals(op.Labels, np.Labels) ||
		!labels.Equals(op.Annotations, np.Annotations) || op.Generation != np.Generation {
		c.Kick()
	}
}

// nodeChanged kicks on changes of what the adapter reads from a node.
func (c *Controller) nodeChanged(o, n any) {
	on, ok1 := o.(*v1.Node)
	nn, ok2 := n.(*v1.Node)
	if !ok1 || !ok2 || on.Spec.Unschedulable != nn.Spec.Unschedulable || !labels.Equals(on.Labels, nn.Labels) ||
		!equalJSON(on.Spec.Taints, nn.Spec.Taints) || !equalJSON(on.Status.Allocatable, nn.Status.Allocatable) ||
		readyOf(on) != readyOf(nn) {
		c.Kick()
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func readyOf(n *v1.Node) v1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status
		}
	}
	return v1.ConditionUnknown
}

// Start starts the informers and the event sink; Run calls it.
func (c *Controller) Start(ctx context.Context) error {
	c.startOnce.Do(func() { c.startErr = c.start(ctx) })
	return c.startErr
}

func (c *Controller) start(ctx context.Context) error {
	c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
	c.factory.Start(ctx.Done())
	c.cmFactory.Start(ctx.Done())
	go c.podFactory.Informer().RunWithContext(ctx)
	if c.dynFac != nil {
		c.dynFac.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return ctx.Err()
	}
	c.ready.Store(true)
	return nil
}

// Ready reports whether the informers have synced.
func (c *Controller) Ready() bool { return c.ready.Load() }

// Run schedules until ctx ends: a pass on every relevant event (bursts
// coalesced) and at each decision's NextWake.
func (c *Controller) Run(ctx context.Context) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	defer c.broadcaster.Shutdown()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	c.Kick()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.kick:
		case <-timer.C:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.opts.Coalesce):
		}
		select {
		case <-c.kick:
		default:
		}
		wake := c.Pass(ctx)
		timer.Stop()
		if !wake.IsZero() {
			timer.Reset(max(wake.Sub(c.opts.Clock()), time.Millisecond))
		}
	}
}

// config returns the configuration, re-reading the ConfigMap when it
// changed. A ConfigMap that does not parse keeps the last good one, with
// an event and an annotation on the ConfigMap naming the problem.
func (c *Controller) config(ctx context.Context) *adapter.Config {
	cm, err := c.cms.ConfigMaps(c.opts.ConfigMapNamespace).Get(c.opts.ConfigMapName)
	if err != nil {
		if c.cfgLoaded {
			c.cfg, c.cfgRV, c.cfgErr, c.cfgLoaded = adapter.DefaultConfig(), "", "", false
			c.m.ConfigValid.Set(1)
		}
		return c.cfg
	}
	if c.cfgLoaded && cm.ResourceVersion == c.cfgRV {
		return c.cfg
	}
	c.cfgRV, c.cfgLoaded = cm.ResourceVersion, true
	cfg, perr := adapter.ParseConfig(cm.Data)
	msg := ""
	if perr != nil {
		msg = perr.Error()
		c.m.ConfigValid.Set(0)
		c.log.Error("ConfigMap does not parse; keeping the last good configuration", "configmap", cm.Namespace+"/"+cm.Name, "error", msg)
		c.recorder.Eventf(cm, v1.EventTypeWarning, "BadConfig", "%s; gpusched keeps its last good configuration", msg)
	} else {
		c.cfg = cfg
		c.m.ConfigValid.Set(1)
		c.log.Info("configuration loaded", "configmap", cm.Namespace+"/"+cm.Name)
	}
	if cm.Annotations[AnnotationConfigError] != msg {
		var val any = msg
		if msg == "" {
			val = nil
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationConfigError: val}}})
		if _, err := c.client.CoreV1().ConfigMaps(cm.Namespace).Patch(ctx, cm.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			c.log.Warn("cannot annotate the ConfigMap", "error", err)
		}
	}
	c.cfgErr = msg
	return c.cfg
}

// podGroups reads the PodGroups' minMember.
func (c *Controller) podGroups() map[string]int {
	out := map[string]int{}
	if c.pgs == nil {
		return out
	}
	objs, err := c.pgs.List(labels.Everything())
	if err != nil {
		return out
	}
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		n, found, err := unstructured.NestedInt64(u.Object, "spec", "minMember")
		if err != nil || !found {
			n = 1
		}
		out[u.GetNamespace()+"/"+u.GetName()] = int(n)
	}
	return out
}

// Pass runs one scheduling pass and returns when to run the next one
// without an event (zero: no need).
func (c *Controller) Pass(ctx context.Context) time.Time {
	start := time.Now()
	now := c.opts.Clock()
	cfg := c.config(ctx)
	pods, _ := c.pods.List(labels.Everything())
	nodes, _ := c.nodes.List(labels.Everything())
	c.forget(pods)
	usage := c.usage(cfg, now)
	res := adapter.Build(&adapter.Input{Now: now, Config: cfg, SchedulerName: c.opts.SchedulerName, Nodes: nodes, Pods: pods,
		PodGroups: c.podGroups(), Assumed: c.assumed, Evicted: c.evicted, Usage: usage})
	c.countRunning(res)
	res.Snapshot.Plan = c.plan
	d, err := scheduler.New(cfg.Policy).Step(&res.Snapshot)
	if err != nil && c.plan != nil {
		c.log.Warn("Step refused the plan; planning from scratch", "error", err)
		res.Snapshot.Plan = nil
		d, err = scheduler.New(cfg.Policy).Step(&res.Snapshot)
	}
	if err != nil {
		c.log.Error("Step refused the snapshot", "error", err)
		c.plan = nil
		return time.Time{}
	}
	acts, err := Translate(res, d)
	c.m.StepSeconds.Observe(time.Since(start).Seconds())
	c.m.StepsRun.Inc()
	if err != nil {
		c.log.Error("cannot apply the decision", "error", err)
		return time.Time{}
	}
	c.plan = d.Reservations
	c.log.Debug("pass", "nodes", len(res.Snapshot.Cluster.Nodes), "jobs", len(res.Snapshot.Jobs), "placements", len(d.Placements),
		"evictions", len(d.Evictions), "reservations", len(d.Reservations), "pending", len(d.Pending), "took", time.Since(start))
	c.apply(ctx, now, res, d, acts)
	return d.NextWake
}

// forget drops assumed bindings and evictions the informer now shows.
func (c *Controller) forget(pods []*v1.Pod) {
	byUID := make(map[types.UID]*v1.Pod, len(pods))
	for _, p := range pods {
		byUID[p.UID] = p
	}
	for uid := range c.assumed {
		if p, ok := byUID[uid]; !ok || p.Spec.NodeName != "" {
			delete(c.assumed, uid)
		}
	}
	for uid := range c.evicted {
		if p, ok := byUID[uid]; !ok || p.DeletionTimestamp != nil {
			delete(c.evicted, uid)
		}
	}
	for uid := range c.written {
		if p, ok := byUID[uid]; !ok || p.Spec.NodeName != "" {
			delete(c.written, uid)
		}
	}
	for uid := range c.warned {
		if _, ok := byUID[uid]; !ok {
			delete(c.warned, uid)
		}
	}
}

// usage charges the GPUs held since the last pass to their teams and
// returns each team's decayed usage.
func (c *Controller) usage(cfg *adapter.Config, now time.Time) map[string]float64 {
	h := cfg.Policy.FairShare.HalfLife
	if h <= 0 {
		h = 7 * 24 * time.Hour
	}
	if c.ledger == nil || c.ledger.HalfLife() != h {
		c.ledger = fairshare.NewLedger(h)
		c.lastUsage = now
	}
	if dt := now.Sub(c.lastUsage).Seconds(); dt > 0 {
		for team, g := range c.running {
			_ = c.ledger.Add(team, float64(g)*dt, now)
		}
		c.lastUsage = now
	}
	return c.ledger.OwnUsage(now)
}

func (c *Controller) countRunning(res *adapter.Result) {
	clear(c.running)
	for _, j := range res.Snapshot.Jobs {
		if j.State != scheduler.Pending && j.Team != "" {
			c.running[j.Team] += j.Allocation.Count()
		}
	}
}

// apply carries out the actions, Workers calls at a time, and returns
// when all are done.
func (c *Controller) apply(ctx context.Context, now time.Time, res *adapter.Result, d *scheduler.Decision, a Actions) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, c.opts.Workers)
	run := func(f func()) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f()
		}()
	}

	for _, p := range d.Placements {
		if at, ok := c.promises[p.Job]; ok {
			if now.After(at) {
				c.m.Promises.WithLabelValues("late").Inc()
			} else {
				c.m.Promises.WithLabelValues("kept").Inc()
			}
			delete(c.promises, p.Job)
		}
	}
	for _, r := range d.Reservations {
		c.promises[r.Job] = r.Start
	}
	for id := range c.promises {
		if _, ok := res.Jobs[id]; !ok {
			delete(c.promises, id)
		}
	}

	// Evictions.
	for _, e := range a.Evicts {
		c.evicted[e.Pod.UID] = now
		run(func() { c.evict(ctx, e) })
	}

	// Bindings: assumed before the call, forgotten if it fails.
	type result struct {
		b   Bind
		err error
	}
	results := make([]result, len(a.Binds))
	for i, b := range a.Binds {
		c.assumed[b.Pod.UID] = b.Node
		run(func() { results[i] = result{b, c.bind(ctx, b)} })
	}

	// Conditions.
	pending := map[string]float64{}
	for _, s := range a.Statuses {
		pending[s.Code]++
		w, ok := c.written[s.Pod.UID]
		if !ok {
			w = currentCondition(s.Pod)
		}
		if w.reason == s.Reason && w.message == s.Message {
			continue
		}
		sameReason := w.reason == s.Reason && strings.SplitN(w.message, ":", 2)[0] == strings.SplitN(s.Message, ":", 2)[0]
		if ok && sameReason && now.Sub(w.at) < c.opts.MessageRefresh {
			continue
		}
		c.written[s.Pod.UID] = written{s.Reason, s.Message, now}
		if !sameReason {
			typ := v1.EventTypeNormal
			if s.Warning {
				typ = v1.EventTypeWarning
			}
			c.recorder.Event(s.Pod, typ, eventReason(s), s.Message)
		}
		run(func() { c.writeCondition(ctx, s, now) })
	}
	c.m.Pending.Reset()
	for code, n := range pending {
		c.m.Pending.WithLabelValues(code).Set(n)
	}
	for _, p := range a.Ignored {
		if c.warned[p.Pod.UID] == p.Message {
			continue
		}
		c.warned[p.Pod.UID] = p.Message
		c.recorder.Event(p.Pod, v1.EventTypeWarning, p.Reason, p.Message)
	}
	wg.Wait()

	// Report gangs whose binding failed midway.
	failed := map[string][]result{}
	ok := map[string]int{}
	for _, r := range results {
		if r.err != nil {
			delete(c.assumed, r.b.Pod.UID)
			failed[r.b.Job] = append(failed[r.b.Job], r)
		} else {
			ok[r.b.Job]++
		}
	}
	jobs := make([]string, 0, len(failed))
	for j := range failed {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	for _, j := range jobs {
		rs := failed[j]
		jp := res.Jobs[j]
		msg := fmt.Sprintf("binding failed for %d of %d members (first: pod %s: %v); %d bound keep their nodes, the rest waits for the next pass",
			len(rs), len(jp.Pods), rs[0].b.Pod.Name, rs[0].err, ok[j])
		c.log.Warn("binding failed", "job", j, "failed", len(rs), "bound", ok[j], "error", rs[0].err)
		for _, r := range rs {
			c.recorder.Event(r.b.Pod, v1.EventTypeWarning, "BindFailed", msg)
		}
		c.Kick()
	}
}

func eventReason(s Status) string {
	if s.Reason != ReasonUnschedulable {
		return s.Reason
	}
	if s.Code == "reserved" {
		return "Reserved"
	}
	return "FailedScheduling"
}

// currentCondition is the pod's PodScheduled condition as the API shows it.
func currentCondition(p *v1.Pod) written {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return written{reason: c.Reason, message: c.Message, at: c.LastTransitionTime.Time}
		}
	}
	return written{}
}

func (c *Controller) bind(ctx context.Context, b Bind) error {
	err := c.client.CoreV1().Pods(b.Pod.Namespace).Bind(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: b.Pod.Namespace, Name: b.Pod.Name, UID: b.Pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: b.Node},
	}, metav1.CreateOptions{})
	if err != nil {
		c.m.BindErrors.Inc()
		return err
	}
	c.m.PodsBound.Inc()
	c.recorder.Eventf(b.Pod, v1.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", b.Pod.Namespace, b.Pod.Name, b.Node)
	return nil
}

func (c *Controller) evict(ctx context.Context, e Evict) {
	g := int64(e.Grace / time.Second)
	err := c.client.PolicyV1().Evictions(e.Pod.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: e.Pod.Namespace, Name: e.Pod.Name},
		DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: &g, Preconditions: &metav1.Preconditions{UID: &e.Pod.UID}},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		c.log.Warn("eviction refused", "pod", adapter.PodKey(e.Pod), "reason", e.Reason, "error", err)
		c.recorder.Eventf(e.Pod, v1.EventTypeWarning, "EvictionFailed", "gpusched could not evict the pod (%s): %v", e.Reason, err)
		c.Kick()
		return
	}
	c.m.Evictions.WithLabelValues(string(e.Reason)).Inc()
	msg := fmt.Sprintf("evicted by gpusched: %s, grace %s", e.Reason, e.Grace)
	if e.By != "" {
		msg = fmt.Sprintf("evicted by gpusched: preempted by %s, grace %s", e.By, e.Grace)
	}
	c.recorder.Event(e.Pod, v1.EventTypeNormal, "Preempted", msg)
}

func (c *Controller) writeCondition(ctx context.Context, s Status, now time.Time) {
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []map[string]any{{
		"type": string(v1.PodScheduled), "status": string(v1.ConditionFalse), "reason": s.Reason, "message": s.Message,
		"lastTransitionTime": metav1.NewTime(now).Rfc3339Copy(), "lastProbeTime": nil,
	}}}})
	_, err := c.client.CoreV1().Pods(s.Pod.Namespace).Patch(ctx, s.Pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		c.log.Warn("cannot write PodScheduled", "pod", adapter.PodKey(s.Pod), "error", err)
		return
	}
	c.m.StatusWrites.Inc()
}

// podInformer is the pods' informer.
type podInformer interface {
	Informer() cache.SharedIndexInformer
	Lister() corelisters.PodLister
}
