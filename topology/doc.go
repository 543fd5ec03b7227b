// Package topology is the cluster model of gpusched: nodes with GPUs of
// one type, their place in a network topology, their health, and a
// free-capacity index that answers placement queries without scanning
// nodes.
//
// A [Cluster] declares its levels outermost first (for example "spine",
// "leaf", "nvlink") and each [Node] names its domain at every level. A
// domain is identified by its path ("s0/l3"), so leaves of different
// spines never merge even when they share a name. A cluster has at most
// [MaxLevels] levels, [MaxGPUTypes] GPU types and [MaxGPUsPerNode] GPUs
// per node.
//
// [NewIndex] builds an [Index] in which every healthy GPU of every ready
// node is free; the caller then holds the GPUs of running jobs with
// [Index.TakeSet]. Nodes are numbered by name ([NodeID]), so the index
// and every answer it gives are independent of the order of
// Cluster.Nodes.
//
//	ix, err := topology.NewIndex(&cluster)
//	if err != nil { ... }
//	for _, j := range running {            // hold what runs
//		for _, a := range j.Allocation {
//			n, _ := ix.Lookup(a.Node)
//			_ = ix.TakeSet(n, topology.SetOf(a.GPUs...))
//		}
//	}
//	c, _ := ix.Class("H100")
//	fits := ix.Capacity(topology.ClusterLevel, 0, c, 8) // members of 8 GPUs
//	n, ok := ix.Fullest(topology.ClusterLevel, 0, c, 2) // best fit for 2
//
// # Complexity
//
// For N nodes, L levels, T GPU types, D domains in a level and G GPUs in
// the largest node: building is O(N·L·(log N + L + G)) time and memory,
// whatever the number of GPU types (buckets are kept only for the pairs of
// a domain and a GPU type that some node of the domain has); Capacity is
// O(G + log T); Fullest and Emptiest are O(G + log T + n/4096) for n nodes
// in the domain and, among nodes with equal free GPUs, answer the lowest
// name; First is O(1) up to 4096 nodes in the domain, O(n/4096) beyond;
// FreeGPUs, UsedGPUs and NodesWithFree are O(log T); Take, TakeSet,
// Release and SetHeld are O(L);
// BestDomains is O(log D) to the first domain plus O(k log D) for the k
// domains changed since the previous call. Nothing scans all nodes.
//
// # CPU and memory
//
// A node may also limit the CPU (Node.CPUMillis, millicores) and memory
// (Node.MemoryMiB) of the members on it; zero means not limited, so a
// cluster described by GPUs alone keeps its meaning and an index of it
// keeps no CPU or memory at all ([Index.Limited] is false). Otherwise the
// index keeps each node's use ([Index.AddUse]) and, per bucket, bounds of
// its nodes' free CPU and memory. [Index.Members] is how many members of
// a shape (GPUs, CPU, memory each) fit a node; [Index.CapacityFor] and
// [Index.FirstFit] count and find them per bucket, reading a bucket node by
// node only when its bounds do not decide it: when CPU and memory are
// plentiful they cost what [Index.Capacity] and [Index.First] do.
package topology
