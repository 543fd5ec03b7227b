package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHugeHeapAdvises runs the preparation and checks, in the kernel's
// own account of this process's mappings, that some of the heap is now
// advised to use huge pages ("hg" among a mapping's VmFlags). Skipped
// where the kernel has huge pages off.
func TestHugeHeapAdvises(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are off on this machine")
	}
	advised := func() int {
		smaps, err := os.ReadFile("/proc/self/smaps")
		require.NoError(t, err)
		n := 0
		for _, line := range strings.Split(string(smaps), "\n") {
			if strings.HasPrefix(line, "VmFlags:") && strings.Contains(line+" ", " hg ") {
				n++
			}
		}
		return n
	}
	before := advised()
	hugeHeap(32 << 20)
	require.Greater(t, advised(), before, "no mapping more is advised to use huge pages")
}
