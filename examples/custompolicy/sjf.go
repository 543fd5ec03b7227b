package main

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/scheduler"
)

// shortestFirst is an Orderer (use it as scheduler.OrderFunc(shortestFirst)):
// tier first, then the requested time limit, shortest first, with jobs
// that have no limit last, then ID. Like every Orderer it only permutes the
// slice of pointers; it never writes through them.
func shortestFirst(_ *scheduler.Snapshot, jobs []*scheduler.Job) {
	slices.SortStableFunc(jobs, func(a, b *scheduler.Job) int {
		return cmp.Or(
			cmp.Compare(a.Tier.Level(scheduler.DefaultTiers), b.Tier.Level(scheduler.DefaultTiers)),
			cmp.Compare(requested(a), requested(b)),
			strings.Compare(a.ID, b.ID),
		)
	})
}

// requested is j's time limit, or the longest duration when it has none.
func requested(j *scheduler.Job) time.Duration {
	if j.TimeLimit <= 0 {
		return math.MaxInt64
	}
	return j.TimeLimit
}
