package topology

import (
	"math"
	"slices"
)

// CPU and memory besides GPUs.
//
// A node may limit the CPU (millicores) and memory (MiB) of the members
// on it (Node.CPUMillis, Node.MemoryMiB; zero is no limit). The index
// keeps, per node, the CPU and memory in use, and a member fits a node
// only where its GPUs, CPU and memory all fit ([Index.Members]).
//
// The buckets stay keyed by free GPUs. Beside each bucket's count the
// index keeps a lower and an upper bound of the free CPU and of the free
// memory of the nodes in it: a node entering a bucket, or changing its
// use while in it, widens the bounds; a node leaving narrows nothing; a
// query that reads every node of a bucket makes them exact again. So a
// query for members of g GPUs, c CPU and m memory counts a whole bucket
// at once when its lower bounds hold as many members as its GPUs do (the
// common case, CPU and memory plentiful), skips it when its upper bounds
// hold none, and reads it node by node only in between.
//
// An index built from a cluster where no node limits CPU or memory keeps
// none of this ([Index.Limited] is false): its queries and changes cost
// what they did without resources.

// Unlimited is the free CPU or memory reported for a node that does not
// limit it.
const Unlimited int64 = math.MaxInt64 / 4

// res is the CPU and memory of one node or bucket.
type res struct{ cpu, mem int64 }

// resources is what an index knows of CPU and memory: nil when no node
// limits either.
type resources struct {
	// cap is each node's capacity (Unlimited where it sets none), shared
	// by clones; used is each node's use, each index's own.
	cap, used []res
	// least is the least capacity of any node (Unlimited where none sets
	// one).
	least res
	// Per level, per (group, free count) as the counts: the bounds of
	// the free CPU and memory of the nodes in the bucket.
	lo, hi [][]res
}

func (r *resources) clone() *resources {
	if r == nil {
		return nil
	}
	c := &resources{cap: r.cap, used: slices.Clone(r.used), lo: make([][]res, len(r.lo)), hi: make([][]res, len(r.hi))}
	for i := range r.lo {
		c.lo[i], c.hi[i] = slices.Clone(r.lo[i]), slices.Clone(r.hi[i])
	}
	return c
}

// addResources sets up the CPU and memory of c's nodes (in NodeID order
// by order) once the levels are laid out and before any node is linked.
func (ix *Index) addResources(c *Cluster, order []int) {
	limited := false
	for i := range c.Nodes {
		limited = limited || c.Nodes[i].CPUMillis > 0 || c.Nodes[i].MemoryMiB > 0
	}
	if !limited {
		return
	}
	r := &resources{cap: make([]res, len(order)), used: make([]res, len(order)), least: res{Unlimited, Unlimited}}
	for id, oi := range order {
		n := &c.Nodes[oi]
		r.cap[id] = res{Unlimited, Unlimited}
		if n.CPUMillis > 0 {
			r.cap[id].cpu = int64(n.CPUMillis)
		}
		if n.MemoryMiB > 0 {
			r.cap[id].mem = int64(n.MemoryMiB)
		}
		r.least.cpu, r.least.mem = min(r.least.cpu, r.cap[id].cpu), min(r.least.mem, r.cap[id].mem)
	}
	r.lo, r.hi = make([][]res, len(ix.levels)), make([][]res, len(ix.levels))
	for li := range ix.levels {
		r.lo[li] = make([]res, len(ix.levels[li].counts))
		r.hi[li] = make([]res, len(ix.levels[li].counts))
	}
	ix.res = r
}

// Limited reports whether some node of the index limits CPU or memory.
// When none does, every resource request fits wherever its GPUs do.
func (ix *Index) Limited() bool { return ix.res != nil }

// LeastCapacity returns the least CPU (millicores) and memory (MiB)
// capacity of any node, [Unlimited] where no node sets one. O(1).
func (ix *Index) LeastCapacity() (cpu, mem int64) {
	if ix.res == nil {
		return Unlimited, Unlimited
	}
	return ix.res.least.cpu, ix.res.least.mem
}

// CPUCapacity returns the CPU capacity of node n in millicores, and
// [Unlimited] when it sets none.
func (ix *Index) CPUCapacity(n NodeID) int64 {
	if ix.res == nil {
		return Unlimited
	}
	return ix.res.cap[n].cpu
}

// MemoryCapacity returns the memory capacity of node n in MiB, and
// [Unlimited] when it sets none.
func (ix *Index) MemoryCapacity(n NodeID) int64 {
	if ix.res == nil {
		return Unlimited
	}
	return ix.res.cap[n].mem
}

// UsedCPU returns the CPU in use on node n, in millicores.
func (ix *Index) UsedCPU(n NodeID) int64 {
	if ix.res == nil {
		return 0
	}
	return ix.res.used[n].cpu
}

// UsedMemory returns the memory in use on node n, in MiB.
func (ix *Index) UsedMemory(n NodeID) int64 {
	if ix.res == nil {
		return 0
	}
	return ix.res.used[n].mem
}

// FreeCPU returns the CPU of node n not in use (never below zero), or
// [Unlimited].
func (ix *Index) FreeCPU(n NodeID) int64 { return ix.freeRes(n).cpu }

// FreeMemory returns the memory of node n not in use (never below zero),
// or [Unlimited].
func (ix *Index) FreeMemory(n NodeID) int64 { return ix.freeRes(n).mem }

func (ix *Index) freeRes(n NodeID) res {
	if ix.res == nil {
		return res{Unlimited, Unlimited}
	}
	c, u := ix.res.cap[n], ix.res.used[n]
	return res{freeOf(c.cpu, u.cpu), freeOf(c.mem, u.mem)}
}

func freeOf(capacity, used int64) int64 {
	if capacity == Unlimited {
		return Unlimited
	}
	return max(capacity-used, 0)
}

// AddUse adds cpu millicores and mem MiB to what node n uses (negative
// values give back). A node's use may exceed its capacity (a snapshot
// may report it so); it then has none free. On an index that is not
// [Index.Limited] it does nothing. O(L).
func (ix *Index) AddUse(n NodeID, cpu, mem int64) {
	if ix.res == nil || (cpu == 0 && mem == 0) {
		return
	}
	u := &ix.res.used[n]
	u.cpu += cpu
	u.mem += mem
	if ix.nodes[n].state != Ready {
		return
	}
	f := int32((ix.nodes[n].healthy &^ ix.held[n]).Len())
	for li := range ix.levels {
		ix.widen(li, n, f)
	}
}

// SetUse sets what node n uses to cpu millicores and mem MiB. O(L).
func (ix *Index) SetUse(n NodeID, cpu, mem int64) {
	if ix.res == nil {
		return
	}
	u := ix.res.used[n]
	ix.AddUse(n, cpu-u.cpu, mem-u.mem)
}

// widen makes the bounds of the buckets of node n for free count f at
// level li hold its free CPU and memory; when the node is alone in a
// bucket, they become exactly its own.
func (ix *Index) widen(li int, n NodeID, f int32) {
	r := ix.res
	lv := &ix.levels[li]
	v := ix.freeRes(n)
	one := func(g int) {
		b := g*ix.freeCounts + int(f)
		lo, hi := &r.lo[li][b], &r.hi[li][b]
		if lv.counts[b] <= 1 {
			*lo, *hi = v, v
			return
		}
		lo.cpu, lo.mem = min(lo.cpu, v.cpu), min(lo.mem, v.mem)
		hi.cpu, hi.mem = max(hi.cpu, v.cpu), max(hi.mem, v.mem)
	}
	one(int(lv.domOf(n)))
	if lv.cgrp != nil {
		one(int(lv.cgrp[n]))
	}
}

// Members returns how many members of g GPUs, cpu millicores and mem MiB
// each fit node n now: the fewest of its free GPUs / g, free CPU / cpu
// and free memory / mem (a request of zero does not limit). Zero on a
// node that is not ready. O(1).
func (ix *Index) Members(n NodeID, g int, cpu, mem int64) int {
	if g < 1 {
		return 0
	}
	k := ix.Free(n) / g
	if ix.res == nil || k == 0 {
		return k
	}
	return min(k, fitCount(ix.freeRes(n), cpu, mem, k))
}

// fitCount returns how many requests of cpu and mem fit v, at most k.
func fitCount(v res, cpu, mem int64, k int) int {
	if cpu > 0 && v.cpu/cpu < int64(k) {
		k = int(v.cpu / cpu)
	}
	if mem > 0 && v.mem/mem < int64(k) {
		k = int(v.mem / mem)
	}
	return k
}

// fits reports whether k requests of cpu and mem fit v.
func fits(v res, cpu, mem int64, k int) bool { return fitCount(v, cpu, mem, k) >= k }

// bucketSays tells, from its bounds, what a bucket of group g with free
// count f at level li holds of k members of cpu and mem each: all
// (every node fits them), none (no node fits one) or some (read the
// nodes).
func (ix *Index) bucketSays(li, g int, f int32, k int, cpu, mem int64) bucketAnswer {
	if ix.res == nil || (cpu <= 0 && mem <= 0) {
		return allFit
	}
	b := g*ix.freeCounts + int(f)
	if fits(ix.res.lo[li][b], cpu, mem, k) {
		return allFit
	}
	if !fits(ix.res.hi[li][b], cpu, mem, 1) {
		return noneFit
	}
	return someFit
}

type bucketAnswer uint8

const (
	allFit bucketAnswer = iota
	noneFit
	someFit
)

// eachInBucket calls fn for the nodes of group g's bucket for free count
// f at level li, in NodeID order, until fn returns false. fn does not
// escape, so a caller's closure costs no allocation.
func (ix *Index) eachInBucket(li, g int, f int32, fn func(NodeID) bool) {
	lv := &ix.levels[li]
	if lv.counts[g*ix.freeCounts+int(f)] == 0 {
		return
	}
	members := lv.members[lv.memberStart[g]:lv.memberStart[g+1]]
	if len(members) == 1 {
		fn(members[0])
		return
	}
	w, s, ns := lv.bits(g, f)
	bitAll(lv.words, lv.sum, w, s, ns, func(i int32) bool {
		return fn(members[i])
	})
}

// countBucket returns how many members of g GPUs, cpu and mem each fit
// the nodes of bucket (grp, f) of level li, at most k per node, reading
// them one by one; their bounds become exact on the way.
func (ix *Index) countBucket(li, grp int, f int32, k int, g int, cpu, mem int64) int {
	total := 0
	first := true
	var lo, hi res
	ix.eachInBucket(li, grp, f, func(n NodeID) bool {
		v := ix.freeRes(n)
		total += min(k, fitCount(v, cpu, mem, k))
		if first {
			lo, hi, first = v, v, false
			return true
		}
		lo.cpu, lo.mem = min(lo.cpu, v.cpu), min(lo.mem, v.mem)
		hi.cpu, hi.mem = max(hi.cpu, v.cpu), max(hi.mem, v.mem)
		return true
	})
	if !first {
		b := grp*ix.freeCounts + int(f)
		ix.res.lo[li][b], ix.res.hi[li][b] = lo, hi
	}
	return total
}

// CapacityFor returns how many members of g GPUs, cpu millicores and
// mem MiB each fit the free capacity of class c in domain d of level,
// each member on one node: the sum over nodes of [Index.Members]. It is
// [Index.Capacity] when the index is not [Index.Limited] or the request
// asks no CPU or memory. O(G + log T) when each bucket's bounds decide
// it; a bucket they do not decide is read node by node (and its bounds
// become exact).
func (ix *Index) CapacityFor(level int, d DomainID, c Class, g int, cpu, mem int64) int {
	if ix.res == nil || (cpu <= 0 && mem <= 0) {
		return ix.Capacity(level, d, c, g)
	}
	li := level + 1
	lv := &ix.levels[li]
	grp := lv.group(d, c)
	if g < 1 || g >= ix.freeCounts || grp < 0 {
		return 0
	}
	total := 0
	for f := g; f < ix.freeCounts; f++ {
		cnt := int(lv.counts[grp*ix.freeCounts+f])
		if cnt == 0 {
			continue
		}
		switch ix.bucketSays(li, grp, int32(f), f/g, cpu, mem) {
		case allFit:
			total += cnt * (f / g)
		case someFit:
			total += ix.countBucket(li, grp, int32(f), f/g, g, cpu, mem)
		}
	}
	return total
}

// FirstFit returns the lowest-ID ready node of class c in domain d of
// level with exactly f free GPUs that holds k members of g GPUs, cpu
// millicores and mem MiB each (k·g <= f), skipping nodes avoid reports
// (avoid may be nil). With no CPU or memory to check and nothing to
// avoid it is [Index.First]; else the bucket is read node by node unless
// its bounds decide it.
func (ix *Index) FirstFit(level int, d DomainID, c Class, f, k, g int, cpu, mem int64, avoid func(NodeID) bool) (NodeID, bool) {
	li := level + 1
	lv := &ix.levels[li]
	grp := lv.group(d, c)
	if f < 0 || f >= ix.freeCounts || grp < 0 || k*g > f || lv.counts[grp*ix.freeCounts+f] == 0 {
		return -1, false
	}
	say := ix.bucketSays(li, grp, int32(f), k, cpu, mem)
	switch {
	case say == noneFit:
		return -1, false
	case say == allFit && avoid == nil:
		return ix.first(lv, grp, int32(f))
	}
	found := NodeID(-1)
	ix.eachInBucket(li, grp, int32(f), func(n NodeID) bool {
		if (avoid == nil || !avoid(n)) && (say == allFit || fits(ix.freeRes(n), cpu, mem, k)) {
			found = n
			return false
		}
		return true
	})
	return found, found >= 0
}
