package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
)

// writePeerFiles writes peer p's snapshot and policy file into dir and
// returns their paths.
func writePeerFiles(t testing.TB, dir string, p gen.Peer) (snapshot, policy string) {
	var buf bytes.Buffer
	require.NoError(t, scheduler.EncodeSnapshot(&buf, p.Snapshot()))
	snapshot = filepath.Join(dir, "snapshot.json")
	policy = filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(snapshot, buf.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(policy, []byte(p.Policy), 0o644))
	return snapshot, policy
}

// buildStep builds this command into dir and returns the binary's path.
func buildStep(b testing.TB, dir string) string {
	bin := filepath.Join(dir, "step")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkCLIPeers runs the built command as a separate process on each
// peer workload of the design's performance section (gen.Peers), process
// start, reading, decoding, validation, the Step and encoding included:
// what a host in another language pays. One op is one whole command; the
// "peer-x" metric is the peer's published time over this one.
func BenchmarkCLIPeers(b *testing.B) {
	bin := buildStep(b, b.TempDir())
	for _, p := range gen.Peers() {
		b.Run(p.Name, func(b *testing.B) {
			snapshot, policy := writePeerFiles(b, b.TempDir(), p)
			info, err := os.Stat(snapshot)
			require.NoError(b, err)
			b.SetBytes(info.Size())
			for b.Loop() {
				in, err := os.Open(snapshot)
				require.NoError(b, err)
				cmd := exec.Command(bin, "-config", policy)
				cmd.Stdin = in
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					b.Fatalf("%v: %s", err, stderr.String())
				}
				in.Close()
			}
			perOp := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(p.Seconds/perOp, "peer-x")
		})
	}
}

// TestPeerFilesDecideAsInProcess checks that the files the CLI benchmark
// feeds the command carry the same workload and policy as the in-process
// benchmark: the command's decision equals Step's on the Go snapshot.
func TestPeerFilesDecideAsInProcess(t *testing.T) {
	for _, p := range gen.Peers() {
		if testing.Short() && p.Name != "slurm/nodes=64/jobs=2000" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			snapshot, policy := writePeerFiles(t, t.TempDir(), p)
			in, err := os.ReadFile(snapshot)
			require.NoError(t, err)
			var out, errb bytes.Buffer
			code := run([]string{"-config", policy}, bytes.NewReader(in), &out, &errb)
			require.Equal(t, 0, code, errb.String())
			d, err := scheduler.New(p.Config).Step(p.Snapshot())
			require.NoError(t, err)
			var want bytes.Buffer
			require.NoError(t, scheduler.EncodeDecision(&want, d))
			require.Equal(t, want.String(), out.String())
		})
	}
}
