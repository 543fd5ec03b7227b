package gen

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// The peer workloads of the design's performance section share one shape:
// nodes of 8 GPUs; single-node jobs of 1, 2, 4 or 8 GPUs drawn 4:2:1:1;
// time limits uniform in 30–600 minutes. [PeerQueue] and [PeerEmpty] build
// them, deterministically from their sizes, for the in-process benchmarks
// of scheduler and the whole-command benchmarks of examples/step.

// peerNow is the time of every peer snapshot.
func peerNow() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) }

// Peer is one peer's measurement and the workload that mirrors it.
type Peer struct {
	Name     string                     // e.g. "slurm/nodes=1000/jobs=10000"
	Snapshot func() *scheduler.Snapshot // builds the workload
	Config   scheduler.Config           // the policy gpusched runs it under
	Policy   string                     // the same policy as a policy file's JSON
	Seconds  float64                    // the peer's published time for it
}

// Peers lists the design's peer measurements:
//   - Slurm 22.05 sched/backfill, one backfill cycle at 1,000 nodes and
//     10,000 jobs (12.1 s, testing about 1,000 of 6,879 pending jobs) and at
//     64 nodes and 2,000 jobs (1.76 s); gpusched runs conservative
//     backfill, so every waiting job gets a reservation;
//   - KAI-Scheduler's allocate action placing 5,000 one-GPU jobs on 1,000
//     idle nodes (14.8 s);
//   - Nomad, one evaluation placing 1,000 allocations of 8 GPUs on 10,000
//     nodes (221 ms): here 1,000 jobs of one whole node each.
func Peers() []Peer {
	conservative := scheduler.Config{Backfill: scheduler.Conservative}
	return []Peer{
		{"slurm/nodes=1000/jobs=10000", func() *scheduler.Snapshot { return PeerQueue(1000, 10000) }, conservative, `{"backfill": "conservative"}`, 12.1},
		{"slurm/nodes=64/jobs=2000", func() *scheduler.Snapshot { return PeerQueue(64, 2000) }, conservative, `{"backfill": "conservative"}`, 1.76},
		{"kai/nodes=1000/jobs=5000", func() *scheduler.Snapshot { return PeerEmpty(1000, 5000, 1) }, scheduler.Config{}, `{}`, 14.8},
		{"nomad/nodes=10000/jobs=1000", func() *scheduler.Snapshot { return PeerEmpty(10000, 1000, 8) }, scheduler.Config{}, `{}`, 0.221},
	}
}

// peerNodes returns n nodes of 8 GPUs with no topology levels.
func peerNodes(n int) topology.Cluster {
	var c topology.Cluster
	for i := range n {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%05d", i), GPUs: 8, GPUType: "H100"})
	}
	return c
}

// peerJob returns pending job i of the shared shape: 1, 2, 4 or 8 GPUs
// drawn 4:2:1:1, a time limit uniform in 30–600 minutes.
func peerJob(rng *rand.Rand, i int) scheduler.Job {
	sizes := []int{1, 1, 1, 1, 2, 2, 4, 8}
	return scheduler.Job{
		ID: fmt.Sprintf("j%06d", i), Team: "users", Tier: scheduler.P2,
		Submitted: peerNow().Add(-time.Duration(10000-i%10000) * time.Second),
		Members:   1, GPUsPerMember: sizes[rng.IntN(len(sizes))],
		TimeLimit: time.Duration(30+rng.IntN(571)) * time.Minute,
	}
}

// PeerQueue builds the Slurm comparison: jobs of the shared shape
// submitted in order to a cluster of the given size; they start in
// submission order, each on the first node with room, until the next one
// finds none, and the rest wait. The running ones started at random
// moments within their time limits. At 1,000 nodes and 10,000 jobs 3,185
// run and 6,815 wait; the published cycle had 6,879 pending.
func PeerQueue(nodes, jobs int) *scheduler.Snapshot {
	rng := rand.New(rand.NewPCG(uint64(nodes), uint64(jobs)))
	s := &scheduler.Snapshot{Now: peerNow(), Cluster: peerNodes(nodes)}
	free := make([]int, nodes)
	for i := range free {
		free[i] = 8
	}
	first, running := 0, true
	for i := range jobs {
		j := peerJob(rng, i)
		if running {
			for first < nodes && free[first] == 0 {
				first++
			}
			n := first
			for n < nodes && free[n] < j.GPUsPerMember {
				n++
			}
			if n == nodes {
				running = false
			} else {
				gpus := make([]int, j.GPUsPerMember)
				for k := range gpus {
					gpus[k] = 8 - free[n] + k
				}
				free[n] -= j.GPUsPerMember
				j.State = scheduler.Running
				j.Started = peerNow().Add(-time.Duration(rng.IntN(int(j.TimeLimit/time.Minute))) * time.Minute)
				j.Allocation = topology.Allocation{{Node: s.Cluster.Nodes[n].Name, GPUs: gpus}}
			}
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// PeerEmpty builds a cluster of idle nodes and jobs pending jobs of gpus
// GPUs each, with the shared shape's time limits.
func PeerEmpty(nodes, jobs, gpus int) *scheduler.Snapshot {
	rng := rand.New(rand.NewPCG(uint64(nodes), uint64(jobs)))
	s := &scheduler.Snapshot{Now: peerNow(), Cluster: peerNodes(nodes)}
	for i := range jobs {
		j := peerJob(rng, i)
		j.GPUsPerMember = gpus
		s.Jobs = append(s.Jobs, j)
	}
	return s
}
