package adapter

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func job(t *testing.T, r *Result, id string) scheduler.Job {
	t.Helper()
	for _, j := range r.Snapshot.Jobs {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("no job %q among %v", id, jobIDs(r))
	return scheduler.Job{}
}

func jobIDs(r *Result) []string {
	var ids []string
	for _, j := range r.Snapshot.Jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func mustValid(t *testing.T, r *Result) {
	t.Helper()
	if err := scheduler.Validate(&r.Snapshot); err != nil {
		t.Fatalf("snapshot invalid: %v", err)
	}
}

func TestNodesMapping(t *testing.T) {
	a := gpuNode("a", 8, map[string]string{DefaultGPUTypeLabel: "H100", DefaultCliqueLabel: "c1", DefaultZoneLabel: "z1"})
	b := gpuNode("b", 4, nil)
	b.Spec.Unschedulable = true
	c := gpuNode("c", 8, nil)
	c.Status.Conditions[0].Status = v1.ConditionFalse
	cpuOnly := gpuNode("cpu", 0, nil)
	delete(cpuOnly.Status.Allocatable, DefaultGPUResource)
	r := Build(input([]*v1.Node{c, cpuOnly, b, a}))
	mustValid(t, r)
	n := r.Snapshot.Cluster.Nodes
	if len(n) != 3 || n[0].Name != "a" || n[1].Name != "b" || n[2].Name != "c" {
		t.Fatalf("nodes %+v, want a, b, c (the node without GPUs left out)", n)
	}
	if n[0].GPUs != 8 || n[0].GPUType != "H100" || n[0].Domains["clique"] != "c1" || n[0].Domains["zone"] != "z1" {
		t.Errorf("node a = %+v", n[0])
	}
	if n[1].Domains["clique"] != "node:b" {
		t.Errorf("unlabelled node b's clique = %q, want a domain of its own", n[1].Domains["clique"])
	}
	if n[0].State != topology.Ready || n[1].State != topology.Draining || n[2].State != topology.Down {
		t.Errorf("states %v %v %v, want ready, draining (cordoned), down (NotReady)", n[0].State, n[1].State, n[2].State)
	}
	if n[0].CPUMillis != 64000 || n[0].MemoryMiB != 512*1024 {
		t.Errorf("cpu %d memory %d", n[0].CPUMillis, n[0].MemoryMiB)
	}
	if !slices.Equal(r.Snapshot.Cluster.Levels, []string{"zone", "clique"}) {
		t.Errorf("levels %v", r.Snapshot.Cluster.Levels)
	}
}

func TestPendingPodUsesKubernetesRequests(t *testing.T) {
	p := gpuPod("team-a", "p", 4)
	// An init container asking more CPU than the app containers: a pod's
	// request is the larger of the two, as Kubernetes computes it.
	p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10")}}}}
	p.Spec.Overhead = v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}
	p.Spec.PriorityClassName = "high"
	grace := int64(300)
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Annotations[AnnotationTimeLimit] = "12h"
	cfg := DefaultConfig()
	cfg.Tiers = map[string]int{"high": 1}
	in := input([]*v1.Node{gpuNode("a", 8, nil)}, p)
	in.Config = cfg
	r := Build(in)
	mustValid(t, r)
	j := job(t, r, "team-a/p")
	if j.GPUsPerMember != 4 || j.Members != 1 || j.CPUMillis != 10000 || j.MemoryMiB != 17*1024 {
		t.Errorf("job %+v: want 4 GPUs, 10 CPUs (init container), 17 GiB (overhead)", j)
	}
	if j.Tier != scheduler.P1 || j.Team != "team-a" || j.TimeLimit != 12*time.Hour || j.CheckpointGrace != 5*time.Minute {
		t.Errorf("tier %v team %q limit %v grace %v", j.Tier, j.Team, j.TimeLimit, j.CheckpointGrace)
	}
	if j.EligibleNodes != nil {
		t.Errorf("eligible %v, want nil (every node)", j.EligibleNodes)
	}
}

func TestTeamLabelAndDefaultTier(t *testing.T) {
	p := gpuPod("ns", "p", 1)
	p.Labels["team"] = "research"
	q := gpuPod("ns", "q", 1)
	q.Spec.ActiveDeadlineSeconds = new(int64(3600))
	cfg := DefaultConfig()
	cfg.TeamLabel = "team"
	cfg.DefaultTier = new(2)
	in := input([]*v1.Node{gpuNode("a", 8, nil)}, p, q)
	in.Config = cfg
	r := Build(in)
	if j := job(t, r, "ns/p"); j.Team != "research" || j.Tier != scheduler.P2 || j.Kind != scheduler.Inference {
		t.Errorf("p: %+v", j)
	}
	if j := job(t, r, "ns/q"); j.Team != "ns" || j.TimeLimit != time.Hour || j.Kind != scheduler.Training {
		t.Errorf("q: %+v", j)
	}
}

func TestBoundPodsAreExactRunningAllocations(t *testing.T) {
	nodes := []*v1.Node{gpuNode("a", 8, nil), gpuNode("b", 8, nil)}
	x := bound(gpuPod("ns", "x", 3), "a")
	x.Spec.SchedulerName = "default-scheduler" // bound by anyone
	y := bound(gpuPod("ns", "y", 5), "a")
	z := gpuPod("ns", "z", 2) // assumed: bound by us, informer not caught up
	web := bound(gpuPod("ns", "web", 0), "b")
	web.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("60")
	done := bound(gpuPod("ns", "done", 8), "b")
	done.Status.Phase = v1.PodSucceeded
	in := input(nodes, x, y, z, web, done)
	in.Assumed = map[types.UID]string{z.UID: "b"}
	r := Build(in)
	mustValid(t, r)
	used := map[string]map[int]bool{}
	for _, j := range r.Snapshot.Jobs {
		if j.State != scheduler.Running {
			t.Errorf("job %s is %v, want running", j.ID, j.State)
		}
		for _, a := range j.Allocation {
			if used[a.Node] == nil {
				used[a.Node] = map[int]bool{}
			}
			for _, g := range a.GPUs {
				if used[a.Node][g] {
					t.Errorf("GPU %s/%d held twice", a.Node, g)
				}
				used[a.Node][g] = true
			}
		}
	}
	if len(used["a"]) != 8 || len(used["b"]) != 2 {
		t.Errorf("held a=%d b=%d, want 8 and 2 (ended pod frees its GPUs)", len(used["a"]), len(used["b"]))
	}
	if n := r.Snapshot.Cluster.Nodes[1]; n.CPUMillis != 4000 {
		t.Errorf("node b CPU %d, want 64-60 = 4 cores left by the pod without GPUs", n.CPUMillis)
	}
	// The scheduler places nothing more on a.
	r.Snapshot.Jobs = append(r.Snapshot.Jobs, scheduler.Job{ID: "new", Members: 1, GPUsPerMember: 1})
	d, err := scheduler.New(scheduler.Config{}).Step(&r.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Placements) != 1 || d.Placements[0].Allocation[0].Node != "b" {
		t.Errorf("placements %+v, want the new job on b", d.Placements)
	}
}

func TestOverusedNodeStaysExact(t *testing.T) {
	// The device plugin lowered allocatable under running pods (a GPU
	// went unhealthy): the pods still hold what they hold, and nothing
	// new fits.
	x := bound(gpuPod("ns", "x", 8), "a")
	r := Build(input([]*v1.Node{gpuNode("a", 7, nil)}, x, gpuPod("ns", "p", 1)))
	mustValid(t, r)
	n := r.Snapshot.Cluster.Nodes[0]
	if n.GPUs != 8 || !slices.Equal(n.Unhealthy, []int{7}) {
		t.Errorf("node %+v, want 8 GPUs with GPU 7 unhealthy", n)
	}
	d, err := scheduler.New(scheduler.Config{}).Step(&r.Snapshot)
	if err != nil || len(d.Placements) != 0 {
		t.Errorf("placements %+v err %v, want none", d.Placements, err)
	}
}

func TestEvictingPods(t *testing.T) {
	x := bound(gpuPod("ns", "x", 8), "a")
	now := metav1.NewTime(t0.Add(time.Minute))
	x.DeletionTimestamp = &now
	x.DeletionGracePeriodSeconds = new(int64(120))
	y := bound(gpuPod("ns", "y", 8), "b")
	in := input([]*v1.Node{gpuNode("a", 8, nil), gpuNode("b", 8, nil)}, x, y)
	in.Evicted = map[types.UID]time.Time{y.UID: t0}
	r := Build(in)
	mustValid(t, r)
	if j := job(t, r, "ns/x"); j.State != scheduler.Evicting || !j.EvictedAt.Equal(t0.Add(-time.Minute)) || j.CheckpointGrace != 2*time.Minute {
		t.Errorf("x: %v at %v grace %v", j.State, j.EvictedAt, j.CheckpointGrace)
	}
	if j := job(t, r, "ns/y"); j.State != scheduler.Evicting || !j.EvictedAt.Equal(t0) {
		t.Errorf("y: %v at %v", j.State, j.EvictedAt)
	}
}

func TestGangFromLabels(t *testing.T) {
	var pods []*v1.Pod
	for _, n := range []string{"g-2", "g-0", "g-1"} {
		pods = append(pods, gangPod("ns", n, "train", 3, 8))
	}
	r := Build(input([]*v1.Node{gpuNode("a", 8, nil)}, pods...))
	mustValid(t, r)
	j := job(t, r, GangJobID("ns", "train"))
	if j.Members != 3 || j.GPUsPerMember != 8 {
		t.Errorf("gang %+v", j)
	}
	jp := r.Jobs[j.ID]
	if jp.Gang != "ns/train" || len(jp.Pods) != 3 || jp.Pods[0].Name != "g-0" || jp.Pods[2].Name != "g-2" {
		t.Errorf("pods %+v", jp)
	}
}

func TestGangFromPodGroup(t *testing.T) {
	a := gpuPod("ns", "a", 4)
	a.Labels[LabelPodGroup] = "pg"
	b := gpuPod("ns", "b", 4)
	b.Labels[LabelPodGroup] = "pg"
	c := gpuPod("ns", "c", 4)
	c.Labels[LabelPodGroup] = "other"
	in := input([]*v1.Node{gpuNode("a", 8, nil)}, a, b, c)
	in.PodGroups = map[string]int{"ns/pg": 2}
	r := Build(in)
	mustValid(t, r)
	if j := job(t, r, GangJobID("ns", "pg")); j.Members != 2 {
		t.Errorf("pg: %+v", j)
	}
	if len(r.Problems) != 1 || r.Problems[0].Pod != c || r.Problems[0].Reason != ReasonGangIncomplete ||
		!strings.Contains(r.Problems[0].Message, "pod group ns/other does not exist") {
		t.Errorf("%d problems", len(r.Problems))
	}
	in.PodGroups["ns/pg"] = 3
	r = Build(in)
	if len(r.Snapshot.Jobs) != 0 || len(r.Problems) != 3 || !strings.Contains(r.Problems[0].Message, "has 2 of its 3 members") {
		t.Errorf("jobs %v, %d problems, want the incomplete gang held back", jobIDs(r), len(r.Problems))
	}
}

func TestBadInputIsAProblemAndTheRestIsScheduled(t *testing.T) {
	noSize := gpuPod("ns", "nosize", 1)
	noSize.Labels[LabelGang] = "g"
	badSize := gangPod("ns", "badsize", "h", 2, 1)
	badSize.Labels[LabelGangSize] = "two"
	m1 := gangPod("ns", "m1", "mix", 2, 8)
	m2 := gangPod("ns", "m2", "mix", 2, 4)
	s1 := gangPod("ns", "s1", "sizes", 2, 1)
	s2 := gangPod("ns", "s2", "sizes", 3, 1)
	badLimit := gpuPod("ns", "badlimit", 1)
	badLimit.Annotations[AnnotationTimeLimit] = "soon"
	badLevel := gpuPod("ns", "badlevel", 1)
	badLevel.Annotations[AnnotationTopologyRequired] = "rack"
	noGPU := gpuPod("ns", "nogpu", 0)
	huge := gpuPod("ns", "huge", 65)
	ok := gpuPod("ns", "ok", 1)
	gated := gpuPod("ns", "gated", 1) // not ready to be scheduled: neither a job nor a problem
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/quota"}}
	r := Build(input([]*v1.Node{gpuNode("a", 8, nil)}, noSize, badSize, m1, m2, s1, s2, badLimit, badLevel, noGPU, huge, ok, gated))
	mustValid(t, r)
	if ids := jobIDs(r); !slices.Equal(ids, []string{"ns/ok"}) {
		t.Errorf("jobs %v, want only ns/ok", ids)
	}
	want := map[string]string{
		"nosize":   ReasonBadGangLabel + ": label gpusched.io/gang=\"g\" without label gpusched.io/gang-size",
		"badsize":  ReasonBadGangLabel + ": label gpusched.io/gang-size=\"two\"",
		"m1":       ReasonGangMismatch + ": gang ns/mix: members disagree on requests: pod m1 asks 8 GPUs",
		"m2":       ReasonGangMismatch + ": gang ns/mix: members disagree on requests: pod m1 asks 8 GPUs, 4000m CPU, 16384 MiB; pod m2 asks 4 GPUs",
		"s1":       ReasonGangMismatch + ": gang ns/sizes: members disagree on label gpusched.io/gang-size: 2, 3",
		"s2":       ReasonGangMismatch,
		"badlimit": ReasonBadAnnotation + ": annotation gpusched.io/time-limit=\"soon\"",
		"badlevel": ReasonBadAnnotation + ": annotation gpusched.io/topology-required=\"rack\"",
		"nogpu":    ReasonNoGPURequest,
		"huge":     ReasonTooManyGPUs,
	}
	if len(r.Problems) != len(want) {
		t.Errorf("%d problems, want %d", len(r.Problems), len(want))
	}
	for _, p := range r.Problems {
		w, ok := want[p.Pod.Name]
		if !ok || !strings.HasPrefix(p.Reason+": "+p.Message, w) {
			t.Errorf("problem of %s = %s: %s, want prefix %q", p.Pod.Name, p.Reason, p.Message, w)
		}
	}
}

func TestPartlyBoundGangKeepsBoundMembersAndPlacesTheRest(t *testing.T) {
	// A bind failed midway (or the scheduler restarted): two members are
	// bound, two are not. The bound ones hold their GPUs as a running job;
	// the rest is a pending job of two members.
	var pods []*v1.Pod
	for i, n := range []string{"g-0", "g-1", "g-2", "g-3"} {
		p := gangPod("ns", n, "g", 4, 8)
		if i < 2 {
			bound(p, []string{"a", "b"}[i])
		}
		pods = append(pods, p)
	}
	r := Build(input([]*v1.Node{gpuNode("a", 8, nil), gpuNode("b", 8, nil), gpuNode("c", 8, nil), gpuNode("d", 8, nil)}, pods...))
	mustValid(t, r)
	run := job(t, r, GangJobID("ns", "g")+"#bound")
	if run.State != scheduler.Running || run.Members != 2 || run.Allocation.Count() != 16 {
		t.Errorf("bound part %+v", run)
	}
	rest := job(t, r, GangJobID("ns", "g"))
	if rest.State != scheduler.Pending || rest.Members != 2 || r.Jobs[rest.ID].BoundMembers != 2 {
		t.Errorf("rest %+v", rest)
	}
	d, err := scheduler.New(scheduler.Config{}).Step(&r.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Placements) != 1 {
		t.Fatalf("placements %+v", d.Placements)
	}
	for _, a := range d.Placements[0].Allocation {
		if a.Node == "a" || a.Node == "b" {
			t.Errorf("rest placed on %s, already full", a.Node)
		}
	}
}

func TestEligibleNodesFromSelectorsAffinityAndTaints(t *testing.T) {
	a := gpuNode("a", 8, map[string]string{"pool": "x", DefaultGPUTypeLabel: "H100"})
	b := gpuNode("b", 8, map[string]string{"pool": "y", DefaultGPUTypeLabel: "H100"})
	c := gpuNode("c", 8, map[string]string{"pool": "x", DefaultGPUTypeLabel: "A100"})
	c.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "infer", Effect: v1.TaintEffectNoSchedule}}
	d := gpuNode("d", 8, map[string]string{"pool": "y"})
	d.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}}
	d.Spec.Unschedulable = true

	sel := gpuPod("ns", "sel", 1)
	sel.Spec.NodeSelector = map[string]string{"pool": "x"}
	aff := gpuPod("ns", "aff", 1)
	aff.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: DefaultGPUTypeLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"H100"}}}}}}}}
	tol := gpuPod("ns", "tol", 1)
	tol.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "infer", Effect: v1.TaintEffectNoSchedule}}
	plain := gpuPod("ns", "plain", 1)
	none := gpuPod("ns", "none", 1)
	none.Spec.NodeSelector = map[string]string{"pool": "z"}
	anti := gpuPod("ns", "anti", 1)
	anti.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{}}

	r := Build(input([]*v1.Node{a, b, c, d}, sel, aff, tol, plain, none, anti))
	mustValid(t, r)
	for id, want := range map[string][]string{
		"ns/sel":   {"a"},           // c matches the selector but is tainted
		"ns/aff":   {"a", "b"},      // c is A100, d has no type
		"ns/tol":   nil,             // tolerates the taint; d's cordon taint is modelled as draining
		"ns/plain": {"a", "b", "d"}, // everything but the tainted node
		"ns/none":  {},
		"ns/anti":  {"a", "b", "d"},
	} {
		j := job(t, r, id)
		if (want == nil) != (j.EligibleNodes == nil) || !slices.Equal(j.EligibleNodes, want) {
			t.Errorf("%s eligible %#v, want %#v", id, j.EligibleNodes, want)
		}
	}
	if len(r.Ignored) != 1 || r.Ignored[0].Pod != anti || !strings.Contains(r.Ignored[0].Message, "spec.affinity.podAntiAffinity") {
		t.Errorf("%d ignored", len(r.Ignored))
	}
	dec, err := scheduler.New(scheduler.Config{}).Step(&r.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range dec.Pending {
		if w.Job == "ns/none" && w.Reason != scheduler.ReasonNoEligibleNode {
			t.Errorf("ns/none waits with %s, want no-eligible-node", w.Reason)
		}
	}
}

func TestTeamsAndUsage(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Teams = []TeamConfig{{Name: "a", Share: 2, Quota: &scheduler.Quota{GPUs: 8}}, {Name: "b", Share: 1}}
	in := input([]*v1.Node{gpuNode("n", 8, nil)})
	in.Config = cfg
	in.Usage = map[string]float64{"a": 10, "c": 5}
	r := Build(in)
	mustValid(t, r)
	got := r.Snapshot.Teams
	if len(got) != 3 || got[0].Usage != 10 || got[0].Quota.GPUs != 8 || got[2].Name != "c" || got[2].Share != 1 {
		t.Errorf("teams %+v", got)
	}
}
