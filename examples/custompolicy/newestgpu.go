package main

import (
	"slices"

	"github.com/gpusched/gpusched/binpack"
)

// newestGPU is a binpack.Scorer that sends members of at least Big GPUs to
// the newest GPU type and smaller ones to the oldest, so that old GPUs
// absorb the small pods and whole new nodes stay free for big jobs.
// Within a type it prefers, member by member, the node left fullest, as
// binpack.Pack scores; unlike Pack it does not ask for gangs to be kept
// on the fewest nodes (it is no binpack.Consolidator), so a gang may
// split where Pack would not.
type newestGPU struct {
	// Generations lists the GPU types, oldest first. A type not listed
	// counts as older than all of them.
	Generations []string
	// Big is the smallest member, in GPUs, that counts as big.
	Big int
}

// Score ranks the generation first (a step of 1000 outweighs any packing
// difference on nodes of up to 1000 GPUs), then packing.
func (s newestGPU) Score(c binpack.Candidate) int64 {
	gen := int64(slices.Index(s.Generations, c.GPUType)) // -1 when not listed
	if c.Request < s.Big {
		gen = -gen
	}
	return 1000*gen + binpack.Pack{}.Score(c)
}
