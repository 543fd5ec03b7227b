package adapter

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Problem reasons: the Reason of a pod's PodScheduled condition and of
// its event when the adapter cannot hand the pod to the scheduler.
const (
	ReasonBadGangLabel   = "BadGangLabel"
	ReasonGangMismatch   = "GangMembersDisagree"
	ReasonGangIncomplete = "GangIncomplete"
	ReasonNoGPURequest   = "NoGPURequest"
	ReasonBadAnnotation  = "BadAnnotation"
	ReasonTooManyGPUs    = "TooManyGPUs"
	ReasonIgnoredFields  = "IgnoredFields"
)

// Input is what the adapter reads: the API objects the informers hold,
// plus the host's own memory of actions the informers have not shown yet.
type Input struct {
	// Now is the snapshot's time.
	Now time.Time
	// Config is the parsed ConfigMap (DefaultConfig when there is none).
	Config *Config
	// SchedulerName is the spec.schedulerName of the pods to schedule.
	SchedulerName string
	// Nodes are all nodes; nodes without the GPU resource are left out
	// of the cluster.
	Nodes []*v1.Node
	// Pods are all pods that have not ended (phase neither Succeeded nor
	// Failed), bound or not, of any scheduler.
	Pods []*v1.Pod
	// PodGroups maps "namespace/name" of each PodGroup to its minMember.
	PodGroups map[string]int
	// Assumed maps pods the host has bound to their node, until the
	// informer shows them bound.
	Assumed map[types.UID]string
	// Evicted maps pods the host has evicted to when it asked, until the
	// informer shows them deleting or gone.
	Evicted map[types.UID]time.Time
	// Usage is each team's own decayed usage in GPU-seconds as of Now.
	Usage map[string]float64
}

// Problem is a pod the adapter has something to say about.
type Problem struct {
	Pod     *v1.Pod
	Reason  string
	Message string
}

// JobPods are the pods behind one job of the snapshot.
type JobPods struct {
	// Pods are the members, in name order: for a pending job the pods to
	// bind, for a running or evicting job the bound pods.
	Pods []*v1.Pod
	// GPUsPerMember is each member's GPU count.
	GPUsPerMember int
	// Gang is the gang's name, "namespace/name", or empty for a lone pod.
	Gang string
	// BoundMembers, for a pending job that is the rest of a gang some of
	// whose members are already bound, counts those.
	BoundMembers int
}

// Result is the snapshot and the map back to pods.
type Result struct {
	Snapshot scheduler.Snapshot
	// Jobs maps each job ID of the snapshot to its pods.
	Jobs map[string]*JobPods
	// Problems are pods not handed to the scheduler, and why (bad input
	// or an incomplete gang).
	Problems []Problem
	// Ignored are pods handed to the scheduler whose spec asks for
	// placement rules gpusched does not model.
	Ignored []Problem
}

// PodKey is "namespace/name".
func PodKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// GangJobID is the job ID of the gang name in namespace ns.
func GangJobID(ns, name string) string { return ns + "/gang:" + name }

// member is one pod with what the adapter computed about it.
type member struct {
	pod       *v1.Pod
	gpus      int
	cpuMillis int
	memoryMiB int
	node      string // bound node, or ""
}

// shape is what members of one gang must agree on.
func (m *member) shape() string {
	return fmt.Sprintf("%d GPUs, %dm CPU, %d MiB", m.gpus, m.cpuMillis, m.memoryMiB)
}

// Build maps the API objects to a snapshot. It never fails: what it
// cannot map becomes a Problem, and the rest is scheduled.
func Build(in *Input) *Result {
	cfg := in.Config
	if cfg == nil {
		cfg = DefaultConfig()
	}
	b := &builder{in: in, cfg: cfg, gpuRes: v1.ResourceName(cfg.GPUResource),
		res: &Result{Jobs: map[string]*JobPods{}}, nodeIdx: map[string]int{}}
	b.nodes()
	b.pods()
	b.finishNodes()
	b.teams()
	s := &b.res.Snapshot
	s.Now = in.Now
	for _, l := range cfg.Levels {
		s.Cluster.Levels = append(s.Cluster.Levels, l.Name)
	}
	slices.SortFunc(s.Jobs, func(a, b scheduler.Job) int { return cmp.Compare(a.ID, b.ID) })
	sortProblems(b.res.Problems)
	sortProblems(b.res.Ignored)
	return b.res
}

func sortProblems(ps []Problem) {
	slices.SortFunc(ps, func(a, b Problem) int { return cmp.Compare(PodKey(a.Pod), PodKey(b.Pod)) })
}

type builder struct {
	in     *Input
	cfg    *Config
	gpuRes v1.ResourceName
	res    *Result

	nodeObjs []*v1.Node
	nodeIdx  map[string]int
	used     []int // GPUs held per node, by running jobs so far
	cpuUsed  []int64
	memUsed  []int64
	eligible map[string][]string // placement key -> eligible nodes (nil: all)
}

// nodes maps the nodes that have GPUs.
func (b *builder) nodes() {
	nodes := slices.Clone(b.in.Nodes)
	slices.SortFunc(nodes, func(x, y *v1.Node) int { return cmp.Compare(x.Name, y.Name) })
	for _, n := range nodes {
		q, ok := n.Status.Allocatable[b.gpuRes]
		if !ok || q.Value() < 1 {
			continue
		}
		g := int(min(q.Value(), topology.MaxGPUsPerNode))
		tn := topology.Node{Name: n.Name, GPUs: g, GPUType: n.Labels[b.cfg.GPUTypeLabel]}
		if len(b.cfg.Levels) > 0 {
			tn.Domains = make(map[string]string, len(b.cfg.Levels))
			for _, l := range b.cfg.Levels {
				d := n.Labels[l.Label]
				if d == "" {
					// A node without the label is a domain of its own:
					// never assumed close to another.
					d = "node:" + n.Name
				}
				tn.Domains[l.Name] = d
			}
		}
		switch {
		case !nodeReady(n):
			tn.State = topology.Down
		case n.Spec.Unschedulable:
			tn.State = topology.Draining
		}
		if c, ok := n.Status.Allocatable[v1.ResourceCPU]; ok {
			tn.CPUMillis = int(c.MilliValue())
		}
		if m, ok := n.Status.Allocatable[v1.ResourceMemory]; ok {
			tn.MemoryMiB = int(m.Value() >> 20)
		}
		b.nodeIdx[n.Name] = len(b.res.Snapshot.Cluster.Nodes)
		b.res.Snapshot.Cluster.Nodes = append(b.res.Snapshot.Cluster.Nodes, tn)
		b.nodeObjs = append(b.nodeObjs, n)
	}
	b.used = make([]int, len(b.nodeObjs))
	b.cpuUsed = make([]int64, len(b.nodeObjs))
	b.memUsed = make([]int64, len(b.nodeObjs))
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// finishNodes takes the CPU and memory of pods without GPUs off the
// nodes, and widens a node whose running jobs hold more GPUs than it
// has allocatable (GPUs gone unhealthy under running pods) by marking the
// extra indices unhealthy, so that counts stay exact.
func (b *builder) finishNodes() {
	for i := range b.res.Snapshot.Cluster.Nodes {
		tn := &b.res.Snapshot.Cluster.Nodes[i]
		if u := b.used[i]; u > tn.GPUs {
			for g := tn.GPUs; g < u; g++ {
				tn.Unhealthy = append(tn.Unhealthy, g)
			}
			tn.GPUs = u
		}
		if tn.CPUMillis > 0 {
			tn.CPUMillis = max(1, tn.CPUMillis-int(b.cpuUsed[i]))
		}
		if tn.MemoryMiB > 0 {
			tn.MemoryMiB = max(1, tn.MemoryMiB-int(b.memUsed[i]>>20))
		}
	}
}

// teams lists the configured teams and any other team with usage.
func (b *builder) teams() {
	seen := map[string]bool{}
	for _, t := range b.cfg.Teams {
		seen[t.Name] = true
		b.res.Snapshot.Teams = append(b.res.Snapshot.Teams, scheduler.Team{
			Name: t.Name, Parent: t.Parent, Share: t.Share, Quota: t.Quota, Usage: b.in.Usage[t.Name]})
	}
	var extra []string
	for name, u := range b.in.Usage {
		if !seen[name] && u > 0 {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		b.res.Snapshot.Teams = append(b.res.Snapshot.Teams, scheduler.Team{Name: name, Share: 1, Usage: b.in.Usage[name]})
	}
}

// gangOf returns the gang name and size of a pod ("" for a lone pod), or
// a problem.
func (b *builder) gangOf(p *v1.Pod) (name string, size int, waiting string, bad string) {
	if g := p.Labels[LabelPodGroup]; g != "" {
		n, ok := b.in.PodGroups[p.Namespace+"/"+g]
		if !ok {
			return g, 0, fmt.Sprintf("pod group %s/%s does not exist (yet)", p.Namespace, g), ""
		}
		if n < 1 {
			n = 1
		}
		return g, n, "", ""
	}
	g, hasGang := p.Labels[LabelGang]
	s, hasSize := p.Labels[LabelGangSize]
	switch {
	case !hasGang && !hasSize:
		return "", 1, "", ""
	case !hasGang || g == "":
		return "", 0, "", fmt.Sprintf("label %s=%q without a gang name in label %s", LabelGangSize, s, LabelGang)
	case !hasSize:
		return "", 0, "", fmt.Sprintf("label %s=%q without label %s", LabelGang, g, LabelGangSize)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1<<20 {
		return "", 0, "", fmt.Sprintf("label %s=%q: want a whole number from 1 to 1048576", LabelGangSize, s)
	}
	return g, n, "", ""
}

// requests computes a pod's requests as Kubernetes does.
func (b *builder) requests(p *v1.Pod) (gpus int, cpuMillis, memBytes int64) {
	r := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	if q, ok := r[b.gpuRes]; ok {
		gpus = int(q.Value())
	}
	if q, ok := r[v1.ResourceCPU]; ok {
		cpuMillis = q.MilliValue()
	}
	if q, ok := r[v1.ResourceMemory]; ok {
		memBytes = q.Value()
	}
	return
}

type gangPods struct {
	name    string // namespace/name
	size    int
	sizes   map[int]bool
	pending []*member
	bound   []*member
	waiting string
}

// pods sorts the pods into running jobs, pending jobs and problems.
func (b *builder) pods() {
	pods := slices.Clone(b.in.Pods)
	slices.SortFunc(pods, func(x, y *v1.Pod) int { return cmp.Compare(PodKey(x), PodKey(y)) })
	gangs := map[string]*gangPods{}
	var gangOrder []string
	var lonePending, loneBound []*member
	for _, p := range pods {
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		node := p.Spec.NodeName
		if node == "" {
			node = b.in.Assumed[p.UID]
		}
		gpus, cpu, mem := b.requests(p)
		if node != "" {
			i, ok := b.nodeIdx[node]
			if !ok {
				continue // a node without GPUs: nothing of ours
			}
			if gpus <= 0 {
				b.cpuUsed[i] += cpu
				b.memUsed[i] += mem
				continue
			}
		} else if p.Spec.SchedulerName != b.in.SchedulerName || p.DeletionTimestamp != nil || len(p.Spec.SchedulingGates) > 0 {
			continue // not ours, leaving, or gated: not ready to be scheduled
		}
		m := &member{pod: p, gpus: gpus, cpuMillis: int(cpu), memoryMiB: int((mem + 1<<20 - 1) >> 20), node: node}
		if node == "" {
			switch {
			case gpus <= 0:
				b.problem(p, ReasonNoGPURequest, fmt.Sprintf("the pod requests no %s; gpusched schedules only pods that do", b.gpuRes))
				continue
			case gpus > topology.MaxGPUsPerNode:
				b.problem(p, ReasonTooManyGPUs, fmt.Sprintf("the pod requests %d %s; a node has at most %d", gpus, b.gpuRes, topology.MaxGPUsPerNode))
				continue
			}
		}
		name, size, waiting, bad := b.gangOf(p)
		if bad != "" {
			if node == "" {
				b.problem(p, ReasonBadGangLabel, bad)
			} else {
				loneBound = append(loneBound, m)
			}
			continue
		}
		if name == "" {
			if node == "" {
				lonePending = append(lonePending, m)
			} else {
				loneBound = append(loneBound, m)
			}
			continue
		}
		key := p.Namespace + "/" + name
		g := gangs[key]
		if g == nil {
			g = &gangPods{name: key, sizes: map[int]bool{}}
			gangs[key] = g
			gangOrder = append(gangOrder, key)
		}
		if waiting != "" {
			g.waiting = waiting
		}
		if size > 0 {
			g.sizes[size] = true
			g.size = max(g.size, size)
		}
		if node == "" {
			g.pending = append(g.pending, m)
		} else {
			g.bound = append(g.bound, m)
		}
	}
	for _, m := range loneBound {
		b.running(PodKey(m.pod), "", []*member{m})
	}
	for _, key := range gangOrder {
		b.gang(gangs[key])
	}
	for _, m := range lonePending {
		b.pending(PodKey(m.pod), "", []*member{m}, 0)
	}
}

// gang maps one gang's members.
func (b *builder) gang(g *gangPods) {
	ns, name, _ := strings.Cut(g.name, "/")
	id := GangJobID(ns, name)
	all := append(slices.Clone(g.bound), g.pending...)
	shapes := map[string]string{}
	for _, m := range all {
		if _, ok := shapes[m.shape()]; !ok {
			shapes[m.shape()] = m.pod.Name
		}
	}
	if len(shapes) > 1 || len(g.sizes) > 1 {
		var msg string
		if len(shapes) > 1 {
			var parts []string
			for s, pod := range shapes {
				parts = append(parts, fmt.Sprintf("pod %s asks %s", pod, s))
			}
			slices.Sort(parts)
			msg = fmt.Sprintf("gang %s: members disagree on requests: %s", g.name, strings.Join(parts, "; "))
		} else {
			var sizes []string
			for s := range g.sizes {
				sizes = append(sizes, strconv.Itoa(s))
			}
			slices.Sort(sizes)
			msg = fmt.Sprintf("gang %s: members disagree on label %s: %s", g.name, LabelGangSize, strings.Join(sizes, ", "))
		}
		for _, m := range g.pending {
			b.problem(m.pod, ReasonGangMismatch, msg)
		}
		for _, m := range g.bound {
			b.running(PodKey(m.pod), "", []*member{m})
		}
		return
	}
	if len(g.bound) > 0 {
		rid := id
		if len(g.pending) > 0 {
			rid = id + "#bound"
		}
		b.running(rid, g.name, g.bound)
	}
	if len(g.pending) == 0 {
		return
	}
	if g.waiting == "" && len(all) < g.size {
		g.waiting = fmt.Sprintf("gang %s has %d of its %d members", g.name, len(all), g.size)
	}
	if g.waiting != "" {
		for _, m := range g.pending {
			b.problem(m.pod, ReasonGangIncomplete, g.waiting)
		}
		return
	}
	b.pending(id, g.name, g.pending, len(g.bound))
}

func (b *builder) problem(p *v1.Pod, reason, msg string) {
	b.res.Problems = append(b.res.Problems, Problem{Pod: p, Reason: reason, Message: msg})
}

// common fills what pending and running jobs share, from the first member.
func (b *builder) common(j *scheduler.Job, ms []*member) error {
	p := ms[0].pod
	j.Members = len(ms)
	j.GPUsPerMember = ms[0].gpus
	j.CPUMillis = ms[0].cpuMillis
	j.MemoryMiB = ms[0].memoryMiB
	j.Team = p.Namespace
	if b.cfg.TeamLabel != "" {
		if t := p.Labels[b.cfg.TeamLabel]; t != "" {
			j.Team = t
		}
	}
	if t, ok := b.cfg.Tiers[p.Spec.PriorityClassName]; ok {
		j.Tier = scheduler.TierN(t)
	} else if b.cfg.DefaultTier != nil && *b.cfg.DefaultTier >= 0 {
		j.Tier = scheduler.TierN(*b.cfg.DefaultTier)
	}
	j.Submitted = p.CreationTimestamp.Time
	for _, m := range ms {
		if t := m.pod.CreationTimestamp.Time; t.Before(j.Submitted) {
			j.Submitted = t
		}
	}
	j.CheckpointGrace = 30 * time.Second
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
		j.CheckpointGrace = time.Duration(*g) * time.Second
	}
	if s := p.Annotations[AnnotationTimeLimit]; s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("annotation %s=%q: want a positive Go duration such as \"12h\"", AnnotationTimeLimit, s)
		}
		j.TimeLimit = d
	} else if a := p.Spec.ActiveDeadlineSeconds; a != nil && *a > 0 {
		j.TimeLimit = time.Duration(*a) * time.Second
	}
	if j.TimeLimit == 0 {
		j.Kind = scheduler.Inference
	}
	return nil
}

// running adds a running (or evicting) job of bound members.
func (b *builder) running(id, gang string, ms []*member) {
	j := scheduler.Job{ID: id, State: scheduler.Running}
	_ = b.common(&j, ms) // a bad time limit on a bound pod: it runs without one
	if j.TimeLimit == 0 {
		j.Kind = scheduler.Inference
	}
	alloc := map[string][]int{}
	for _, m := range ms {
		p := m.pod
		if t := p.Status.StartTime; t != nil && (j.Started.IsZero() || t.Time.Before(j.Started)) {
			j.Started = t.Time
		}
		if p.DeletionTimestamp != nil {
			j.State = scheduler.Evicting
			at := p.DeletionTimestamp.Time
			if g := p.DeletionGracePeriodSeconds; g != nil {
				at = at.Add(-time.Duration(*g) * time.Second)
				j.CheckpointGrace = time.Duration(*g) * time.Second
			}
			if j.EvictedAt.IsZero() || at.Before(j.EvictedAt) {
				j.EvictedAt = at
			}
		} else if at, ok := b.in.Evicted[p.UID]; ok {
			j.State = scheduler.Evicting
			if j.EvictedAt.IsZero() || at.Before(j.EvictedAt) {
				j.EvictedAt = at
			}
		}
		i := b.nodeIdx[m.node]
		for k := 0; k < m.gpus; k++ {
			alloc[m.node] = append(alloc[m.node], b.used[i]+k)
		}
		b.used[i] += m.gpus
	}
	for _, n := range slices.Sorted(mapsKeys(alloc)) {
		j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: n, GPUs: alloc[n]})
	}
	pods := make([]*v1.Pod, len(ms))
	for i, m := range ms {
		pods[i] = m.pod
	}
	b.res.Jobs[id] = &JobPods{Pods: pods, GPUsPerMember: j.GPUsPerMember, Gang: gang}
	b.res.Snapshot.Jobs = append(b.res.Snapshot.Jobs, j)
}

func mapsKeys(m map[string][]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// pending adds a pending job of unbound members.
func (b *builder) pending(id, gang string, ms []*member, boundMembers int) {
	j := scheduler.Job{ID: id}
	if err := b.common(&j, ms); err != nil {
		for _, m := range ms {
			b.problem(m.pod, ReasonBadAnnotation, err.Error())
		}
		return
	}
	p := ms[0].pod
	levels := map[string]bool{}
	for _, l := range b.cfg.Levels {
		levels[l.Name] = true
	}
	for _, a := range []struct {
		key string
		dst *string
	}{{AnnotationTopologyRequired, &j.Topology.Required}, {AnnotationTopologyPreferred, &j.Topology.Preferred}} {
		if v := p.Annotations[a.key]; v != "" {
			if !levels[v] {
				for _, m := range ms {
					b.problem(m.pod, ReasonBadAnnotation, fmt.Sprintf("annotation %s=%q: not a topology level of the scheduler's configuration", a.key, v))
				}
				return
			}
			*a.dst = v
		}
	}
	switch v := p.Annotations[AnnotationPlacement]; v {
	case "", "pack":
	case "spread":
		j.Placement = scheduler.Spread
	default:
		for _, m := range ms {
			b.problem(m.pod, ReasonBadAnnotation, fmt.Sprintf("annotation %s=%q: want pack or spread", AnnotationPlacement, v))
		}
		return
	}
	j.Group = p.Annotations[AnnotationGroup]
	if j.Group != "" {
		j.Group = p.Namespace + "/" + j.Group
	}
	var elig []string
	all := true
	for _, m := range ms {
		e := b.eligibleNodes(m.pod)
		switch {
		case e == nil:
		case all:
			elig, all = e, false
		default:
			elig = intersect(elig, e)
		}
	}
	if !all {
		j.EligibleNodes = elig
		if j.EligibleNodes == nil {
			j.EligibleNodes = []string{}
		}
	}
	for _, m := range ms {
		if msg := ignoredFields(m.pod); msg != "" {
			b.res.Ignored = append(b.res.Ignored, Problem{Pod: m.pod, Reason: ReasonIgnoredFields, Message: msg})
		}
	}
	pods := make([]*v1.Pod, len(ms))
	for i, m := range ms {
		pods[i] = m.pod
	}
	b.res.Jobs[id] = &JobPods{Pods: pods, GPUsPerMember: j.GPUsPerMember, Gang: gang, BoundMembers: boundMembers}
	b.res.Snapshot.Jobs = append(b.res.Snapshot.Jobs, j)
}

func intersect(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			out = append(out, x)
		}
	}
	return out
}

// ignoredFields names what of a pod's spec gpusched does not model.
func ignoredFields(p *v1.Pod) string {
	var f []string
	if a := p.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			f = append(f, "spec.affinity.podAffinity")
		}
		if a.PodAntiAffinity != nil {
			f = append(f, "spec.affinity.podAntiAffinity")
		}
		if na := a.NodeAffinity; na != nil && len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			f = append(f, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution")
		}
	}
	if len(p.Spec.TopologySpreadConstraints) > 0 {
		f = append(f, "spec.topologySpreadConstraints")
	}
	if len(f) == 0 {
		return ""
	}
	return "gpusched ignores " + strings.Join(f, ", ") + "; it honours nodeSelector, required node affinity and tolerations"
}

// managedTaints are taints that stand for node states gpusched models
// itself (draining, down): they do not make a node ineligible, so that
// a pod waiting for such a node is told it waits for it.
var managedTaints = map[string]bool{
	v1.TaintNodeUnschedulable: true,
	v1.TaintNodeNotReady:      true,
	v1.TaintNodeUnreachable:   true,
}

// placementKey is what decides a pod's eligible nodes.
func placementKey(p *v1.Pod) string {
	var req *v1.NodeSelector
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		req = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	k, _ := json.Marshal(struct {
		S map[string]string
		A *v1.NodeSelector
		T []v1.Toleration
	}{p.Spec.NodeSelector, req, p.Spec.Tolerations})
	return string(k)
}

// eligibleNodes evaluates a pod's nodeSelector, required node affinity
// and tolerations against the GPU nodes with the Kubernetes helpers; nil
// means every node. Pods that share those fields share the answer.
func (b *builder) eligibleNodes(p *v1.Pod) []string {
	key := placementKey(p)
	if e, ok := b.eligible[key]; ok {
		return e
	}
	if b.eligible == nil {
		b.eligible = map[string][]string{}
	}
	aff := nodeaffinity.GetRequiredNodeAffinity(p)
	logger := klog.Background()
	filter := func(t *v1.Taint) bool {
		return (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) && !managedTaints[t.Key]
	}
	var out []string
	for _, n := range b.nodeObjs {
		if ok, err := aff.Match(n); err != nil || !ok {
			continue
		}
		if _, bad := corev1helpers.FindMatchingUntoleratedTaint(logger, n.Spec.Taints, p.Spec.Tolerations, filter, false); bad {
			continue
		}
		out = append(out, n.Name)
	}
	if len(out) == len(b.nodeObjs) {
		out = nil
	} else if out == nil {
		out = []string{}
	}
	b.eligible[key] = out
	return out
}
