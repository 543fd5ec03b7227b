package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSeedScenario(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	s := out.String()

	// Pack: one node 100% used, two whole nodes left, nothing stranded.
	require.Contains(t, s, "pod4  1 GPU   n0[7]")
	require.Contains(t, s, "node n0: 8/8 used (100%), 0 idle")
	require.Contains(t, s, "nodes touched 1; free 16; stranded on partly used nodes 0; 8-GPU members that fit 2; free GPUs wasted for them 0")
	// Spread: three nodes touched, all 16 free GPUs stranded.
	require.Contains(t, s, "pod2  2 GPUs  n1[0-1]")
	require.Contains(t, s, "pod4  1 GPU   n2[1]")
	require.Contains(t, s, "nodes touched 3; free 16; stranded on partly used nodes 16; 8-GPU members that fit 0; free GPUs wasted for them 16")

	// Two-level cluster: where each gang lands and what is left.
	require.Contains(t, s, "g1    10×8   required spine, preferred leaf  s1/l2 + s1/l3                 10 nodes")
	require.Contains(t, s, "g2    4×8    required leaf                   s0/l0                         4 nodes")
	require.Contains(t, s, "g3    6×8    required leaf                   s0/l1                         6 nodes")
	require.Contains(t, s, "g4    1×4    none                            s0/l1                         1 node")
	require.Contains(t, s, "g5    2×8    required leaf                   reserved from 13:00 in s1/l3")
	require.Contains(t, s, "  cluster   176           21         8           21             8")
	require.Contains(t, s, "  cluster    12            1         4            1             4")
}
