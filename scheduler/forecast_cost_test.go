package scheduler

import (
	"testing"

	"github.com/gpusched/gpusched/internal/measure"
)

// TestForecastCost holds what Forecast adds to a Step, in heap bytes and
// allocations (counted, not timed): on the benchmark snapshots of 256
// nodes with 1,000 and 10,000 pending jobs, a forecast under EASY
// allocates at most 2 KiB and five allocations per pending job more than
// the EASY Step on the same snapshot, and no more than a conservative
// Step, which reserves every blocked job as the forecast does. (A
// forecast that kept each job's planned GPUs as an Allocation, as the
// tests' ForecastPlan does, fails the first bound.)
func TestForecastCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two benchmark snapshots")
	}
	for _, pending := range []int{1000, 10000} {
		snap := benchSnapshot(256, pending)
		fb, fm := measure.Allocated(func() {
			if _, err := New(Config{}).Forecast(snap); err != nil {
				t.Fatal(err)
			}
		})
		eb, em := measure.Allocated(func() {
			if _, err := New(Config{}).Step(snap); err != nil {
				t.Fatal(err)
			}
		})
		cb, cm := measure.Allocated(func() {
			if _, err := New(Config{Backfill: Conservative}).Step(snap); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("pending %d: forecast %d B in %d allocations; EASY Step %d B in %d; conservative Step %d B in %d", pending, fb, fm, eb, em, cb, cm)
		if n := uint64(pending); fb > eb+2048*n || fm > em+5*n {
			t.Errorf("pending %d: forecast %d B in %d allocations, over the EASY Step's %d B in %d plus 2 KiB and five allocations per pending job", pending, fb, fm, eb, em)
		}
		if fb > cb || fm > cm {
			t.Errorf("pending %d: forecast %d B in %d allocations, over a conservative Step's %d B in %d", pending, fb, fm, cb, cm)
		}
	}
}
