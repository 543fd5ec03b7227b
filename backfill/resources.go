package backfill

import (
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// CPU and memory over time.
//
// When some node of the index limits CPU or memory, the profile keeps
// them beside the GPUs, by these rules:
//
//   - A reservation holds its CPU and memory on its nodes from now on,
//     not only over its run: [Profile.Reserve] adds them to the use of
//     the live index (and of every cursor), [Profile.Unreserve] takes
//     them back. So a job placed now never takes CPU or memory that a
//     reservation needs, whenever it ends, and a later reservation never
//     counts on it either. This is sound and simple; it may keep a short
//     job off a node whose CPU a reservation needs only after the job
//     would have ended.
//   - A held GPU carries a share of the CPU and memory of the job that
//     holds it ([Profile.AddReleaseUse], and the placements the profile
//     makes): when its release comes, the share is free. So the view of
//     a run from t counts the live use minus the shares of the GPUs held
//     now and released by t. A job that never ends has no release: its
//     CPU and memory stay used.
//
// A run found this way can use its nodes' CPU and memory at every moment
// of it: at any moment, the jobs running are those held now and not yet
// released, those placed now, and reservations, all counted.
//
// Requests that ask for CPU or memory are placed by the gang placer on
// the cursor's view; the shortcuts that choose GPUs without it (whole-node
// windows, the choice of GPUs reserved later or busy now) are not used
// for them.

// limited reports whether CPU or memory can decide where r fits on ix.
func limited(ix *topology.Index, r gang.Request) bool {
	return (r.CPUMillis > 0 || r.MemoryMiB > 0) && ix.Limited()
}

// useShares is the share of CPU and memory each GPU of each node
// carries, at node*stride+gpu; nil until the first release with some.
type useShares struct {
	cpu, mem []int64
	stride   int
}

// tracksUse reports whether the profile keeps CPU and memory.
func (p *Profile) tracksUse() bool { return p.ix.Limited() }

// setShares spreads cpu and mem over the GPUs s of node n (the lowest
// takes the remainder).
func (p *Profile) setShares(n topology.NodeID, s topology.GPUSet, cpu, mem int64) {
	if !p.tracksUse() || s == 0 {
		return
	}
	sh := &p.shares
	if sh.cpu == nil {
		if cpu == 0 && mem == 0 {
			return
		}
		sh.stride = p.ix.MaxGPUs()
		sh.cpu = make([]int64, p.ix.NumNodes()*sh.stride)
		sh.mem = make([]int64, p.ix.NumNodes()*sh.stride)
	}
	k := int64(s.Len())
	base := int(n) * sh.stride
	for i, g := range s.Indices() {
		c, m := cpu/k, mem/k
		if i == 0 {
			c, m = cpu-c*(k-1), mem-m*(k-1)
		}
		sh.cpu[base+g], sh.mem[base+g] = c, m
	}
}

// usedAt returns what node n uses during a run from t (t < 0: now):
// the live use less the shares of the GPUs of held that are released by
// t.
func (p *Profile) usedAt(n topology.NodeID, held topology.GPUSet, t time.Duration) (cpu, mem int64) {
	cpu, mem = p.ix.UsedCPU(n), p.ix.UsedMemory(n)
	sh := &p.shares
	if sh.cpu == nil || t < 0 {
		return cpu, mem
	}
	ne := &p.nodes[n]
	var rel topology.GPUSet
	if ne.lastRelease <= t {
		rel = ne.releasedGPUs
	} else {
		for _, e := range ne.releases() {
			if e.start <= t {
				rel |= e.set
			}
		}
	}
	base := int(n) * sh.stride
	for _, g := range (rel & held).Indices() {
		cpu -= sh.cpu[base+g]
		mem -= sh.mem[base+g]
	}
	return cpu, mem
}

// pointUse makes cursor c's index use on node n what a run of c uses.
func (p *Profile) pointUse(c *cursor, n topology.NodeID) {
	if !p.tracksUse() {
		return
	}
	cpu, mem := p.usedAt(n, p.seenHeld[n], c.at)
	c.ix.SetUse(n, cpu, mem)
}

// pin adds (sign 1) or takes back (sign -1) the CPU and memory of the
// slots of a reservation in the live index and every cursor.
func (p *Profile) pin(pl gang.Placement, sign int64) {
	if !p.tracksUse() {
		return
	}
	for _, sl := range pl.Slots {
		if sl.CPUMillis == 0 && sl.MemoryMiB == 0 {
			continue
		}
		p.ix.AddUse(sl.Node, sign*sl.CPUMillis, sign*sl.MemoryMiB)
		for _, c := range p.cursors {
			c.ix.AddUse(sl.Node, sign*sl.CPUMillis, sign*sl.MemoryMiB)
		}
		if sign < 0 {
			p.memo.forget() // CPU or memory freed: a remembered answer may be too late
		}
	}
}

// roomFor reports whether node n has the CPU and memory of slot sl for
// a run from t (t <= 0: now), with held the GPUs held now.
func (p *Profile) roomFor(sl gang.Slot, t time.Duration) bool {
	if !p.tracksUse() || (sl.CPUMillis == 0 && sl.MemoryMiB == 0) {
		return true
	}
	n := sl.Node
	cpu, mem := p.ix.UsedCPU(n), p.ix.UsedMemory(n)
	if t > 0 {
		cpu, mem = p.usedAt(n, p.ix.Held(n), t)
	}
	fits := func(capacity, used, want int64) bool {
		return want == 0 || capacity == topology.Unlimited || used+want <= capacity
	}
	return fits(p.ix.CPUCapacity(n), cpu, sl.CPUMillis) && fits(p.ix.MemoryCapacity(n), mem, sl.MemoryMiB)
}

// AddReleaseUse is [Profile.AddRelease] for GPUs whose job uses cpu
// millicores and mem MiB on node n: those become free with the GPUs.
// O(e + log E + g) for e events of the node and g GPUs of s.
func (p *Profile) AddReleaseUse(n topology.NodeID, s topology.GPUSet, at time.Duration, cpu, mem int64) {
	p.setShares(n, s, cpu, mem)
	p.AddRelease(n, s, at)
}

// UseOn returns the CPU (millicores) and memory (MiB) that node n has in
// use for a run from t, by the rules of this file: its use now (t <= 0),
// or its use now less what the jobs released by t free. With
// [Profile.UsableOn] it is the view of one node, for callers that place
// a job on a few nodes of their own index. O(e + g) for e events and g
// GPUs of n.
func (p *Profile) UseOn(n topology.NodeID, t time.Duration) (cpu, mem int64) {
	if t <= 0 {
		return p.ix.UsedCPU(n), p.ix.UsedMemory(n)
	}
	return p.usedAt(n, p.ix.Held(n), t)
}
