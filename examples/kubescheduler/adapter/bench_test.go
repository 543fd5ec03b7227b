package adapter

import (
	"fmt"
	"testing"

	"github.com/gpusched/gpusched/scheduler"
	v1 "k8s.io/api/core/v1"
)

// BenchmarkBuild maps 5,000 nodes (64 of them tainted) and 10,000
// one-GPU pods, half of them bound (the shape of the scale measurement),
// then Steps.
func BenchmarkBuild(b *testing.B) {
	var nodes []*v1.Node
	for i := range 5000 {
		n := gpuNode(fmt.Sprintf("n-%04d", i), 8, map[string]string{"pool": "general"})
		if i >= 5000-64 { // kept for gangs by a taint: the pods below are eligible for the others only
			n.Spec.Taints = []v1.Taint{{Key: "pool", Value: "gang", Effect: v1.TaintEffectNoSchedule}}
		}
		nodes = append(nodes, n)
	}
	var pods []*v1.Pod
	for i := range 10000 {
		p := gpuPod("team-a", fmt.Sprintf("p-%05d", i), 1)
		if i%2 == 0 { // half of them bound, eight to a node
			p.Spec.NodeName = nodes[i/16].Name
		}
		pods = append(pods, p)
	}
	in := input(nodes, pods...)
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			Build(in)
		}
	})
	r := Build(in)
	b.Run("step", func(b *testing.B) {
		for b.Loop() {
			if _, err := scheduler.New(scheduler.Config{}).Step(&r.Snapshot); err != nil {
				b.Fatal(err)
			}
		}
	})
}
