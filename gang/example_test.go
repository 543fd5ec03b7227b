package gang_test

import (
	"fmt"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Gangs of 8-GPU members that must sit in one leaf of three nodes: four
// members fit no leaf, though the cluster has the GPUs, and take nothing;
// three members go to l1, since l0 has only two whole nodes free.
func ExamplePlace() {
	c := topology.Cluster{Levels: []string{"leaf"}}
	for i := range 6 {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8,
			Domains: map[string]string{"leaf": fmt.Sprintf("l%d", i/3)}})
	}
	ix, err := topology.NewIndex(&c)
	if err != nil {
		fmt.Println(err)
		return
	}
	n0, _ := ix.Lookup("n0")
	_, _ = ix.Take(n0, 4) // a running job holds half of n0

	leaf, _ := ix.LevelOf("leaf")
	big := gang.NewRequest(4, 8)
	big.Required = leaf
	_, out := gang.Place(ix, big, nil)
	fmt.Println("4 members of 8 in one leaf:", out, "with", ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType), "GPUs free")

	req := gang.NewRequest(3, 8)
	req.Required = leaf
	pl, out := gang.Place(ix, req, nil)
	fmt.Println("3 members of 8 in one leaf:", out, "in", ix.DomainName(pl.Level, pl.Domain)+":", pl.Allocation(ix))
	// Output:
	// 4 members of 8 in one leaf: no-domain with 44 GPUs free
	// 3 members of 8 in one leaf: placed in l1: n3[0-7] n4[0-7] n5[0-7]
}
