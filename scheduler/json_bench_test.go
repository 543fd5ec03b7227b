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

// BenchmarkEncodeDecision encodes the decision of the default policy for
// the snapshot of BenchmarkDecodeSnapshot, as the step command writes
// its output; bytes are those written.
func BenchmarkEncodeDecision(b *testing.B) {
	d, err := New(Config{}).Step(benchSnapshot(2048, 10000))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := EncodeDecision(&buf, d); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := EncodeDecision(&buf, d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeSnapshot encodes the snapshot of BenchmarkDecodeSnapshot.
func BenchmarkEncodeSnapshot(b *testing.B) {
	s := benchSnapshot(2048, 10000)
	var buf bytes.Buffer
	if err := EncodeSnapshot(&buf, s); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := EncodeSnapshot(&buf, s); err != nil {
			b.Fatal(err)
		}
	}
}
