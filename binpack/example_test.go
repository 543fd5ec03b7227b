package binpack_test

import (
	"fmt"

	"github.com/gpusched/gpusched/binpack"
)

// Pack scores the fullest node that fits highest: a 2-GPU pod goes to
// the node with 3 free GPUs rather than the one with 8.
func ExamplePack() {
	for _, free := range []int{8, 3, 2} {
		c := binpack.Candidate{Free: free, Request: 2}
		fmt.Printf("free %d: pack %d, spread %d\n", free, binpack.Pack{}.Score(c), binpack.Spread{}.Score(c))
	}
	// Output:
	// free 8: pack -6, spread 8
	// free 3: pack -1, spread 3
	// free 2: pack 0, spread 2
}

// Pods of 4, 2, 1 and 1 GPUs on three nodes of 8: packed on one node,
// the 16 free GPUs are two whole nodes; spread over all three, every
// free GPU is stranded and no 8-GPU member fits.
func ExampleFragmentation() {
	packed := []binpack.NodeUse{{GPUs: 8, Free: 0}, {GPUs: 8, Free: 8}, {GPUs: 8, Free: 8}}
	spread := []binpack.NodeUse{{GPUs: 8, Free: 4}, {GPUs: 8, Free: 6}, {GPUs: 8, Free: 6}}
	for _, nodes := range [][]binpack.NodeUse{packed, spread} {
		r := binpack.Fragmentation(nodes, 8)
		fmt.Printf("free %d, stranded %d, nodes fitting 8 GPUs %d, wasted %d\n",
			r.FreeGPUs, r.StrandedGPUs, r.NodesFitting, r.WastedForMember)
	}
	// Output:
	// free 16, stranded 0, nodes fitting 8 GPUs 2, wasted 0
	// free 16, stranded 16, nodes fitting 8 GPUs 0, wasted 16
}
