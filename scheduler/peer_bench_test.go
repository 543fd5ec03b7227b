package scheduler_test

import (
	"bytes"
	"testing"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
)

// BenchmarkPeers runs a Step on each peer's workload (gen.Peers says which
// published measurement each mirrors); BENCHMARKS.md sets the results
// beside the peers' times. examples/step's BenchmarkCLIPeers measures the
// same workloads through the whole command.
func BenchmarkPeers(b *testing.B) {
	for _, p := range gen.Peers() {
		b.Run(p.Name, func(b *testing.B) {
			snap := p.Snapshot()
			s := scheduler.New(p.Config)
			b.ReportAllocs()
			var d *scheduler.Decision
			for b.Loop() {
				var err error
				if d, err = s.Step(snap); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(d.Placements)), "placed")
			b.ReportMetric(float64(len(d.Reservations)), "reserved")
			b.ReportMetric(float64(len(d.Pending)), "waiting")
		})
	}
}

// BenchmarkDecodePeers decodes each peer workload's snapshot as the step
// command reads it: the part of BenchmarkCLIPeers that is JSON in.
func BenchmarkDecodePeers(b *testing.B) {
	for _, p := range gen.Peers() {
		b.Run(p.Name, func(b *testing.B) {
			var buf bytes.Buffer
			if err := scheduler.EncodeSnapshot(&buf, p.Snapshot()); err != nil {
				b.Fatal(err)
			}
			data := buf.Bytes()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := scheduler.DecodeSnapshot(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPeerWorkloads keeps the peer benchmarks honest: each workload has
// the shape the comparison claims, and a Step answers it as described.
func TestPeerWorkloads(t *testing.T) {
	count := func(s *scheduler.Snapshot) (running, pending int) {
		for _, j := range s.Jobs {
			if j.State == scheduler.Running {
				running++
			} else {
				pending++
			}
		}
		return running, pending
	}
	t.Run("slurm", func(t *testing.T) {
		s := gen.PeerQueue(1000, 10000)
		running, pending := count(s)
		// The published cycle had 6,879 of 10,000 jobs pending.
		if pending < 6500 || pending > 7200 {
			t.Fatalf("%d running, %d pending; the published cycle had 6,879 pending", running, pending)
		}
		d, err := scheduler.New(scheduler.Config{Backfill: scheduler.Conservative}).Step(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(d.Placements) + len(d.Reservations); got != pending || len(d.Pending) != 0 {
			t.Fatalf("%d placed, %d reserved, %d waiting without one; want all %d pending jobs placed or reserved",
				len(d.Placements), len(d.Reservations), len(d.Pending), pending)
		}
	})
	for _, tc := range []struct {
		name              string
		nodes, jobs, gpus int
	}{{"kai", 1000, 5000, 1}, {"nomad", 10000, 1000, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := scheduler.New(scheduler.Config{}).Step(gen.PeerEmpty(tc.nodes, tc.jobs, tc.gpus))
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Placements) != tc.jobs {
				t.Fatalf("placed %d of %d jobs on an idle cluster", len(d.Placements), tc.jobs)
			}
			for _, p := range d.Placements {
				if len(p.Allocation) != 1 || len(p.Allocation[0].GPUs) != tc.gpus {
					t.Fatalf("job %s got %v, want %d GPUs on one node", p.Job, p.Allocation, tc.gpus)
				}
			}
		})
	}
}
