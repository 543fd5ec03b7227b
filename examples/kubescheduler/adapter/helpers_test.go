package adapter

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

func gpuNode(name string, gpus int, labels map[string]string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{
				DefaultGPUResource: *resource.NewQuantity(int64(gpus), resource.DecimalSI),
				v1.ResourceCPU:     resource.MustParse("64"),
				v1.ResourceMemory:  resource.MustParse("512Gi"),
			},
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
}

func gpuPod(ns, name string, gpus int) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name),
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)), Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec: v1.PodSpec{
			SchedulerName: "gpusched",
			Containers: []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{
				// The API server defaults requests of extended resources to their limits.
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("16Gi"),
					DefaultGPUResource: *resource.NewQuantity(int64(gpus), resource.DecimalSI)},
				Limits: v1.ResourceList{DefaultGPUResource: *resource.NewQuantity(int64(gpus), resource.DecimalSI)},
			}}},
		},
	}
}

func gangPod(ns, name, gang string, size, gpus int) *v1.Pod {
	p := gpuPod(ns, name, gpus)
	p.Labels[LabelGang] = gang
	p.Labels[LabelGangSize] = itoa(size)
	return p
}

func itoa(n int) string {
	return resource.NewQuantity(int64(n), resource.DecimalSI).String()
}

func bound(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	return p
}

func input(nodes []*v1.Node, pods ...*v1.Pod) *Input {
	return &Input{Now: t0, Config: DefaultConfig(), SchedulerName: "gpusched", Nodes: nodes, Pods: pods}
}
