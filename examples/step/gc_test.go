package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/gen"
)

// TestCommandCollectsOnlyItsPreparedHeap: given a snapshot in a file, the
// command collects garbage once, to free the heap it grew for the decode
// where huge pages are asked for (see prepareHeap and gcAtLimit), and not
// during the Step. The Slurm workload of 1,000 nodes allocates about
// 30 MiB, well under the memory limit the command sets for it; with the
// GC percent at 400 it collected once in the middle of its Step. The
// runtime's own trace counts the collections.
func TestCommandCollectsOnlyItsPreparedHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	var peer gen.Peer
	for _, p := range gen.Peers() {
		if p.Name == "slurm/nodes=1000/jobs=10000" {
			peer = p
		}
	}
	require.NotNil(t, peer.Snapshot)
	dir := t.TempDir()
	bin := buildStep(t, dir)
	snapshot, policy := writePeerFiles(t, dir, peer)
	in, err := os.Open(snapshot)
	require.NoError(t, err)
	defer in.Close()

	cmd := exec.Command(bin, "-config", policy)
	cmd.Stdin, cmd.Stdout = in, io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GODEBUG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1")
	require.NoError(t, cmd.Run(), stderr.String())

	cycles := 0
	for line := range strings.Lines(stderr.String()) {
		if strings.HasPrefix(line, "gc ") {
			cycles++
		}
	}
	want := 0 // no heap is prepared where huge pages cannot be asked for
	if runtime.GOOS == "linux" {
		want = 1
	}
	require.Equal(t, want, cycles, "collections:\n%s", stderr.String())
}
