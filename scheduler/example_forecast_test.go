package scheduler_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// Under EASY backfill only the first blocked job holds a reservation;
// the forecast gives every waiting job a start. On 16 nodes of 8 GPUs,
// A runs until 12:00 on half the cluster and B until 24:00 on the rest;
// C (12 nodes) is reserved for when both have ended, D (4 nodes) is
// forecast to start when A ends, beside C's reservation, E (16 nodes)
// after C, and serve, which has no time limit, after E; F, behind
// serve, gets no start.
func ExampleScheduler_Forecast() {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	job := func(id string, members int, limit time.Duration, age time.Duration) scheduler.Job {
		return scheduler.Job{ID: id, Team: "research", Tier: scheduler.P1, Members: members, GPUsPerMember: 8,
			TimeLimit: limit, Submitted: now.Add(-age)}
	}
	snap := &scheduler.Snapshot{Now: now, Cluster: topology.Uniform(16, 8, "H100"), Jobs: []scheduler.Job{
		job("A", 8, 12*time.Hour, 6*time.Hour),
		job("B", 8, 24*time.Hour, 5*time.Hour),
		job("C", 12, 24*time.Hour, 4*time.Hour),
		job("D", 4, 6*time.Hour, 3*time.Hour),
		job("E", 16, 2*time.Hour, 2*time.Hour),
		job("serve", 1, 0, time.Hour),
		job("F", 16, time.Hour, 0),
	}}
	f, err := scheduler.New(scheduler.Config{Order: scheduler.TierOrder{}}).Forecast(snap)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range f.Jobs {
		if e.Start.IsZero() {
			code, _, _ := strings.Cut(e.Reason, ":")
			fmt.Printf("%s: no start (%s)\n", e.Job, code)
			continue
		}
		fmt.Printf("%s: %s\n", e.Job, e.Start.Format(time.RFC3339))
	}
	if err := scheduler.EncodeForecast(os.Stdout, scheduler.Forecast{Jobs: f.Jobs[:1]}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// A: 2026-12-02T00:00:00Z
	// B: 2026-12-02T00:00:00Z
	// C: 2026-12-03T00:00:00Z
	// D: 2026-12-02T12:00:00Z
	// E: 2026-12-04T00:00:00Z
	// F: no start (insufficient-gpus)
	// serve: 2026-12-04T02:00:00Z
	// {
	//   "forecast": [
	//     {
	//       "job": "A",
	//       "start": "2026-12-02T00:00:00Z"
	//     }
	//   ]
	// }
}
