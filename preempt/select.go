package preempt

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Hold is the GPUs a running job holds on one node of an index.
type Hold struct {
	// Node is the node, as the index numbers it.
	Node topology.NodeID
	// GPUs are the GPUs the job holds on it.
	GPUs topology.GPUSet
	// CPUMillis and MemoryMiB are the CPU and memory the job uses on it,
	// which stopping it frees with the GPUs (zero: none).
	CPUMillis, MemoryMiB int64
}

// Candidate is a running job that might be preempted. It is a small value:
// its GPUs are one [Hold] per node, as the index keeps them.
type Candidate struct {
	// ID identifies the job; it is the last tie-break of the cost order.
	ID string
	// Tier is the job's priority tier (0 is the highest and is never
	// preempted, nor is a negative one).
	Tier int
	// Holds lists the job's GPUs, one entry per node. Candidates must hold
	// disjoint GPUs, as running jobs do in a valid snapshot. GPUs the index
	// does not show held are ignored. A caller may leave out GPUs that
	// stopping the job would not give to the request (the scheduler leaves
	// out GPUs reserved for another job); it then sets Size.
	Holds []Hold
	// Size is the number of GPUs the job holds, for the cost order's
	// fewest-GPUs rule: stopping a job loses the work of all its GPUs,
	// whichever of them the request can use. Zero means the GPUs of Holds.
	Size int
	// WorkLost is the work the job would lose if stopped now: the time
	// since its last checkpoint. When the checkpoint is unknown, use the
	// time since it started (the newest start loses least); [WorkSince]
	// computes either.
	WorkLost time.Duration
	// Ran is how long the job has been running (since its start). It
	// plays no part in the cost order; it is there for selectors with
	// rules such as a minimum runtime.
	Ran time.Duration
	// Grace is the job's checkpoint grace period: how long it may run
	// after being told to stop.
	Grace time.Duration
	// Borrowed reports that the job's team runs above its quota, on GPUs
	// borrowed from others: such jobs are reclaimed first.
	Borrowed bool
}

// NumGPUs returns the number of GPUs in c.Holds.
func (c *Candidate) NumGPUs() int {
	n := 0
	for _, h := range c.Holds {
		n += h.GPUs.Len()
	}
	return n
}

// size is the job's GPUs as the cost order counts them: Size, or the GPUs
// of Holds when Size is zero.
func (c *Candidate) size() int {
	if c.Size > 0 {
		return c.Size
	}
	return c.NumGPUs()
}

// WorkSince returns the work a job loses when stopped at now: the time
// since the later of its start and its last checkpoint (the zero time
// when none is known), and never less than zero.
func WorkSince(now, started, checkpoint time.Time) time.Duration {
	from := started
	if checkpoint.After(from) {
		from = checkpoint
	}
	return max(now.Sub(from), 0)
}

// MaxGrace returns the longest grace period among the candidates at the
// given indices (0 for none): the preemptor's reservation starts that long
// from now.
func MaxGrace(cands []Candidate, victims []int) time.Duration {
	var g time.Duration
	for _, i := range victims {
		g = max(g, cands[i].Grace)
	}
	return g
}

// Compare orders candidates by preemption cost, cheapest first: jobs on
// borrowed GPUs, then the lowest priority (highest tier number), then the
// least work lost, then the fewest GPUs (Size, or the GPUs of Holds),
// then by ID.
func Compare(a, b *Candidate) int {
	return compare(a, b, a.size(), b.size())
}

func compare(a, b *Candidate, ga, gb int) int {
	if a.Borrowed != b.Borrowed {
		if a.Borrowed {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(b.Tier, a.Tier); c != 0 {
		return c
	}
	if c := cmp.Compare(a.WorkLost, b.WorkLost); c != 0 {
		return c
	}
	if c := cmp.Compare(ga, gb); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// hold is a usable part of a candidate's GPUs: held, healthy, on a ready
// node of the request's class (avoided or not: see Select).
type hold struct {
	node     topology.NodeID
	set      topology.GPUSet
	cpu, mem int64
}

type undoEntry struct {
	node     topology.NodeID
	held     topology.GPUSet
	cpu, mem int64 // the node's use before the change
}

// view is a working view of an index: changes are logged so that the
// index can be restored exactly.
type view struct {
	ix  *topology.Index
	log []undoEntry
}

func (v *view) release(hs []hold) {
	for _, h := range hs {
		v.log = append(v.log, undoEntry{h.node, v.ix.Held(h.node), v.ix.UsedCPU(h.node), v.ix.UsedMemory(h.node)})
		v.ix.AddUse(h.node, -h.cpu, -h.mem)
		v.ix.Release(h.node, h.set)
	}
}

func (v *view) retake(hs []hold) {
	for _, h := range hs {
		v.log = append(v.log, undoEntry{h.node, v.ix.Held(h.node), v.ix.UsedCPU(h.node), v.ix.UsedMemory(h.node)})
		v.ix.AddUse(h.node, h.cpu, h.mem)
		v.ix.SetHeld(h.node, v.ix.Held(h.node)|h.set)
	}
}

func (v *view) restore() {
	for i := len(v.log) - 1; i >= 0; i-- {
		e := v.log[i]
		v.ix.SetUse(e.node, e.cpu, e.mem)
		v.ix.SetHeld(e.node, e.held)
	}
	v.log = v.log[:0]
}

// limited reports whether CPU or memory can decide where r fits on ix.
func limited(ix *topology.Index, r gang.Request) bool {
	return (r.CPUMillis > 0 || r.MemoryMiB > 0) && ix.Limited()
}

// capacity is how many members of r fit domain d of level l now.
func capacity(ix *topology.Index, r gang.Request, l int, d topology.DomainID) int {
	return ix.CapacityFor(l, d, r.Class, r.GPUsPerMember, r.CPUMillis, r.MemoryMiB)
}

// feasible reports whether gang.Place would place r on the view, without
// placing it when that can be told from capacities alone: with no Avoid,
// Place succeeds exactly when the members fit the cluster (no required
// level) or one domain of the required level. O(G), or O(D·G) with a
// required level; a full Place only when r avoids nodes.
func (v *view) feasible(r gang.Request, s binpack.Scorer) bool {
	if capacity(v.ix, r, topology.ClusterLevel, 0) < r.Members {
		return false
	}
	if r.Avoid != nil {
		_, ok := v.fits(r, s)
		return ok
	}
	if r.Required == gang.NoLevel {
		return true
	}
	for d := range v.ix.BestDomains(r.Required, r.Class, r.GPUs()) {
		if capacity(v.ix, r, r.Required, d) >= r.Members {
			return true
		}
	}
	return false
}

// fits reports whether r can be placed on the view's free GPUs, changing
// nothing, and returns the placement it would get.
func (v *view) fits(r gang.Request, s binpack.Scorer) (gang.Placement, bool) {
	if capacity(v.ix, r, topology.ClusterLevel, 0) < r.Members {
		return gang.Placement{}, false
	}
	p, out := gang.Place(v.ix, r, s)
	if out != gang.Placed {
		return gang.Placement{}, false
	}
	p.Release(v.ix)
	return p, true
}

// helpsReleased reports, for an index showing every candidate stopped,
// whether node n has room for a member of r in a domain of r's required
// level that could hold the whole gang.
func helpsReleased(ix *topology.Index, r gang.Request) func(n topology.NodeID) bool {
	lr := r.Required
	if lr == gang.NoLevel {
		lr = topology.ClusterLevel
	}
	dom := make(map[topology.DomainID]bool)
	return func(n topology.NodeID) bool {
		if ix.Members(n, r.GPUsPerMember, r.CPUMillis, r.MemoryMiB) < 1 {
			return false
		}
		d := ix.DomainOf(lr, n)
		f, seen := dom[d]
		if !seen {
			f = capacity(ix, r, lr, d) >= r.Members
			dom[d] = f
		}
		return f
	}
}

// upperBound answers, from capacities and without changing ix, what
// releasing every hold would tell a request without Avoid: whether r
// would fit then (Place succeeds exactly when the members fit the cluster,
// or one domain of the required level), and which nodes would then have
// room for a member in a domain that could hold the whole gang. r does
// not fit ix as it is. O(H + D) for H holds and D domains of r's level,
// once sc has its dense array of N nodes (allocated on first use); the
// array stays in use until sc.clearExtra, which costs O(H).
func (sc *Selector) upperBound(ix *topology.Index, r gang.Request, holds []hold) (helps func(n topology.NodeID) bool, ok bool) {
	lr := r.Required
	if lr == gang.NoLevel {
		lr = topology.ClusterLevel
	}
	// The GPUs each node would have free: the holds merged by node, in
	// a dense array (clearing the nodes it touched costs less than
	// sorting the holds).
	sc.ensureExtra(ix)
	extra := sc.extra
	touched := sc.touched[:0]
	for _, h := range holds {
		if c, m := sc.freedUse(h.node); extra[h.node] == 0 && c == 0 && m == 0 {
			touched = append(touched, h.node)
		}
		extra[h.node] |= h.set
		sc.addFreed(h.node, h.cpu, h.mem)
	}
	sc.touched = touched
	after := func(n topology.NodeID) int {
		c, m := sc.freedUse(n)
		return membersWith(ix, r, n, extra[n], c, m)
	}
	nd := max(ix.NumDomains(lr), 1)
	if cap(sc.gain) < nd {
		sc.gain, sc.seen, sc.fits = make([]int, nd), make([]bool, nd), make([]bool, nd)
	}
	gain, seen, fits := sc.gain[:nd], sc.seen[:nd], sc.fits[:nd]
	clear(gain)
	clear(seen)
	clear(fits)
	for _, n := range touched {
		d := ix.DomainOf(lr, n)
		gain[d] += after(n) - membersWith(ix, r, n, 0, 0, 0)
		seen[d] = true
	}
	for d, more := range gain {
		if seen[d] && capacity(ix, r, lr, topology.DomainID(d))+more >= r.Members {
			fits[d] = true
			ok = true
		}
	}
	return func(n topology.NodeID) bool {
		c, m := sc.freedUse(n)
		return (extra[n] != 0 || c != 0 || m != 0) && after(n) >= 1 && fits[ix.DomainOf(lr, n)]
	}, ok
}

// chooseCounted is the greedy and drop passes of Select for a request
// without Avoid, counted from capacities instead of placed: with no Avoid
// the gang fits exactly when one domain of its required level (the
// cluster, without one) has room for all its members, and freeing or
// retaking a candidate changes only the domains of its nodes. So each
// step costs O(h) for the h holds of the candidate it frees or retakes,
// where releasing it in the index and asking which domains fit would
// cost O(h·L + D·G). It returns the victims, cheapest first, and whether
// the gang fits: the same answer as releasing them in the index and
// asking the placer. ix is not changed.
func (sc *Selector) chooseCounted(ix *topology.Index, r gang.Request, order []int, of func(int) []hold) (victims []int, fit bool) {
	rc := sc.newRoomCount(ix, r)
	defer sc.clearExtra()
	// Greedy: free candidates in cost order until the gang fits.
	chosen := order[:0:0]
	for _, i := range order {
		rc.change(of(i), true)
		chosen = append(chosen, i)
		if rc.fitting > 0 {
			break
		}
	}
	if rc.fitting == 0 {
		return nil, false
	}
	// Minimality: keep each victim running, most expensive first, if the
	// gang still fits without stopping it. One pass is enough: retaking
	// GPUs only takes room away, so a victim kept would be kept again.
	// A victim with no hold in a domain that fits is kept without being
	// counted: retaking it takes room only from domains that do not fit,
	// and they never come to fit in this pass, so the domains that fit,
	// and their counts, are the same either way (see rc.fitsIn).
	kept := make([]bool, len(chosen))
	for j := len(chosen) - 1; j >= 0; j-- {
		if !rc.fitsIn(of(chosen[j])) {
			kept[j] = true
			continue
		}
		rc.change(of(chosen[j]), false)
		if rc.fitting > 0 {
			kept[j] = true
		} else {
			rc.change(of(chosen[j]), true)
		}
	}
	for j, i := range chosen {
		if !kept[j] {
			victims = append(victims, i)
		}
	}
	return victims, true
}

// roomCount counts, per domain of r's required level, the members of r
// the domain would hold with the GPUs freed so far: base[d] (its
// capacity before any candidate is freed, read when d is first touched)
// plus gain[d]. fitting is the number of domains with room for the
// whole gang. The freed GPUs are kept per node in sc.extra, which
// sc.clearExtra empties.
type roomCount struct {
	sc         *Selector
	ix         *topology.Index
	r          gang.Request
	level      int // r's required level, or the cluster's
	extra      []topology.GPUSet
	gain, base []int
	seen       []bool
	fitting    int
}

// newRoomCount returns a count with nothing freed, using sc's scratch.
func (sc *Selector) newRoomCount(ix *topology.Index, r gang.Request) roomCount {
	lr := r.Required
	if lr == gang.NoLevel {
		lr = topology.ClusterLevel
	}
	sc.ensureExtra(ix)
	nd := max(ix.NumDomains(lr), 1)
	if cap(sc.gain) < nd {
		sc.gain, sc.seen, sc.fits = make([]int, nd), make([]bool, nd), make([]bool, nd)
	}
	if cap(sc.base) < nd {
		sc.base = make([]int, nd)
	}
	rc := roomCount{sc: sc, ix: ix, r: r, level: lr, extra: sc.extra, gain: sc.gain[:nd], seen: sc.seen[:nd], base: sc.base[:nd]}
	clear(rc.gain)
	clear(rc.seen)
	return rc
}

// members is how many more members of r node n holds with its freed
// GPUs than without them.
func (rc *roomCount) members(n topology.NodeID) int {
	c, m := rc.sc.freedUse(n)
	return membersWith(rc.ix, rc.r, n, rc.extra[n], c, m) - membersWith(rc.ix, rc.r, n, 0, 0, 0)
}

// membersWith is how many members of r node n holds with the GPUs extra
// and cpu and mem more freed (by candidates stopped): its free GPUs and
// those, its free CPU and memory and those. O(1).
func membersWith(ix *topology.Index, r gang.Request, n topology.NodeID, extra topology.GPUSet, cpu, mem int64) int {
	k := (ix.Free(n) + (extra &^ ix.FreeSet(n)).Len()) / r.GPUsPerMember
	if k == 0 || !limited(ix, r) {
		return k
	}
	if c := ix.CPUCapacity(n); r.CPUMillis > 0 && c != topology.Unlimited {
		k = min(k, int(max(c-(ix.UsedCPU(n)-cpu), 0)/r.CPUMillis))
	}
	if m := ix.MemoryCapacity(n); r.MemoryMiB > 0 && m != topology.Unlimited {
		k = min(k, int(max(m-(ix.UsedMemory(n)-mem), 0)/r.MemoryMiB))
	}
	return k
}

// ensureExtra sizes sc's dense arrays of freed GPUs, CPU and memory for
// ix.
func (sc *Selector) ensureExtra(ix *topology.Index) {
	if len(sc.extra) != ix.NumNodes() {
		sc.extra = make([]topology.GPUSet, ix.NumNodes())
		sc.extraCPU, sc.extraMem = nil, nil
	}
	if ix.Limited() && len(sc.extraCPU) != ix.NumNodes() {
		sc.extraCPU = make([]int64, ix.NumNodes())
		sc.extraMem = make([]int64, ix.NumNodes())
	}
}

// freedUse returns the CPU and memory freed on node n so far (none when
// the index limits neither).
func (sc *Selector) freedUse(n topology.NodeID) (cpu, mem int64) {
	if sc.extraCPU == nil {
		return 0, 0
	}
	return sc.extraCPU[n], sc.extraMem[n]
}

// addFreed adds cpu and mem to what is freed on node n.
func (sc *Selector) addFreed(n topology.NodeID, cpu, mem int64) {
	if sc.extraCPU != nil {
		sc.extraCPU[n] += cpu
		sc.extraMem[n] += mem
	}
}

// fitsIn reports whether a hold of hs, all of whose domains the count
// has seen, lies in a domain with room for the whole gang. A domain
// without room stays without it while holds are only retaken; the counts
// of its nodes may then lag behind (chooseCounted skips holds there), but
// only by room it does not have, so it still reads as without room, and
// the counts of the domains with room stay exact. O(len(hs)).
func (rc *roomCount) fitsIn(hs []hold) bool {
	for _, h := range hs {
		if d := rc.ix.DomainOf(rc.level, h.node); rc.base[d]+rc.gain[d] >= rc.r.Members {
			return true
		}
	}
	return false
}

// change frees (free) or retakes the holds hs and updates the counts of
// their domains. O(len(hs)).
func (rc *roomCount) change(hs []hold, free bool) {
	rc.sc.counted += len(hs)
	for _, h := range hs {
		d := rc.ix.DomainOf(rc.level, h.node)
		if !rc.seen[d] {
			rc.seen[d], rc.base[d] = true, capacity(rc.ix, rc.r, rc.level, d)
		}
		was := rc.base[d]+rc.gain[d] >= rc.r.Members
		rc.gain[d] -= rc.members(h.node)
		sc := rc.sc
		if free {
			if c, m := sc.freedUse(h.node); rc.extra[h.node] == 0 && c == 0 && m == 0 {
				sc.touched = append(sc.touched, h.node)
			}
			rc.extra[h.node] |= h.set
			sc.addFreed(h.node, h.cpu, h.mem)
		} else {
			rc.extra[h.node] &^= h.set
			sc.addFreed(h.node, -h.cpu, -h.mem)
		}
		rc.gain[d] += rc.members(h.node)
		if now := rc.base[d]+rc.gain[d] >= rc.r.Members; now != was {
			if now {
				rc.fitting++
			} else {
				rc.fitting--
			}
		}
	}
}

// clearExtra empties the dense array of upperBound.
func (sc *Selector) clearExtra() {
	for _, n := range sc.touched {
		sc.extra[n] = 0
		if sc.extraCPU != nil {
			sc.extraCPU[n], sc.extraMem[n] = 0, 0
		}
	}
	sc.touched = sc.touched[:0]
}

// A Selector is [Select] with scratch space kept from one call to the
// next, for a caller that selects many times over one cluster, as a
// scheduler step does: its calls allocate little beyond their results.
// The zero value is ready to use. A Selector keeps no state that changes
// an answer, but it must not be used by two goroutines at once, so do
// not set one as the victim selector of a scheduler whose Steps run
// concurrently ([Select] itself is safe for that).
type Selector struct {
	holds []hold
	span  [][2]int32
	order []int
	gpus  []int
	extra []topology.GPUSet
	// extraCPU and extraMem are the CPU and memory freed per node, beside
	// extra.
	extraCPU, extraMem []int64
	touched            []topology.NodeID
	undo               []undoEntry
	// Per domain of the required level, for upperBound: the members its
	// candidates' GPUs would add, whether it has any, and whether it
	// could then hold the gang.
	gain       []int
	seen, fits []bool
	// Per domain, for chooseCounted: its capacity before any candidate
	// is freed.
	base []int
	// counted is how many holds chooseCounted has freed or retaken in
	// its counts, over every call: the work its cost tests bound.
	counted int
}

// Select chooses whole running jobs to preempt so that the gang r fits,
// and returns their indices into cands (cheapest first), the placement
// the gang would get on the freed GPUs, and true; or false when no choice
// of the candidates makes room. The scorer is the one r is placed with
// (nil means [binpack.Pack]). ix is left exactly as it was.
//
// If r fits on the free GPUs already, Select returns no victims and the
// placement it would get now. Otherwise it considers only candidates that
// could help: those holding healthy GPUs on ready, not avoided nodes of
// r's class, on nodes that would have room for a member and in a domain
// of r's required level that could hold the whole gang if every
// candidate were stopped. It frees their GPUs in cost order (see
// [Compare]) until r fits, then tries to keep each chosen victim running,
// most expensive first, and does keep it when r still fits without it.
// When r.Avoid is nil the result is minimal: stopping all victims but
// any one leaves r unable to fit. With Avoid the drop passes repeat until
// none succeeds, so minimality holds against the placer's own answers.
//
// When r asks for CPU or memory and some node of ix limits them, stopping
// a candidate frees its CPU and memory with its GPUs (Hold.CPUMillis,
// Hold.MemoryMiB), so victims are chosen to free whatever r lacks: a
// node's room counts members by GPUs, CPU and memory alike
// ([topology.Index.Members]), and minimality holds the same way.
//
// Select does not consult a preemption matrix except that tier 0 (or a
// negative tier, as for [Matrix.CanPreempt]) is never a victim: filter
// cands with [Eligible] first.
//
// Cost: for K candidates with H holds in all, L levels, N nodes, G GPUs
// per node at most and P the cost of one placement attempt: without
// Avoid, O(H·(L + G) + K log K + N + P). The bound with every candidate
// stopped, the greedy pass and the drop pass are counted from domain
// capacities, not placed; Place runs once at the start and once for the
// answer. When r avoids nodes, each candidate freed until r fits and
// each victim in the drop passes costs one Place: O((K + V)·P) for V
// chosen victims in the worst case.
func Select(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []Candidate) (victims []int, pl gang.Placement, ok bool) {
	var sc Selector
	return sc.Select(ix, r, s, cands)
}

// Select is [Select] using sc's scratch space.
func (sc *Selector) Select(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []Candidate) (victims []int, pl gang.Placement, ok bool) {
	p, out := gang.Place(ix, r, s)
	switch out {
	case gang.Placed:
		p.Release(ix)
		return nil, p, true
	case gang.Invalid:
		return nil, gang.Placement{}, false
	}
	holds, span := sc.usableHolds(ix, r, cands)
	defer func() { sc.holds, sc.span = holds[:0], span[:0] }()
	of := func(i int) []hold { return holds[span[i][0]:span[i][1]] }
	v := &view{ix: ix, log: sc.undo[:0]}
	defer func() { v.restore(); sc.undo = v.log[:0] }()
	if r.Avoid == nil {
		return sc.selectCounted(ix, r, s, cands, holds, of, v)
	}
	return sc.selectPlaced(r, s, cands, holds, of, v)
}

// usableHolds returns the usable holds of every candidate, flattened:
// those of candidate i are holds[span[i][0]:span[i][1]]. A hold is
// usable when it is on a ready node of r's class; only its held,
// healthy GPUs are kept. Tier 0 and negative tiers get none (see
// [Eligible]). O(H) for H holds in all.
func (sc *Selector) usableHolds(ix *topology.Index, r gang.Request, cands []Candidate) (holds []hold, span [][2]int32) {
	total := 0
	for i := range cands {
		total += len(cands[i].Holds)
	}
	holds = slices.Grow(sc.holds[:0], total)
	span = slices.Grow(sc.span[:0], len(cands))[:len(cands)]
	nn := topology.NodeID(ix.NumNodes())
	for i := range cands {
		c := &cands[i]
		span[i][0] = int32(len(holds))
		if c.Tier > 0 {
			for _, h := range c.Holds {
				if h.Node < 0 || h.Node >= nn || ix.State(h.Node) != topology.Ready || !ix.InClass(h.Node, r.Class) {
					continue
				}
				set := h.GPUs & ix.Held(h.Node) & ix.Healthy(h.Node)
				cpu, mem := h.CPUMillis, h.MemoryMiB
				if !ix.Limited() {
					cpu, mem = 0, 0
				}
				if set != 0 || cpu > 0 || mem > 0 {
					holds = append(holds, hold{h.Node, set, cpu, mem})
				}
			}
		}
		span[i][1] = int32(len(holds))
	}
	return holds, span
}

// selectCounted is Select for a request without Avoid: the bound with
// every candidate stopped and the greedy and drop passes are counted
// from domain capacities (upperBound, chooseCounted); the index is
// changed only to place the answer, through v.
func (sc *Selector) selectCounted(ix *topology.Index, r gang.Request, s binpack.Scorer, cands []Candidate, holds []hold, of func(int) []hold, v *view) ([]int, gang.Placement, bool) {
	helps, ok := sc.upperBound(ix, r, holds)
	if !ok {
		sc.clearExtra()
		return nil, gang.Placement{}, false
	}
	order := sc.helpingByCost(cands, of, helps) // helps reads upperBound's array
	defer func() { sc.order = order[:0] }()
	sc.clearExtra()
	chosen, fit := sc.chooseCounted(ix, r, order, of)
	if !fit {
		return nil, gang.Placement{}, false
	}
	for _, i := range chosen {
		v.release(of(i))
	}
	pl, ok := v.fits(r, s)
	if !ok {
		return nil, gang.Placement{}, false
	}
	return chosen, pl, true
}

// selectPlaced is Select for a request that avoids nodes: each step
// releases or retakes GPUs in v and asks the placer. The drop passes
// repeat until one keeps no victim, so that minimality holds against
// the placer's answers.
func (sc *Selector) selectPlaced(r gang.Request, s binpack.Scorer, cands []Candidate, holds []hold, of func(int) []hold, v *view) ([]int, gang.Placement, bool) {
	// Upper bound: every candidate stopped. Holds on avoided nodes are
	// released too: the gang never lands there, but their free GPUs
	// count in the best fit of a domain, so the answer is where the gang
	// lands once the victims stop.
	v.release(holds)
	if _, ok := v.fits(r, s); !ok {
		return nil, gang.Placement{}, false
	}
	released := helpsReleased(v.ix, r)
	order := sc.helpingByCost(cands, of, func(n topology.NodeID) bool { return (r.Avoid == nil || !r.Avoid(n)) && released(n) })
	defer func() { sc.order = order[:0] }()
	v.restore()

	// Greedy: free victims in cost order until the gang fits.
	chosen := order[:0:0]
	fit := false
	for _, i := range order {
		v.release(of(i))
		chosen = append(chosen, i)
		if fit = v.feasible(r, s); fit {
			break
		}
	}
	if !fit {
		return nil, gang.Placement{}, false
	}
	// Minimality: keep each victim running, most expensive first, if the
	// gang still fits without stopping it; repeat while a pass keeps one.
	kept := make([]bool, len(chosen))
	for dropped := true; dropped; {
		dropped = false
		for j := len(chosen) - 1; j >= 0; j-- {
			if kept[j] {
				continue
			}
			v.retake(of(chosen[j]))
			if v.feasible(r, s) {
				kept[j], dropped = true, true
			} else {
				v.release(of(chosen[j]))
			}
		}
	}
	var victims []int
	for j, i := range chosen {
		if !kept[j] {
			victims = append(victims, i)
		}
	}
	pl, ok := v.fits(r, s)
	if !ok {
		return nil, gang.Placement{}, false
	}
	return victims, pl, true
}

// helpingByCost returns the indices of the candidates with a hold on a
// node that helps, cheapest first ([Compare], then by index), in sc's
// scratch. O(H + K log K) for H holds and K candidates.
func (sc *Selector) helpingByCost(cands []Candidate, of func(int) []hold, helps func(topology.NodeID) bool) []int {
	order := sc.order[:0]
	for i := range cands {
		for _, h := range of(i) {
			if helps(h.node) {
				order = append(order, i)
				break
			}
		}
	}
	gpus := slices.Grow(sc.gpus[:0], len(cands))[:len(cands)]
	sc.gpus = gpus[:0]
	for _, i := range order {
		gpus[i] = cands[i].size()
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := compare(&cands[a], &cands[b], gpus[a], gpus[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return order
}
