package preempt_test

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/preempt"
	"github.com/gpusched/gpusched/topology"
)

// A P3 job runs on 8 GPUs of an 8-node cluster of 8 GPUs each; a P1 job
// needs all 64 GPUs, and only 56 are free. The P3 job is the one victim,
// and the P1 job gets a reservation once the P3 job's grace has run out.
func Example() {
	c := &topology.Cluster{}
	for i := 0; i < 8; i++ {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8, GPUType: "H100"})
	}
	ix, err := topology.NewIndex(c)
	if err != nil {
		panic(err)
	}
	n5, _ := ix.Lookup("n5")
	running := []preempt.Candidate{{
		ID: "sweep-p3", Tier: 3, Grace: 5 * time.Minute, WorkLost: 20 * time.Minute,
		Holds: []preempt.Hold{{Node: n5, GPUs: topology.FirstN(8)}},
	}}
	for _, r := range running {
		for _, h := range r.Holds {
			if err := ix.TakeSet(h.Node, h.GPUs); err != nil {
				panic(err)
			}
		}
	}

	const tier = 1
	elig := preempt.Eligible(preempt.DefaultMatrix(), tier, running)
	cands := make([]preempt.Candidate, len(elig))
	for k, i := range elig {
		cands[k] = running[i]
	}
	victims, pl, ok := preempt.Select(ix, gang.NewRequest(8, 8), binpack.Pack{}, cands)
	fmt.Println("ok:", ok)
	for _, v := range victims {
		fmt.Println("victim:", cands[v].ID, "tier", cands[v].Tier)
	}
	grace := preempt.MaxGrace(cands, victims)
	fmt.Println("worth it:", preempt.Worth(grace, 0, false))
	fmt.Println("reservation at now +", grace, "on", pl.Allocation(ix).Count(), "GPUs:", pl.Allocation(ix))
	fmt.Println("free now:", ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType))
	// Output:
	// ok: true
	// victim: sweep-p3 tier 3
	// worth it: true
	// reservation at now + 5m0s on 64 GPUs: n0[0-7] n1[0-7] n2[0-7] n3[0-7] n4[0-7] n5[0-7] n6[0-7] n7[0-7]
	// free now: 56
}
