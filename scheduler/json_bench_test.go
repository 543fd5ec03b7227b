package scheduler

import (
	"bytes"
	"testing"
)

// BenchmarkDecodeSnapshot decodes the JSON of a benchmark snapshot
// (2,048 nodes, 10,000 pending jobs and the running jobs that hold 70%
// of the GPUs), as the step command reads its input.
func BenchmarkDecodeSnapshot(b *testing.B) {
	var buf bytes.Buffer
	if err := EncodeSnapshot(&buf, benchSnapshot(2048, 10000)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeSnapshot(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
