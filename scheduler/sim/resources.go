package sim

import (
	"slices"
	"strings"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// resBook keeps the CPU and memory held on each node, for clusters where
// some node limits them (see [Point.Stranded]); a run on a cluster of no
// such node keeps none (runner.rb is nil).
type resBook struct {
	cpu, mem       []int // held on node n
	cpuCap, memCap int   // capacity of the nodes that limit it
	cpuUsed        int   // held on nodes that limit CPU
	memUsed        int   // held on nodes that limit memory
	// stranded is the figure for the state as it is, valid unless dirty.
	stranded int
	dirty    bool
}

// newResBook returns the book of cluster nodes, nil when no node limits
// CPU or memory.
func newResBook(nodes []topology.Node) *resBook {
	limited := slices.ContainsFunc(nodes, func(n topology.Node) bool { return n.CPUMillis > 0 || n.MemoryMiB > 0 })
	if !limited {
		return nil
	}
	b := &resBook{cpu: make([]int, len(nodes)), mem: make([]int, len(nodes)), dirty: true}
	for i := range nodes {
		b.cpuCap += nodes[i].CPUMillis
		b.memCap += nodes[i].MemoryMiB
	}
	return b
}

// hold adds (sign 1) or removes (sign -1) the CPU and memory of job j's
// allocation a.
func (b *resBook) hold(r *runner, j *Job, a topology.Allocation, sign int) {
	b.dirty = true
	if j.CPUMillis == 0 && j.MemoryMiB == 0 {
		return
	}
	for _, e := range a {
		n, _ := r.nodes.find(e.Node)
		members := len(e.GPUs) / j.GPUsPerMember
		c, m := sign*members*j.CPUMillis, sign*members*j.MemoryMiB
		b.cpu[n] += c
		b.mem[n] += m
		node := &r.pool.nodes[n]
		if node.CPUMillis > 0 {
			b.cpuUsed += c
		}
		if node.MemoryMiB > 0 {
			b.memUsed += m
		}
	}
}

// strandedGPUs returns the free GPUs of ready nodes whose free CPU or
// memory cannot hold one member of the pending job that asks least of
// it, or, with no job pending (or none asking for it), is used up. It
// reads every node and pending job, so it is computed only after a
// change.
func (b *resBook) strandedGPUs(r *runner) int {
	if !b.dirty {
		return b.stranded
	}
	needCPU, needMem := 0, 0
	first := true
	for k := range r.snap.Jobs {
		j := &r.snap.Jobs[k]
		if j.State != scheduler.Pending {
			continue
		}
		if first {
			needCPU, needMem, first = j.CPUMillis, j.MemoryMiB, false
			continue
		}
		needCPU, needMem = min(needCPU, j.CPUMillis), min(needMem, j.MemoryMiB)
	}
	needCPU, needMem = max(needCPU, 1), max(needMem, 1)
	s := 0
	for n := range r.pool.nodes {
		node := &r.pool.nodes[n]
		if node.State != topology.Ready {
			continue
		}
		free := node.GPUs - (r.held[n] | topology.SetOf(node.Unhealthy...)).Len()
		if free <= 0 {
			continue
		}
		if (node.CPUMillis > 0 && node.CPUMillis-b.cpu[n] < needCPU) ||
			(node.MemoryMiB > 0 && node.MemoryMiB-b.mem[n] < needMem) {
			s += free
		}
	}
	b.stranded, b.dirty = s, false
	return s
}

// Reserved is the reason [Result.Reasons] gives the pending jobs that the
// decision reserved (a start time, no reason of scheduler.Pending).
const Reserved scheduler.Reason = "reserved"

// reasonBook counts the pending jobs by the reason the latest decision
// gave ([Reserved] for those it reserved), each reason numbered in the
// order it was first seen.
type reasonBook struct {
	ix     map[scheduler.Reason]int32
	names  []scheduler.Reason
	counts []int
}

// set replaces the counts with those of decision d.
func (b *reasonBook) set(d *scheduler.Decision) {
	clear(b.counts)
	for range d.Reservations {
		b.count(Reserved)
	}
	for k := range d.Pending {
		b.count(d.Pending[k].Reason)
	}
}

// count counts one job of reason why.
func (b *reasonBook) count(why scheduler.Reason) {
	i, ok := b.ix[why]
	if !ok {
		if b.ix == nil {
			b.ix = map[scheduler.Reason]int32{}
		}
		i = int32(len(b.names))
		b.ix[why] = i
		b.names = append(b.names, why)
		b.counts = append(b.counts, 0)
	}
	b.counts[i]++
}

// sorted returns the reasons in name order and, for each, its number.
func (b *reasonBook) sorted() ([]scheduler.Reason, []int32) {
	names := slices.Clone(b.names)
	slices.SortFunc(names, func(x, y scheduler.Reason) int { return strings.Compare(string(x), string(y)) })
	of := make([]int32, len(names))
	for k, n := range names {
		of[k] = b.ix[n]
	}
	return names, of
}
