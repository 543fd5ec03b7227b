package backfill

import (
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// CPU and memory over time.
//
// When some node of the index limits CPU or memory, the profile keeps
// them beside the GPUs, by the same rule: a run may use what no job
// holds at any moment of it.
//
//   - A held GPU carries a share of the CPU and memory of the job that
//     holds it ([Profile.AddReleaseUse], and the placements the profile
//     makes); when its release comes, the share is free. A job that
//     never ends has no release: its CPU and memory stay used.
//   - A reservation holds its CPU and memory on its nodes over its run
//     (the node's events carry them).
//   - A run [t, t+d) finds used on a node, at most, the live use less
//     the shares released by each moment, plus the reservations holding
//     that moment, over the run's start and the reservation starts
//     inside it (peakUse). Cursors show that use in their index; a
//     query "now" adds the reservations during [0, d) to the live index
//     for its duration (blockNode), so a job placed now never takes CPU
//     or memory that a reservation needs before it ends.
//
// Requests that ask for CPU or memory are placed by the gang placer on
// such a view; the shortcuts that choose GPUs without it (whole-node
// windows, the choice of GPUs reserved later or busy now) are not used
// for them, a cursor moved over events recomputes the nodes they touch
// rather than apply them in O(1), and a sweep for them also tries the
// releases and reservation ends that free no GPU it can use, since they
// may free CPU or memory (see useFreedAfter).

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

// usedAtWithout returns what node n uses during a run from t (t < 0:
// now): the live use less the shares of the GPUs of held released by t,
// and of those of gone, released now.
func (p *Profile) usedAtWithout(n topology.NodeID, held topology.GPUSet, t time.Duration, gone topology.GPUSet) (cpu, mem int64) {
	cpu, mem = p.ix.UsedCPU(n), p.ix.UsedMemory(n)
	sh := &p.shares
	if sh.cpu == nil || (t < 0 && gone == 0) {
		return cpu, mem
	}
	ne := &p.nodes[n]
	rel := gone
	switch {
	case t < 0: // the live view: gone alone
	case ne.lastRelease <= t:
		rel |= ne.releasedGPUs
	default:
		for _, e := range ne.releases() {
			if e.start <= t {
				rel |= e.set
			}
		}
	}
	base := int(n) * sh.stride
	for g := range (rel & held).All() {
		cpu -= sh.cpu[base+g]
		mem -= sh.mem[base+g]
	}
	return cpu, mem
}

// slotUse is the CPU and memory a reservation of slot s holds on its
// node: none when the profile keeps none.
func (p *Profile) slotUse(s gang.Slot) (cpu, mem int64) {
	if !p.tracksUse() {
		return 0, 0
	}
	return s.CPUMillis, s.MemoryMiB
}

// peakUse returns what node n uses at most during a run [t, t+d): at
// each moment, the live use less the shares of the GPUs of held released
// by then, plus the reservations of the node holding CPU or memory then;
// the most over the run's start and the reservation starts inside it
// (releases only lower the use, so the most is at one of those). t < 0
// is a run from now on the live view: nothing counts as released at its
// start, what is released later does. CPU
// and memory are each taken at their own most. O(r·(e + g)) for r
// reservations with CPU or memory that the run overlaps.
func (p *Profile) peakUse(n topology.NodeID, held topology.GPUSet, t, d time.Duration) (cpu, mem int64) {
	return p.peakUseWithout(n, held, t, d, 0)
}

// peakUseWithout is peakUse with the jobs holding the GPUs gone of held
// gone now: their shares are free from the run's start.
func (p *Profile) peakUseWithout(n topology.NodeID, held topology.GPUSet, t, d time.Duration, gone topology.GPUSet) (cpu, mem int64) {
	from := max(t, 0)
	end := add(from, run(d))
	ne := &p.nodes[n]
	cpu, mem = p.usedAtWithout(n, held, t, gone)
	if ne.lastReservationEnd <= from || ne.firstReservation >= end {
		return cpu, mem
	}
	rs := ne.reservations()
	at := func(m time.Duration) (c, me int64) {
		if m == from {
			c, me = cpu, mem
		} else {
			c, me = p.usedAtWithout(n, held, m, gone) // later than now: released by then
		}
		for i := range rs {
			if e := &rs[i]; e.start <= m && m < e.end {
				c, me = c+e.cpu, me+e.mem
			}
		}
		return c, me
	}
	bestC, bestM := at(from)
	for i := range rs {
		if e := &rs[i]; (e.cpu != 0 || e.mem != 0) && e.start > from && e.start < end {
			c, me := at(e.start)
			bestC, bestM = max(bestC, c), max(bestM, me)
		}
	}
	return bestC, bestM
}

// pointUse makes cursor c's index use on node n what a run of c uses
// at most.
func (p *Profile) pointUse(c *cursor, n topology.NodeID) {
	if !p.tracksUse() {
		return
	}
	cpu, mem := p.peakUse(n, p.seenHeld[n], c.at, c.d)
	c.ix.SetUse(n, cpu, mem)
}

// useCursors brings the use of the nodes of a new reservation pl up to
// date in every cursor that is not to recompute them anyway.
func (p *Profile) useCursors(pl gang.Placement) {
	if !p.tracksUse() || p.seenHeld == nil {
		return
	}
	for _, sl := range pl.Slots {
		if sl.CPUMillis == 0 && sl.MemoryMiB == 0 {
			continue
		}
		for _, c := range p.cursors {
			if !c.stale[sl.Node] {
				p.pointUse(c, sl.Node)
			}
		}
	}
}

// roomFor reports whether node n has the CPU and memory of slot sl for
// a run of d from t (t <= 0: now, on the live view), besides what the
// run finds used at most (peakUse).
func (p *Profile) roomFor(sl gang.Slot, t, d time.Duration) bool {
	if !p.tracksUse() || (sl.CPUMillis == 0 && sl.MemoryMiB == 0) {
		return true
	}
	n := sl.Node
	if t <= 0 {
		t = -1
	}
	cpu, mem := p.peakUse(n, p.ix.Held(n), t, d)
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

// UseOn returns the CPU (millicores) and memory (MiB) that node n has
// in use at most during a run of d from t, by the rules of this file;
// t < 0 is a run from now on the live view (the use now, nothing
// released, plus the reservations during [0, d)). With
// [Profile.UsableOn] it is the view of one node, for callers that place
// a job on a few nodes of their own index. O(r·(e + g)) for e events,
// r reservations and g GPUs of n.
func (p *Profile) UseOn(n topology.NodeID, t, d time.Duration) (cpu, mem int64) {
	return p.peakUse(n, p.ix.Held(n), t, d)
}

// UseOnWithout is UseOn for a run of d from now (on the live view) were
// the jobs that hold the GPUs gone of node n gone now: the use a
// preemptor finds once its victims stop. Subtracting their CPU and
// memory from UseOn would not do: the most may come after they would
// have ended anyway.
func (p *Profile) UseOnWithout(n topology.NodeID, d time.Duration, gone topology.GPUSet) (cpu, mem int64) {
	return p.peakUseWithout(n, p.ix.Held(n), -1, d, gone)
}
