package topology_test

import (
	"fmt"

	"github.com/gpusched/gpusched/topology"
)

func ExampleNewIndex() {
	c := topology.Cluster{Nodes: []topology.Node{
		{Name: "n0", GPUs: 8},
		{Name: "n1", GPUs: 8},
		{Name: "n2", GPUs: 8, Unhealthy: []int{7}},
	}}
	ix, err := topology.NewIndex(&c)
	if err != nil {
		fmt.Println(err)
		return
	}
	n0, _ := ix.Lookup("n0")
	_, _ = ix.Take(n0, 6) // a running job holds six GPUs of n0

	whole := topology.ClusterLevel
	fmt.Println("members of 4 GPUs that fit:", ix.Capacity(whole, 0, topology.AnyType, 4))
	n, _ := ix.Fullest(whole, 0, topology.AnyType, 2)
	fmt.Println("fullest node with 2 free:", ix.Name(n))
	n, _ = ix.Fullest(whole, 0, topology.AnyType, 7)
	fmt.Println("fullest node with 7 free:", ix.Name(n))
	// Output:
	// members of 4 GPUs that fit: 3
	// fullest node with 2 free: n0
	// fullest node with 7 free: n2
}

func ExampleAllocation_String() {
	a := topology.Allocation{
		{Node: "n0", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{Node: "n1", GPUs: []int{0, 2, 3, 6}},
	}
	fmt.Println(a)
	fmt.Println(a.Count(), "GPUs")
	// Output:
	// n0[0-7] n1[0,2-3,6]
	// 12 GPUs
}
