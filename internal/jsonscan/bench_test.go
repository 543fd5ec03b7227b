package jsonscan_test

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/internal/jsonscan"
	"github.com/gpusched/gpusched/scheduler"
)

// peerText is the snapshot of the Slurm peer workload, 1,000 nodes and
// 10,000 jobs (3.4 MB), as the step command reads it.
func peerText(b *testing.B) []byte {
	var buf bytes.Buffer
	if err := scheduler.EncodeSnapshot(&buf, gen.PeerQueue(1000, 10000)); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkReadValue reads a snapshot as one value: the check of its
// syntax alone. BenchmarkReadValueJSONText does it with jsontext.
func BenchmarkReadValue(b *testing.B) {
	text := peerText(b)
	b.SetBytes(int64(len(text)))
	d := jsonscan.NewDecoder(text)
	for b.Loop() {
		d.Reset(text)
		if _, err := d.ReadValue(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadValueJSONText(b *testing.B) {
	text := peerText(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		d := jsontext.NewDecoder(bytes.NewBuffer(text), jsontext.AllowDuplicateNames(true))
		if _, err := d.ReadValue(); err != nil {
			b.Fatal(err)
		}
	}
}
