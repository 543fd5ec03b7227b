package controller

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/adapter"
	"github.com/gpusched/gpusched/scheduler"
	v1 "k8s.io/api/core/v1"
)

// ReasonUnschedulable is the PodScheduled reason of a pod that waits, as
// the default scheduler writes it (cluster autoscalers look for it).
const ReasonUnschedulable = v1.PodReasonUnschedulable

// Bind is one pod to bind to one node.
type Bind struct {
	Pod  *v1.Pod
	Node string
	Job  string
}

// Evict is one pod to evict.
type Evict struct {
	Pod    *v1.Pod
	Job    string
	Grace  time.Duration
	Reason scheduler.EvictReason
	By     string
}

// Status is the PodScheduled condition a waiting pod should carry.
type Status struct {
	Pod *v1.Pod
	// Reason is the condition's reason: Unschedulable, or an adapter
	// problem such as BadGangLabel.
	Reason string
	// Code is the short cause for metrics: a gpusched pending reason,
	// "reserved", or the adapter problem.
	Code    string
	Message string
	// Warning says the event is a warning (bad input).
	Warning bool
}

// Actions are what one decision asks of the API.
type Actions struct {
	Binds    []Bind
	Evicts   []Evict
	Statuses []Status
	// Ignored are pods whose spec asks for what gpusched does not model.
	Ignored []adapter.Problem
}

// Translate turns a decision on the adapter's snapshot into API actions:
// each placement's GPUs become one node per member (members in name
// order, GPUsPerMember GPUs each), each eviction one eviction per pod of
// the job, and each reservation, pending job and adapter problem one
// PodScheduled condition per pod.
func Translate(res *adapter.Result, d *scheduler.Decision) (Actions, error) {
	var a Actions
	for _, p := range d.Placements {
		jp := res.Jobs[p.Job]
		if jp == nil {
			return a, fmt.Errorf("placement of unknown job %q", p.Job)
		}
		var nodes []string
		for _, ng := range p.Allocation {
			if len(ng.GPUs)%jp.GPUsPerMember != 0 {
				return a, fmt.Errorf("placement of %q: %d GPUs on %s is not a whole number of members of %d", p.Job, len(ng.GPUs), ng.Node, jp.GPUsPerMember)
			}
			for k := 0; k < len(ng.GPUs)/jp.GPUsPerMember; k++ {
				nodes = append(nodes, ng.Node)
			}
		}
		if len(nodes) != len(jp.Pods) {
			return a, fmt.Errorf("placement of %q: %d members placed, %d pods", p.Job, len(nodes), len(jp.Pods))
		}
		for i, pod := range jp.Pods {
			a.Binds = append(a.Binds, Bind{Pod: pod, Node: nodes[i], Job: p.Job})
		}
	}
	for _, e := range d.Evictions {
		jp := res.Jobs[e.Job]
		if jp == nil {
			return a, fmt.Errorf("eviction of unknown job %q", e.Job)
		}
		for _, pod := range jp.Pods {
			a.Evicts = append(a.Evicts, Evict{Pod: pod, Job: e.Job, Grace: e.Grace, Reason: e.Reason, By: e.By})
		}
	}
	for _, r := range d.Reservations {
		jp := res.Jobs[r.Job]
		if jp == nil {
			continue
		}
		msg := fmt.Sprintf("reserved: starts by %s on %d nodes", r.Start.UTC().Format(time.RFC3339), len(r.Allocation))
		if r.Message != "" {
			msg += "; " + r.Message // why it starts later than it was promised
		}
		for _, pod := range jp.Pods {
			a.Statuses = append(a.Statuses, Status{Pod: pod, Reason: ReasonUnschedulable, Code: "reserved", Message: gangNote(jp) + msg})
		}
	}
	for _, w := range d.Pending {
		jp := res.Jobs[w.Job]
		if jp == nil {
			continue
		}
		msg := string(w.Reason) + ": " + w.Message
		for _, pod := range jp.Pods {
			a.Statuses = append(a.Statuses, Status{Pod: pod, Reason: ReasonUnschedulable, Code: string(w.Reason), Message: gangNote(jp) + msg})
		}
	}
	for _, p := range res.Problems {
		a.Statuses = append(a.Statuses, Status{Pod: p.Pod, Reason: p.Reason, Code: p.Reason, Message: p.Message,
			Warning: p.Reason != adapter.ReasonGangIncomplete})
	}
	a.Ignored = res.Ignored
	return a, nil
}

// gangNote prefixes the message of the rest of a gang whose other
// members are bound.
func gangNote(jp *adapter.JobPods) string {
	if jp.BoundMembers == 0 {
		return ""
	}
	return fmt.Sprintf("gang %s: %d members bound, these %d wait: ", jp.Gang, jp.BoundMembers, len(jp.Pods))
}
