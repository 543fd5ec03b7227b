package sim_test

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
)

// Four jobs on two nodes of 8 GPUs, first come first served with EASY
// backfill. "big" needs both nodes and waits for "long"; "short" and
// "late" fit on the other node and end, by their limits, before "long"
// does, so they backfill without delaying "big". "late" underestimated
// its run time and is killed at its limit.
func ExampleRun() {
	jobs := []sim.Job{
		{ID: "long", Submit: 0, Run: 2 * time.Hour, Limit: 2 * time.Hour, Members: 1, GPUsPerMember: 8},
		{ID: "big", Submit: time.Minute, Run: time.Hour, Limit: time.Hour, Members: 2, GPUsPerMember: 8},
		{ID: "short", Submit: 2 * time.Minute, Run: 30 * time.Minute, Limit: time.Hour, Members: 1, GPUsPerMember: 4},
		{ID: "late", Submit: 3 * time.Minute, Run: 90 * time.Minute, Limit: 40 * time.Minute, Members: 1, GPUsPerMember: 4},
	}
	res, err := sim.Run(sim.Uniform(2, 8), jobs, scheduler.Config{Order: scheduler.TierOrder{}}, sim.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range res.Jobs {
		fmt.Printf("%-5s %-9s start %-6s finish %s\n", j.ID, j.Outcome, j.Start, j.Finish)
	}
	s := res.Summary
	fmt.Printf("makespan %s, utilization %.2f, mean bounded slowdown %.2f\n", s.Makespan, s.Utilization, s.MeanBoundedSlowdown)
	// Output:
	// long  completed start 0s     finish 2h0m0s
	// big   completed start 2h0m0s finish 3h0m0s
	// short completed start 2m0s   finish 32m0s
	// late  killed    start 3m0s   finish 43m0s
	// makespan 3h0m0s, utilization 0.76, mean bounded slowdown 1.50
}
