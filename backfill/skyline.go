package backfill

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// A skyline is a step function of time: for one class of nodes, how many
// more (or fewer) GPUs are free at each moment than are free now, counting
// every release and reservation of the profile. Adding the GPUs free now
// gives the free GPUs at every moment, an upper bound on the GPUs usable
// for any run that spans it. A query for a gang of G GPUs and run d then
// finds, without looking at a single node, the first start at which the
// free GPUs stay at G or more for the whole run: no start before it can
// fit, so [Profile.Earliest] begins its sweep there instead of at the
// first moment it cannot rule out by shape alone.
//
// The function is kept as breakpoints in blocks of up to 2·skyBlockSize,
// each with a lazy addend and the least and greatest value it holds
// without it. Breakpoints are never removed. For B breakpoints an update
// of [from, to) costs O(log B + skyBlockSize + blocks it spans), and a
// query skips whole blocks that are all above (or all below) the level it
// looks for.
type skyline struct {
	blocks []skyBlock
	size   int // blocks split past 2·size breakpoints
}

const skyBlockSize = 128

type skyBlock struct {
	at     []time.Duration // breakpoints, ascending
	values []int32         // value on [at[i], at[i+1]), without addend
	addend int32
	lo, hi int32 // least and greatest of values
}

func newSkyline() *skyline { return newSkylineSized(skyBlockSize) }

// newSkylineFrom returns the skyline that is zero until at[0] and v[i]
// on [at[i], at[i+1]); at must be ascending and positive.
func newSkylineFrom(zero int32, at []time.Duration, v []int32) *skyline {
	s := newSkyline()
	b := &s.blocks[0]
	b.values[0] = zero
	for i := range at {
		if len(b.at) == s.size {
			b.bounds()
			s.blocks = append(s.blocks, skyBlock{})
			b = &s.blocks[len(s.blocks)-1]
		}
		b.at, b.values = append(b.at, at[i]), append(b.values, v[i])
	}
	b.bounds()
	return s
}

func newSkylineSized(size int) *skyline {
	return &skyline{blocks: []skyBlock{{at: []time.Duration{0}, values: []int32{0}}}, size: max(size, 1)}
}

func (b *skyBlock) bounds() {
	b.lo, b.hi = slices.Min(b.values), slices.Max(b.values)
}

// locate returns the block and index of the breakpoint in effect at t
// (the last one at or before t). O(log B).
func (s *skyline) locate(t time.Duration) (int, int) {
	bi, found := slices.BinarySearchFunc(s.blocks, t, func(b skyBlock, t time.Duration) int { return compareDur(b.at[0], t) })
	if !found {
		bi--
	}
	b := &s.blocks[bi]
	i, found := slices.BinarySearch(b.at, t)
	if !found {
		i--
	}
	return bi, i
}

// split makes t a breakpoint, with the value in effect there, and returns
// its place. t must be >= 0 and < Forever.
func (s *skyline) split(t time.Duration) (int, int) {
	bi, i := s.locate(t)
	b := &s.blocks[bi]
	if b.at[i] == t {
		return bi, i
	}
	i++
	b.at = slices.Insert(b.at, i, t)
	b.values = slices.Insert(b.values, i, b.values[i-1])
	if len(b.at) <= 2*s.size {
		return bi, i
	}
	// Split the block in halves.
	half := len(b.at) / 2
	nb := skyBlock{at: slices.Clone(b.at[half:]), values: slices.Clone(b.values[half:]), addend: b.addend}
	b.at, b.values = b.at[:half:half], b.values[:half:half]
	b.bounds()
	nb.bounds()
	s.blocks = slices.Insert(s.blocks, bi+1, nb)
	if i >= half {
		return bi + 1, i - half
	}
	return bi, i
}

// add adds k to the function on [from, to); to may be Forever.
func (s *skyline) add(from, to time.Duration, k int32) {
	if k == 0 || from >= to {
		return
	}
	from = max(from, 0)
	bi, i := s.split(from)
	end, ej := len(s.blocks), 0 // the first breakpoint not changed
	if to != Forever {
		end, ej = s.split(to)
		if end < bi || end == bi && ej < i {
			panic("backfill: skyline out of order")
		}
		// Splitting at to may have split the block holding from.
		bi, i = s.locate(from)
	}
	for b := bi; b < len(s.blocks) && (b < end || b == end && ej > 0); b++ {
		blk := &s.blocks[b]
		lo, hi := 0, len(blk.values)
		if b == bi {
			lo = i
		}
		if b == end {
			hi = ej
		}
		if lo == 0 && hi == len(blk.values) {
			blk.addend += k
			continue
		}
		least, most := blk.values[lo]+k, blk.values[lo]+k
		for j := lo; j < hi; j++ {
			v := blk.values[j] + k
			blk.values[j] = v
			least, most = min(least, v), max(most, v)
		}
		blk.boundsAfterAdd(least, most, k)
	}
}

// boundsAfterAdd updates b's bounds after k != 0 was added to some of its
// values, whose least and greatest are now least and most. The bound the
// addition moves away from stays exact without a look at the values: for
// k > 0 the greatest value is the old one or most, whichever is greater.
// The other bound is found again only when the old one was among the
// values changed; else it is where it was, among the values not changed.
func (b *skyBlock) boundsAfterAdd(least, most, k int32) {
	if k > 0 {
		b.hi = max(b.hi, most)
		if least-k == b.lo {
			b.lo = slices.Min(b.values)
		}
		return
	}
	b.lo = min(b.lo, least)
	if most-k == b.hi {
		b.hi = slices.Max(b.values)
	}
}

// valueAt returns the value in effect at t. O(log B).
func (s *skyline) valueAt(t time.Duration) int32 {
	bi, i := s.locate(t)
	return s.blocks[bi].values[i] + s.blocks[bi].addend
}

// belowFrom returns the first moment x >= t at which the value is below
// level, or Forever, from t, whose breakpoint in effect is i of block
// bi; it also returns the place of the breakpoint in effect at x.
func (s *skyline) belowFrom(t time.Duration, bi, i int, level int32) (time.Duration, int, int) {
	for ; bi < len(s.blocks); bi, i = bi+1, 0 {
		b := &s.blocks[bi]
		if b.lo+b.addend >= level {
			continue
		}
		for ; i < len(b.values); i++ {
			if b.values[i]+b.addend < level {
				return max(t, b.at[i]), bi, i
			}
		}
	}
	return Forever, len(s.blocks), 0
}

// atLeastAfter returns the first breakpoint after breakpoint i of block
// bi whose value is at least level, or Forever, and its place.
func (s *skyline) atLeastAfter(bi, i int, level int32) (time.Duration, int, int) {
	for i++; bi < len(s.blocks); bi, i = bi+1, 0 {
		b := &s.blocks[bi]
		if b.hi+b.addend < level {
			continue
		}
		for ; i < len(b.values); i++ {
			if b.values[i]+b.addend >= level {
				return b.at[i], bi, i
			}
		}
	}
	return Forever, len(s.blocks), 0
}

// firstFit returns the first t >= t0 at which the value stays at least
// level during [t, t+d), or Forever when there is none. Every such t is
// t0 or a breakpoint at which the value rises.
func (s *skyline) firstFit(t0, d time.Duration, level int32) time.Duration {
	return s.firstFitBy(t0, d, level, Forever)
}

// firstFitBy is firstFit, but it stops at the first candidate at or
// after by and returns it (by or later: no fit before by). One binary
// search, then a walk: each scan goes on from where the last one
// stopped, the breakpoint in effect at its answer.
func (s *skyline) firstFitBy(t0, d time.Duration, level int32, by time.Duration) time.Duration {
	t := t0
	bi, i := s.locate(t)
	for t < by {
		x, xb, xi := s.belowFrom(t, bi, i, level)
		if x == Forever || x >= add(t, d) {
			return t
		}
		if t, bi, i = s.atLeastAfter(xb, xi, level); t == Forever {
			return Forever
		}
	}
	return t
}

// count adds k GPUs of node n to the skylines on [from, to), once they
// are built.
func (p *Profile) count(n topology.NodeID, from, to time.Duration, k int) {
	if p.skylines == nil {
		return
	}
	p.skylines[topology.AnyType].add(from, to, int32(k))
	if c := p.dense.class[n]; c != topology.AnyType {
		p.skylines[c].add(from, to, int32(k))
	}
}

// countSlots takes the GPUs of slots from the skylines on [from, to),
// once they are built: one update per class the slots' nodes change
// between, rather than one per slot, since a sum does not depend on the
// order of its terms.
func (p *Profile) countSlots(slots []gang.Slot, from, to time.Duration) {
	if p.skylines == nil {
		return
	}
	all := 0
	for i := 0; i < len(slots); {
		c, k := p.dense.class[slots[i].Node], 0
		for ; i < len(slots) && p.dense.class[slots[i].Node] == c; i++ {
			k += slots[i].GPUs.Len()
		}
		if all += k; c != topology.AnyType {
			p.skylines[c].add(from, to, -int32(k))
		}
	}
	p.skylines[topology.AnyType].add(from, to, -int32(all))
}

// buildSky builds the skylines from every event so far, on the first
// query: a Step that records thousands of releases and asks few queries
// then pays one sort instead of an update per release. O(E log E).
func (p *Profile) buildSky() {
	p.buildDense()
	type delta struct {
		at time.Duration
		c  topology.Class
		k  int32
	}
	var ds []delta
	put := func(n topology.NodeID, at time.Duration, k int) {
		if at == Forever || k == 0 {
			return
		}
		ds = append(ds, delta{at, topology.AnyType, int32(k)})
		if c := p.dense.class[n]; c != topology.AnyType {
			ds = append(ds, delta{at, c, int32(k)})
		}
	}
	for _, n := range p.eventful {
		h := p.ix.Healthy(n)
		for _, e := range p.nodes[n].events {
			if !e.reserve {
				put(n, e.start, (e.set & h).Len())
				continue
			}
			put(n, e.start, -e.set.Len())
			put(n, e.end, e.set.Len())
		}
	}
	slices.SortFunc(ds, func(a, b delta) int {
		if a.c != b.c {
			return int(a.c) - int(b.c)
		}
		return compareDur(a.at, b.at)
	})
	p.skylines = make([]*skyline, 1+len(p.ix.Types()))
	for c := range p.skylines {
		var at []time.Duration
		var v []int32
		cur, zero := int32(0), int32(0)
		for len(ds) > 0 && ds[0].c == topology.Class(c) {
			d := ds[0]
			ds = ds[1:]
			cur += d.k
			if d.at <= 0 {
				zero = cur // in force from now on: the value at 0
				continue
			}
			if k := len(at) - 1; k >= 0 && at[k] == d.at {
				v[k] = cur
				continue
			}
			at, v = append(at, d.at), append(v, cur)
		}
		p.skylines[c] = newSkylineFrom(zero, at, v)
	}
}

// freeBound returns the first t >= t0 at which the free GPUs of r's
// class, counted over time, stay at r.GPUs() or more during [t, t+d): no
// run of r fits before it. Forever when there is none. Inside
// WithReservations it returns t0: the index then hides GPUs for the
// reservations that the count over time takes away again.
func (p *Profile) freeBound(r gang.Request, d, t0 time.Duration) time.Duration {
	if p.within {
		return t0
	}
	if p.skylines == nil {
		p.buildSky()
	}
	if int(r.Class) < 0 || int(r.Class) >= len(p.skylines) {
		return t0
	}
	short := r.GPUs() - p.ix.FreeGPUs(topology.ClusterLevel, 0, r.Class)
	return p.skylines[r.Class].firstFit(t0, d, int32(short))
}

// FreeBound returns the first t >= t0 at which the GPUs of r's class,
// counted over time (free now or released, less those reserved), stay at
// r.GPUs() or more during a run of d from t, or Forever when there is
// none. No run of r fits before it ([Profile.Earliest] never answers
// earlier); where any GPUs of the class will do (one-GPU members, no
// topology, CPU, memory or node limits), it is the start that a count of
// processors gives, as conservative backfill in its textbook form
// computes. It changes nothing but remembered answers (as every query).
// O(log B + breakpoints swept) for B breakpoints of the class's count.
func (p *Profile) FreeBound(r gang.Request, d, t0 time.Duration) time.Duration {
	if !r.Valid(p.ix) {
		return Forever
	}
	p.sync()
	defer p.settle()
	return p.freeBound(r, run(d), max(t0, 0))
}

// NoStartBefore reports whether, with the reservation of r's GPUs from s
// for a run of d that the profile holds for r's own job taken out, the
// count of the GPUs of r's class over time (see FreeBound) would allow no
// run of d to start before s, without taking it out. The reservation
// must hold exactly r.GPUs() GPUs of r's class over [s, s+d); s > 0.
//
// Taken out, it adds its GPUs back over [s, s+d), where they alone
// suffice; so a run from t < s fits the count exactly when the count
// holds r.GPUs() over the part of the run before s. Some run does
// exactly when the count holds them just before s (a run from just
// before s), or else over a whole run that ends before s, which FreeBound
// finds with the reservation in place: the count is short just before s,
// so only runs that start by s-d-1 are sought. Worked example, 4 GPUs
// needed, a run of 2h, the reservation from 3h:
//
//	free by count   [0,1h): 4   [1h,3h): 2   from 3h: 0 (+4 taken out)
//	just before 3h  2 < 4: no run from 1h..3h
//	whole run by 3h [0,2h) would need 4 over [1h,2h): no
//	answer          true: no start before 3h
//
// O(log B + breakpoints swept).
func (p *Profile) NoStartBefore(r gang.Request, d, s time.Duration) bool {
	if s <= 0 || !r.Valid(p.ix) || p.within {
		return false
	}
	p.sync()
	defer p.settle()
	if p.skylines == nil {
		p.buildSky()
	}
	if int(r.Class) < 0 || int(r.Class) >= len(p.skylines) {
		return false
	}
	short := int32(r.GPUs() - p.ix.FreeGPUs(topology.ClusterLevel, 0, r.Class))
	sky := p.skylines[r.Class]
	if sky.valueAt(s-1) >= short {
		return false
	}
	// A run that holds the instant s-1 cannot fit; one from t fits
	// before s only when t+d <= s-1, that is t < s-d.
	by := s - run(d)
	return by <= 0 || sky.firstFitBy(0, run(d), short, by) >= by
}
