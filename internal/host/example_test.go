package host_test

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/internal/host"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// The host loop of the package comment on two 8-GPU nodes: A runs on
// n00 with a 2-hour limit but really needs one hour; B, a two-node gang,
// arrives at 09:30 and is reserved for 11:00, A's limit, which is all
// Step knows. The host knows better: A ends at 10:00 and B starts then.
// Next finds each moment that needs a Step.
func Example() {
	day := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	a := scheduler.Job{ID: "A", Tier: scheduler.P1, Members: 1, GPUsPerMember: 8, TimeLimit: 2 * time.Hour,
		Submitted: day, State: scheduler.Running, Started: day,
		Allocation: topology.Allocation{{Node: "n00", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}}
	b := scheduler.Job{ID: "B", Tier: scheduler.P1, Members: 2, GPUsPerMember: 8, TimeLimit: time.Hour,
		Submitted: day.Add(30 * time.Minute)}

	h := host.New(topology.Uniform(2, 8, "H100"), a)
	h.Actual = map[string]time.Duration{"A": time.Hour, "B": time.Hour}
	h.Arrive = []scheduler.Job{b}
	s := scheduler.New(scheduler.Config{})
	for now, steps := day, 0; steps < 4; steps++ {
		for _, e := range h.Advance(now) {
			fmt.Printf("%s %s\n", now.Format("15:04"), e)
		}
		d, err := s.Step(h.Snapshot(now))
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, p := range d.Placements {
			fmt.Printf("%s start %s on %s\n", now.Format("15:04"), p.Job, host.Compact(p.Allocation))
		}
		for _, r := range d.Reservations {
			fmt.Printf("%s reserve %s from %s, %s from now\n", now.Format("15:04"), r.Job,
				r.Start.Format("15:04"), host.Duration(r.Start.Sub(now)))
		}
		h.Apply(now, d)
		now = h.Next(now, d, 24*time.Hour)
	}
	// Output:
	// 09:30 B submitted
	// 09:30 reserve B from 11:00, 1h30m from now
	// 10:00 A finished at 10:00
	// 10:00 start B on n00-n01
	// 11:00 B finished at 11:00
}
