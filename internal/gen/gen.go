package gen

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// Now is the fixed time of every generated snapshot.
var Now = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

// GPUTypes are the GPU types a generated cluster draws from.
var GPUTypes = []string{"H100", "A100"}

// Teams are the team names generated jobs belong to.
var Teams = []string{"team-a", "team-b", "team-c"}

// Cluster draws a valid cluster: 1–64 nodes of 4 or 8 GPUs, zero to two
// topology levels ("spine", then "leaf") with up to three domains each,
// one or two GPU types, a few draining or down nodes and a few unhealthy
// GPUs. Leaf names repeat across spines, so domains are told apart only
// by their path.
func Cluster(t *rapid.T) topology.Cluster {
	var c topology.Cluster
	nl := rapid.IntRange(0, 2).Draw(t, "levels")
	c.Levels = []string{"spine", "leaf"}[:nl]
	spines := rapid.IntRange(1, 3).Draw(t, "spines")
	leaves := rapid.IntRange(1, 3).Draw(t, "leaves")
	types := GPUTypes[:rapid.IntRange(1, 2).Draw(t, "types")]
	n := rapid.IntRange(1, 64).Draw(t, "nodes")
	for i := range n {
		node := topology.Node{
			Name:    fmt.Sprintf("n%02d", i),
			GPUs:    rapid.SampledFrom([]int{4, 8, 8}).Draw(t, "gpus"),
			GPUType: rapid.SampledFrom(types).Draw(t, "type"),
			Domains: map[string]string{},
		}
		if nl > 0 {
			node.Domains["spine"] = fmt.Sprintf("s%d", rapid.IntRange(0, spines-1).Draw(t, "spine"))
		}
		if nl > 1 {
			node.Domains["leaf"] = fmt.Sprintf("l%d", rapid.IntRange(0, leaves-1).Draw(t, "leaf"))
		}
		switch rapid.IntRange(0, 19).Draw(t, "state") {
		case 0:
			node.State = topology.Draining
		case 1:
			node.State = topology.Down
		}
		if rapid.IntRange(0, 9).Draw(t, "sick") == 0 {
			for g := range node.GPUs {
				if rapid.IntRange(0, 3).Draw(t, "unhealthy") == 0 {
					node.Unhealthy = append(node.Unhealthy, g)
				}
			}
		}
		c.Nodes = append(c.Nodes, node)
	}
	return c
}

// Running draws running and evicting jobs holding valid, non-overlapping
// allocations on c (on any node, whatever its state or health). Some have
// no time limit, some are past it; evicting jobs carry an eviction time
// and a grace. A job whose members landed on several GPU types has
// MixGPUTypes set. IDs are "r00", "r01", ...
func Running(t *rapid.T, c topology.Cluster) []scheduler.Job {
	held := make([]topology.GPUSet, len(c.Nodes))
	var jobs []scheduler.Job
	k := rapid.IntRange(0, len(c.Nodes)).Draw(t, "running")
	for i := range k {
		g := rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "rgpus")
		want := rapid.IntRange(1, 3).Draw(t, "rmembers")
		j := scheduler.Job{
			ID:            fmt.Sprintf("r%02d", i),
			Team:          rapid.SampledFrom(Teams).Draw(t, "rteam"),
			Tier:          scheduler.TierN(rapid.IntRange(0, 3).Draw(t, "rtier")),
			State:         scheduler.Running,
			GPUsPerMember: g,
			Submitted:     Now.Add(-time.Duration(rapid.IntRange(60, 5000).Draw(t, "rsubmit")) * time.Minute),
		}
		perNode := map[int][]int{}
		var order []int
		for range want {
			start := rapid.IntRange(0, len(c.Nodes)-1).Draw(t, "rnode")
			for off := range c.Nodes {
				ni := (start + off) % len(c.Nodes)
				free := topology.FirstN(c.Nodes[ni].GPUs) &^ held[ni]
				if free.Len() < g {
					continue
				}
				s := free.Lowest(g)
				held[ni] |= s
				if _, ok := perNode[ni]; !ok {
					order = append(order, ni)
				}
				perNode[ni] = append(perNode[ni], s.Indices()...)
				j.Members++
				break
			}
		}
		if j.Members == 0 {
			continue
		}
		for _, ni := range order {
			gs := perNode[ni]
			slices.Sort(gs)
			j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: c.Nodes[ni].Name, GPUs: gs})
			// A job whose members sit on several GPU types mixes types.
			j.MixGPUTypes = j.MixGPUTypes || c.Nodes[ni].GPUType != c.Nodes[order[0]].GPUType
		}
		ago := time.Duration(rapid.IntRange(1, 3000).Draw(t, "rago")) * time.Minute
		j.Started = Now.Add(-ago)
		if rapid.IntRange(0, 3).Draw(t, "rlimited") > 0 {
			// Limits around the age, so that some are past them.
			j.TimeLimit = time.Duration(rapid.IntRange(1, 3600).Draw(t, "rlimit")) * time.Minute
		} else {
			j.Kind = scheduler.Inference
		}
		j.CheckpointGrace = time.Duration(rapid.IntRange(0, 15).Draw(t, "rgrace")) * time.Minute
		if rapid.IntRange(0, 6).Draw(t, "evicting") == 0 {
			j.State = scheduler.Evicting
			if rapid.IntRange(0, 4).Draw(t, "evictedAt") > 0 {
				j.EvictedAt = Now.Add(-time.Duration(rapid.IntRange(0, 20).Draw(t, "evago")) * time.Minute)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// Pending draws pending jobs for c: gangs and pods of 1–16 members of
// 1, 2, 4 or 8 GPUs, some asking for a GPU type (rarely one c does not
// have), some with a required or preferred topology level, most training
// jobs with a time limit, some spread over nodes or over the domains of a
// level, tiers 0–3, spread over [Teams]. IDs are "p00", "p01", ...
func Pending(t *rapid.T, c topology.Cluster) []scheduler.Job {
	k := rapid.IntRange(0, 30).Draw(t, "pending")
	jobs := make([]scheduler.Job, 0, k)
	for i := range k {
		j := scheduler.Job{
			ID:            fmt.Sprintf("p%02d", i),
			Team:          rapid.SampledFrom(Teams).Draw(t, "team"),
			Tier:          scheduler.TierN(rapid.IntRange(0, 3).Draw(t, "tier")),
			GPUsPerMember: rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpusPerMember"),
			Submitted:     Now.Add(-time.Duration(rapid.IntRange(0, 600).Draw(t, "submit")) * time.Minute),
		}
		if rapid.IntRange(0, 2).Draw(t, "gang") == 0 {
			j.Members = rapid.IntRange(1, 16).Draw(t, "members")
		} else {
			j.Members = rapid.IntRange(1, 3).Draw(t, "members")
		}
		switch rapid.IntRange(0, 9).Draw(t, "gpuType") {
		case 0, 1, 2:
			j.GPUType = rapid.SampledFrom(GPUTypes).Draw(t, "typeName")
		case 3:
			j.GPUType = "V100"
		}
		j.MixGPUTypes = j.GPUType == "" && rapid.IntRange(0, 3).Draw(t, "mixGPUTypes") == 0
		if len(c.Levels) > 0 {
			req := rapid.IntRange(-1, len(c.Levels)-1).Draw(t, "required")
			if rapid.Bool().Draw(t, "needsTopology") {
				req = max(req, 0)
			}
			pref := rapid.IntRange(max(req, -1), len(c.Levels)-1).Draw(t, "preferred")
			if req >= 0 {
				j.Topology.Required = c.Levels[req]
			}
			if pref >= 0 && rapid.Bool().Draw(t, "hasPreferred") {
				j.Topology.Preferred = c.Levels[pref]
			}
		}
		if rapid.IntRange(0, 3).Draw(t, "limited") > 0 {
			j.TimeLimit = time.Duration(rapid.IntRange(1, 48).Draw(t, "limit")) * 30 * time.Minute
			j.CheckpointGrace = time.Duration(rapid.IntRange(0, 10).Draw(t, "grace")) * time.Minute
		} else {
			j.Kind = scheduler.Inference
		}
		if rapid.IntRange(0, 4).Draw(t, "spread") == 0 {
			j.Placement = scheduler.Spread
			if len(c.Levels) > 0 && rapid.Bool().Draw(t, "spreadOverDomains") {
				j.SpreadLevel = rapid.SampledFrom(c.Levels).Draw(t, "spreadLevel")
			}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// Snapshot draws a valid snapshot at [Now]: a [Cluster], its [Running]
// and [Pending] jobs, and the [Teams] with shares, usage and, rarely, a
// quota.
func Snapshot(t *rapid.T) *scheduler.Snapshot {
	c := Cluster(t)
	s := &scheduler.Snapshot{Now: Now, Cluster: c}
	for _, name := range Teams {
		tm := scheduler.Team{
			Name:  name,
			Share: float64(rapid.IntRange(1, 50).Draw(t, "share")),
			Usage: float64(rapid.IntRange(0, 1000).Draw(t, "usage")) * 3600,
		}
		if rapid.IntRange(0, 5).Draw(t, "quota") == 0 {
			tm.Quota = &scheduler.Quota{GPUs: rapid.IntRange(0, 256).Draw(t, "quotaGPUs"), BorrowLimit: rapid.IntRange(0, 64).Draw(t, "borrow")}
		}
		s.Teams = append(s.Teams, tm)
	}
	s.Jobs = append(Running(t, c), Pending(t, c)...)
	return s
}

// Clone returns a deep copy of s, sharing no slice, map or pointer.
func Clone(s *scheduler.Snapshot) *scheduler.Snapshot {
	out := *s
	out.Cluster.Levels = slices.Clone(s.Cluster.Levels)
	out.Cluster.Nodes = slices.Clone(s.Cluster.Nodes)
	for i, n := range out.Cluster.Nodes {
		if n.Domains != nil {
			d := make(map[string]string, len(n.Domains))
			for k, v := range n.Domains {
				d[k] = v
			}
			out.Cluster.Nodes[i].Domains = d
		}
		out.Cluster.Nodes[i].Unhealthy = slices.Clone(n.Unhealthy)
	}
	out.Teams = slices.Clone(s.Teams)
	for i, tm := range out.Teams {
		if tm.Quota != nil {
			q := *tm.Quota
			out.Teams[i].Quota = &q
		}
	}
	out.Jobs = slices.Clone(s.Jobs)
	for i := range out.Jobs {
		out.Jobs[i].Allocation = s.Jobs[i].Allocation.Clone()
	}
	return &out
}

// Shuffle returns a deep copy of s with its nodes, teams and jobs in a
// random order.
func Shuffle(t *rapid.T, s *scheduler.Snapshot) *scheduler.Snapshot {
	out := Clone(s)
	out.Cluster.Nodes = rapid.Permutation(out.Cluster.Nodes).Draw(t, "shuffleNodes")
	out.Teams = rapid.Permutation(out.Teams).Draw(t, "shuffleTeams")
	out.Jobs = rapid.Permutation(out.Jobs).Draw(t, "shuffleJobs")
	return out
}

// ShuffleAllocations returns a deep copy of s with the node entries of
// every allocation in a random order.
func ShuffleAllocations(t *rapid.T, s *scheduler.Snapshot) *scheduler.Snapshot {
	out := Clone(s)
	for i := range out.Jobs {
		if len(out.Jobs[i].Allocation) > 1 {
			out.Jobs[i].Allocation = rapid.Permutation(out.Jobs[i].Allocation).Draw(t, "shuffleAlloc")
		}
	}
	return out
}

// WithResources returns a deep copy of s with CPU and memory drawn for
// most nodes (some left unlimited, some limited in one of the two) and
// per-member requests drawn for most jobs, running and pending alike,
// sized so that CPU or memory, not only GPUs, often decides where a
// member fits. Running jobs are not fitted to the capacities: a snapshot
// may report a node over-committed.
func WithResources(t *rapid.T, s *scheduler.Snapshot) *scheduler.Snapshot {
	out := Clone(s)
	for i := range out.Cluster.Nodes {
		n := &out.Cluster.Nodes[i]
		switch rapid.IntRange(0, 5).Draw(t, "resNode") {
		case 0: // unlimited
		case 1:
			n.CPUMillis = rapid.SampledFrom([]int{8000, 16000, 64000}).Draw(t, "cpuCap")
		case 2:
			n.MemoryMiB = rapid.SampledFrom([]int{32768, 131072, 524288}).Draw(t, "memCap")
		default:
			n.CPUMillis = rapid.SampledFrom([]int{8000, 16000, 64000}).Draw(t, "cpuCap")
			n.MemoryMiB = rapid.SampledFrom([]int{32768, 131072, 524288}).Draw(t, "memCap")
		}
	}
	for i := range out.Jobs {
		j := &out.Jobs[i]
		if rapid.IntRange(0, 4).Draw(t, "resJob") == 0 {
			continue
		}
		j.CPUMillis = rapid.SampledFrom([]int{0, 500, 2000, 4000, 8000, 16000}).Draw(t, "cpu")
		j.MemoryMiB = rapid.SampledFrom([]int{0, 4096, 16384, 65536, 131072}).Draw(t, "mem")
	}
	return out
}
