// Package binpack holds node scorers: the rules that choose which node a
// member of a job lands on.
//
// A [Scorer] rates a [Candidate], a class of nodes (one GPU type, one count
// of free GPUs); placers evaluate it once per class, so scoring costs
// O(types × GPUs per node) per member whatever the cluster size.
// [Pack] (the default) is most-allocated: the fullest node that fits, and
// for a gang the fewest nodes, counting the members a node hosts by its
// scarcest resource (GPUs, CPU or memory). [Spread] is least-allocated.
// [Fragmentation] measures how free GPUs are scattered, and how many are
// stranded on nodes whose CPU or memory is used up.
//
// A custom scorer is a function:
//
//	newestFirst := binpack.ScorerFunc(func(c binpack.Candidate) int64 {
//		score := -int64(c.Free - c.Request) // pack...
//		if c.GPUType == "B200" {
//			score += 1000 // ...but on the newest GPUs first
//		}
//		return score
//	})
//
// A function is asked member by member, so unlike Pack it may split a gang
// over more nodes than it needs; a scorer type that is a [Consolidator]
// whose Consolidate reports true keeps the gang together but is not asked
// at all (see there).
//
// The package imports nothing else of gpusched.
package binpack
