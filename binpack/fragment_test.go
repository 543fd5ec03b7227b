package binpack_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/binpack"
)

func nodes(gpus int, free ...int) []binpack.NodeUse {
	out := make([]binpack.NodeUse, len(free))
	for i, f := range free {
		out[i] = binpack.NodeUse{GPUs: gpus, Free: f}
	}
	return out
}

func TestFragmentation(t *testing.T) {
	cases := []struct {
		name   string
		nodes  []binpack.NodeUse
		member int
		want   binpack.Report
	}{
		{"none", nil, 0, binpack.Report{Member: 8}},
		{"packed seed: one full node, two empty", nodes(8, 0, 8, 8), 0, binpack.Report{
			Nodes: 3, GPUs: 24, FreeGPUs: 16, EmptyNodes: 2, Member: 8,
			NodesFitting: 2, MembersFitting: 2,
		}},
		{"spread seed: 4, 2 and 1+1 GPUs on three nodes", nodes(8, 4, 6, 6), 0, binpack.Report{
			Nodes: 3, GPUs: 24, FreeGPUs: 16, PartialNodes: 3, StrandedGPUs: 16, Member: 8,
			WastedForMember: 16,
		}},
		{"same nodes, 2-GPU members", nodes(8, 4, 6, 6), 2, binpack.Report{
			Nodes: 3, GPUs: 24, FreeGPUs: 16, PartialNodes: 3, StrandedGPUs: 16, Member: 2,
			NodesFitting: 3, MembersFitting: 8,
		}},
		{"4-GPU members leave remainders", nodes(8, 8, 7, 5, 3), 4, binpack.Report{
			Nodes: 4, GPUs: 32, FreeGPUs: 23, EmptyNodes: 1, PartialNodes: 3, StrandedGPUs: 15, Member: 4,
			NodesFitting: 3, MembersFitting: 4, WastedForMember: 7,
		}},
		{"full nodes count, add nothing free", nodes(8, 0, 0), 0, binpack.Report{Nodes: 2, GPUs: 16, Member: 8}},
		{"mixed sizes: a free 4-GPU node fits no 8-GPU member", []binpack.NodeUse{{GPUs: 4, Free: 4}, {GPUs: 16, Free: 16}}, 8, binpack.Report{
			Nodes: 2, GPUs: 20, FreeGPUs: 20, EmptyNodes: 2, Member: 8,
			NodesFitting: 1, MembersFitting: 2, WastedForMember: 4,
		}},
		{"out of range values are clamped, GPUs 0 is skipped", []binpack.NodeUse{{GPUs: 8, Free: 9}, {GPUs: 8, Free: -1}, {GPUs: 0, Free: 3}}, -1, binpack.Report{
			Nodes: 2, GPUs: 16, FreeGPUs: 8, EmptyNodes: 1, Member: 8,
			NodesFitting: 1, MembersFitting: 1,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := binpack.Fragmentation(tc.nodes, tc.member)
			require.Equal(t, tc.want, got)
			require.Equal(t, got.GPUs-got.FreeGPUs, got.UsedGPUs())
		})
	}
}

func TestReportString(t *testing.T) {
	r := binpack.Fragmentation(nodes(8, 4, 6, 6, 8), 8)
	require.Equal(t, "free 24/32 GPUs on 4 nodes; empty 1; partly used 3 (stranded 16); for 8-GPU members: nodes fitting 1, members 1, wasted 16", r.String())
	// A node with 6 free GPUs whose CPU a data-loading job used up, and
	// one whose memory is.
	use := nodes(8, 4, 6, 6, 8)
	use[1].CPUUsedUp, use[2].MemoryUsedUp = true, true
	r = binpack.Fragmentation(use, 8)
	require.Equal(t, 6, r.StrandedByCPU)
	require.Equal(t, 6, r.StrandedByMemory)
	require.Contains(t, r.String(), "; stranded by CPU 6, by memory 6")
}

// TestFragmentationProperties checks the report against a brute force
// that places members one GPU set at a time, and checks that the order
// of nodes does not matter.
func TestFragmentationProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "nodes")
		use := make([]binpack.NodeUse, n)
		for i := range use {
			g := rapid.IntRange(1, 16).Draw(t, "gpus")
			use[i] = binpack.NodeUse{GPUs: g, Free: rapid.IntRange(0, g).Draw(t, "free"),
				CPUUsedUp: rapid.IntRange(0, 3).Draw(t, "cpuUsedUp") == 0, MemoryUsedUp: rapid.IntRange(0, 3).Draw(t, "memUsedUp") == 0}
		}
		member := rapid.IntRange(1, 16).Draw(t, "member")
		r := binpack.Fragmentation(use, member)

		if r.StrandedGPUs > r.FreeGPUs || r.FreeGPUs > r.GPUs {
			t.Fatalf("stranded %d, free %d, GPUs %d", r.StrandedGPUs, r.FreeGPUs, r.GPUs)
		}
		if r.EmptyNodes+r.PartialNodes > r.Nodes || r.NodesFitting > r.Nodes {
			t.Fatalf("node counts %+v", r)
		}
		// Brute force: take members off each node while one fits.
		fitting, members, left, stranded, empty := 0, 0, 0, 0, 0
		byCPU, byMem := 0, 0
		for _, u := range use {
			f := u.Free
			if u.CPUUsedUp {
				byCPU += f
			} else if u.MemoryUsedUp {
				byMem += f
			}
			if f >= member {
				fitting++
			}
			for f >= member {
				f -= member
				members++
			}
			left += f
			if u.Free == u.GPUs {
				empty++
			} else if u.Free > 0 {
				stranded += u.Free
			}
		}
		want := [5]int{fitting, members, left, stranded, empty}
		got := [5]int{r.NodesFitting, r.MembersFitting, r.WastedForMember, r.StrandedGPUs, r.EmptyNodes}
		if want != got {
			t.Fatalf("fitting, members, wasted, stranded, empty = %v, brute force %v", got, want)
		}
		if r.StrandedByCPU != byCPU || r.StrandedByMemory != byMem || byCPU+byMem > r.FreeGPUs {
			t.Fatalf("stranded by CPU %d, by memory %d; brute force %d, %d", r.StrandedByCPU, r.StrandedByMemory, byCPU, byMem)
		}
		if r.FreeGPUs != r.Member*r.MembersFitting+r.WastedForMember {
			t.Fatalf("free %d != %d × %d + %d", r.FreeGPUs, r.Member, r.MembersFitting, r.WastedForMember)
		}
		perm := rapid.Permutation(slices.Clone(use)).Draw(t, "order")
		if binpack.Fragmentation(perm, member) != r {
			t.Fatal("the report depends on the order of nodes")
		}
	})
}
