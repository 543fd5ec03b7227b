// Package gang places a gang, Members members of GPUsPerMember GPUs each,
// all at once or not at all, onto a [topology.Index].
//
// [Place] chooses the domain first (the required level, or the preferred
// level relaxed outward one level at a time) as the best fit: the domain
// with room for the gang that has the fewest free GPUs, then the most used
// GPUs, then the first name. Inside it, a [binpack.Scorer] chooses nodes.
// With the default, [binpack.Pack], members go to as few nodes as possible:
// the node that hosts the most members (fullest among equals) until the
// rest fit on one node, which is then the fullest that fits them. A gang
// that does not fit takes nothing and the index is left as it was.
//
// A request may ask for CPU and memory per member besides GPUs
// (Request.CPUMillis, Request.MemoryMiB). A member then fits a node only
// where its GPUs, CPU and memory all fit ([topology.Index.Members]);
// domains are counted with [topology.Index.CapacityFor], the fewest-nodes
// rule counts members so, and each slot holds its members' CPU and memory
// in the index with its GPUs. On an index whose nodes set no capacities,
// or for a request that asks for none, placement is by GPUs alone and
// costs what it did.
//
//	req := gang.NewRequest(12, 8)         // 12 members × 8 GPUs
//	req.Required, _ = ix.LevelOf("spine") // all in one spine
//	pl, out := gang.Place(ix, req, nil)
//	if out == gang.Placed {
//		alloc := pl.Allocation(ix)        // node names and GPU indices
//		fmt.Println(alloc)
//	}
//
// Cost: O(levels tried × (log D + domains skipped) × G) to choose the
// domain and O(nodes touched × (G + L)) to take the GPUs; a placement never
// scans the cluster unless Request.Avoid excludes nodes one by one, or a
// Distinct gang excludes the places it and other replicas took (once per
// member while it finds places without a member, once more when they run
// out). A
// request with Avoid or a Chooser lists every domain of each level tried,
// O(D) more per level.
package gang
