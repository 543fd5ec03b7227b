package scheduler_test

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
)

// withEligible gives some pending jobs of s a list of eligible nodes: a
// random subset of the cluster's nodes, sometimes empty, in random order.
func withEligible(t *rapid.T, s *scheduler.Snapshot) *scheduler.Snapshot {
	names := make([]string, len(s.Cluster.Nodes))
	for i, n := range s.Cluster.Nodes {
		names[i] = n.Name
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.State != scheduler.Pending || rapid.IntRange(0, 2).Draw(t, "limited") != 0 {
			continue
		}
		list := []string{}
		for _, k := range rapid.Permutation(names).Draw(t, "order") {
			if rapid.IntRange(0, 2).Draw(t, "eligible") != 0 {
				list = append(list, k)
			}
		}
		j.EligibleNodes = list
	}
	return s
}

// checkEligible: no member of a job with a list is placed or reserved off
// its eligible nodes; every victim of a preemptor holds GPUs on a node of
// the preemptor's reservation (so on its eligible nodes); and only jobs
// with a list wait with reason no-eligible-node.
func checkEligible(s *scheduler.Snapshot, d *scheduler.Decision) error {
	byID := map[string]*scheduler.Job{}
	for i := range s.Jobs {
		byID[s.Jobs[i].ID] = &s.Jobs[i]
	}
	off := func(job string, nodes []string) error {
		j := byID[job]
		if j.EligibleNodes == nil {
			return nil
		}
		for _, n := range nodes {
			if !slices.Contains(j.EligibleNodes, n) {
				return fmt.Errorf("%s uses %s, not among its eligible nodes %v", job, n, j.EligibleNodes)
			}
		}
		return nil
	}
	reservedOn := map[string][]string{}
	for _, p := range d.Placements {
		var ns []string
		for _, na := range p.Allocation {
			ns = append(ns, na.Node)
		}
		if err := off(p.Job, ns); err != nil {
			return fmt.Errorf("placement: %w", err)
		}
	}
	for _, r := range d.Reservations {
		var ns []string
		for _, na := range r.Allocation {
			ns = append(ns, na.Node)
		}
		reservedOn[r.Job] = ns
		if err := off(r.Job, ns); err != nil {
			return fmt.Errorf("reservation: %w", err)
		}
	}
	for _, e := range d.Evictions {
		if e.Reason != scheduler.EvictPreempted || byID[e.By].EligibleNodes == nil {
			continue
		}
		helps := false
		for _, na := range byID[e.Job].Allocation {
			helps = helps || slices.Contains(reservedOn[e.By], na.Node)
		}
		if !helps {
			return fmt.Errorf("victim %s of %s holds no GPU on its reservation %v", e.Job, e.By, reservedOn[e.By])
		}
	}
	for _, w := range d.Pending {
		if w.Reason == scheduler.ReasonNoEligibleNode && byID[w.Job].EligibleNodes == nil {
			return fmt.Errorf("%s waits with %s but has no list", w.Job, w.Reason)
		}
	}
	return nil
}

// TestEligibleNodesHonoured: under every policy, on random worlds and on
// crowded ones where preemption is frequent, jobs stay on their eligible
// nodes, and the invariants of every decision still hold.
func TestEligibleNodesHonoured(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				var s *scheduler.Snapshot
				if rapid.Bool().Draw(t, "crowded") {
					s = withEligible(t, crowded(t))
				} else {
					s = withEligible(t, gen.Snapshot(t))
				}
				d := step(t, m.cfg, s)
				if err := checkEligible(s, d); err != nil {
					t.Fatalf("%v\n%s", err, dump(s, d))
				}
				w := newWorld(s, d, m.cfg)
				for _, c := range []func(*world) error{checkNoDoubleAllocation, checkNoJobLost, checkGangs, checkReservationsHold} {
					if err := c(w); err != nil {
						t.Fatalf("%v\n%s", err, dump(s, d))
					}
				}
			})
		})
	}
}

// TestEligibleMemoChangesNothing: the Step's memos, whose keys carry a
// job's list, decide as a Step without them when jobs of one shape have
// different lists.
func TestEligibleMemoChangesNothing(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { sameWithoutMemo(t, m.cfg, withEligible(t, crowded(t))) })
		})
	}
}

// TestEligibleStartsAgree: the earliest start of a job with a list,
// sought at the instants its eligible nodes gain GPUs, is the one the
// profile's sweep of the whole cluster finds with the other nodes
// avoided.
func TestEligibleStartsAgree(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				var s *scheduler.Snapshot
				if rapid.Bool().Draw(t, "crowded") {
					s = withEligible(t, crowded(t))
				} else {
					s = withEligible(t, gen.Snapshot(t))
				}
				if err := scheduler.EligibleStartsAgree(m.cfg, s); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
