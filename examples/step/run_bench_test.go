package main

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/gen"
)

// BenchmarkRunPeers runs the command in process (the run function) on
// each peer workload of BenchmarkCLIPeers: reading, decoding,
// validation, the Step and encoding, without the process start. It is
// the one to profile for the command's own costs.
func BenchmarkRunPeers(b *testing.B) {
	for _, p := range gen.Peers() {
		b.Run(p.Name, func(b *testing.B) {
			snapshot, policy := writePeerFiles(b, b.TempDir(), p)
			data, err := os.ReadFile(snapshot)
			require.NoError(b, err)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var errb bytes.Buffer
				if code := run([]string{"-config", policy}, bytes.NewReader(data), io.Discard, &errb); code != 0 {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
			}
		})
	}
}
