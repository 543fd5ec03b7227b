package scheduler

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkForecast measures Forecast on the benchmark snapshots under
// EASY (the default policy: the Step reserves one job, the forecast
// plans every other waiting job) and conservative backfill (the Step
// reserves them all, the forecast adds little), and under EASY with a
// one-day planning horizon (jobs that cannot start within it get no
// start), and reports how many jobs got a start and how many none.
func BenchmarkForecast(b *testing.B) {
	for _, policy := range []struct {
		name string
		cfg  Config
	}{
		{"easy", Config{Backfill: EASY}},
		{"conservative", Config{Backfill: Conservative}},
		{"easy-horizon-24h", Config{Backfill: EASY, Horizon: 24 * time.Hour}},
	} {
		for _, sz := range benchSizes {
			b.Run(fmt.Sprintf("%s/nodes=%d/pending=%d", policy.name, sz.nodes, sz.pending), func(b *testing.B) {
				snap := benchSnapshot(sz.nodes, sz.pending)
				s := New(policy.cfg)
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
