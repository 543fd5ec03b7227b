package scheduler

import (
	"fmt"
	"testing"
)

// BenchmarkForecast measures Forecast on the benchmark snapshots under
// EASY (the default policy: the Step reserves one job, the forecast
// plans every other waiting job) and conservative backfill (the Step
// reserves them all, the forecast adds little), and reports how many
// jobs got a start and how many none.
func BenchmarkForecast(b *testing.B) {
	for _, mode := range []BackfillMode{EASY, Conservative} {
		for _, sz := range benchSizes {
			b.Run(fmt.Sprintf("%v/nodes=%d/pending=%d", mode, sz.nodes, sz.pending), func(b *testing.B) {
				snap := benchSnapshot(sz.nodes, sz.pending)
				s := New(Config{Backfill: mode})
				b.ReportAllocs()
				var f Forecast
				for b.Loop() {
					var err error
					if f, err = s.Forecast(snap); err != nil {
						b.Fatal(err)
					}
				}
				none := 0
				for _, e := range f.Jobs {
					if e.Start.IsZero() {
						none++
					}
				}
				b.ReportMetric(float64(len(f.Jobs)-none), "started")
				b.ReportMetric(float64(none), "unbounded")
			})
		}
	}
}
