package binpack

import "fmt"

// DefaultMember is the member size [Fragmentation] measures against when
// it is given none: one whole node of 8 GPUs.
const DefaultMember = 8

// NodeUse is what [Fragmentation] needs to know about one node.
type NodeUse struct {
	// GPUs is the number of GPUs the node could allocate if it ran
	// nothing: its healthy GPUs. A node that takes no new work (draining
	// or down) should be left out, or given GPUs 0, which leaves it out.
	GPUs int
	// Free is the number of those GPUs free now. Values outside 0..GPUs
	// are clamped into that range.
	Free int
	// CPUUsedUp and MemoryUsedUp say that the node's CPU, or its memory,
	// is used up: its free GPUs cannot take a member that asks for some.
	// The caller judges it, for example free CPU below what the smallest
	// member it expects asks for (zero free, for any member that asks).
	CPUUsedUp, MemoryUsedUp bool
}

// Report is a fragmentation figure: how the free GPUs of a set of nodes
// are scattered, judged against members of Member GPUs that each need
// one node.
type Report struct {
	// Nodes is the number of nodes counted (those with GPUs > 0).
	Nodes int
	// GPUs is the sum of the nodes' GPUs.
	GPUs int
	// FreeGPUs is the sum of the nodes' free GPUs.
	FreeGPUs int
	// EmptyNodes is the number of nodes with every GPU free.
	EmptyNodes int
	// PartialNodes is the number of partly used nodes: some GPUs free,
	// some in use.
	PartialNodes int
	// StrandedGPUs is the number of free GPUs on partly used nodes: free
	// capacity that no whole-node job can use. StrandedGPUs <= FreeGPUs.
	StrandedGPUs int
	// Member is the member size the last three figures are measured
	// against.
	Member int
	// NodesFitting is the number of nodes with at least Member free GPUs:
	// nodes that could host one member of that size now.
	NodesFitting int
	// MembersFitting is how many members of Member GPUs the free GPUs
	// host, each member on one node: the sum of Free / Member.
	MembersFitting int
	// WastedForMember is the number of free GPUs that cannot be part of
	// any member of Member GPUs: the sum of Free mod Member, that is
	// FreeGPUs - Member × MembersFitting.
	WastedForMember int
	// StrandedByCPU is the number of free GPUs on nodes whose CPU is used
	// up (NodeUse.CPUUsedUp), and StrandedByMemory those on nodes whose
	// memory is used up but not their CPU: GPUs no member that asks for
	// CPU (memory) can use until a job there ends. Both count free GPUs
	// of empty and partly used nodes alike; StrandedByCPU +
	// StrandedByMemory <= FreeGPUs.
	StrandedByCPU, StrandedByMemory int
}

// Fragmentation measures how the free GPUs of nodes are scattered,
// against members of member GPUs each (member < 1 means
// [DefaultMember]). The order of nodes does not matter. O(len(nodes)).
func Fragmentation(nodes []NodeUse, member int) Report {
	if member < 1 {
		member = DefaultMember
	}
	r := Report{Member: member}
	for _, n := range nodes {
		if n.GPUs <= 0 {
			continue
		}
		free := min(max(n.Free, 0), n.GPUs)
		r.Nodes++
		r.GPUs += n.GPUs
		r.FreeGPUs += free
		switch {
		case free == n.GPUs:
			r.EmptyNodes++
		case free > 0:
			r.PartialNodes++
			r.StrandedGPUs += free
		}
		if free >= member {
			r.NodesFitting++
		}
		r.MembersFitting += free / member
		r.WastedForMember += free % member
		switch {
		case n.CPUUsedUp:
			r.StrandedByCPU += free
		case n.MemoryUsedUp:
			r.StrandedByMemory += free
		}
	}
	return r
}

// UsedGPUs returns GPUs - FreeGPUs.
func (r Report) UsedGPUs() int { return r.GPUs - r.FreeGPUs }

// String summarizes r on one line, for logs and examples; GPUs stranded
// by CPU or memory are named when there are some.
func (r Report) String() string {
	s := fmt.Sprintf("free %d/%d GPUs on %d nodes; empty %d; partly used %d (stranded %d); for %d-GPU members: nodes fitting %d, members %d, wasted %d",
		r.FreeGPUs, r.GPUs, r.Nodes, r.EmptyNodes, r.PartialNodes, r.StrandedGPUs,
		r.Member, r.NodesFitting, r.MembersFitting, r.WastedForMember)
	if r.StrandedByCPU > 0 || r.StrandedByMemory > 0 {
		s += fmt.Sprintf("; stranded by CPU %d, by memory %d", r.StrandedByCPU, r.StrandedByMemory)
	}
	return s
}
