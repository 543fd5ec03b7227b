package backfill

import (
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// A sweep answers Earliest for one request: it brings a cursor to the
// first start it cannot rule out, and from there moves it only to the
// moments at which the GPUs freed since could make up what is missing,
// asking the gang placer at each where the usable GPUs and the room for
// members suffice.

// freeing calls f, in time order, with each timeline entry after t and
// no later than limit that may free GPUs for a run of d from its own
// moment, until f returns false. It passes over the entries whose GPUs
// are all reserved again before such a run would end (reservedAgainBy),
// and over whole runs of them without reading their entries (see latestReservedAgainBy).
func (p *Profile) freeing(t, d, limit time.Duration, f func(e timelineEntry) bool) {
	p.timeline.ends.FromRuns(timelineEntry{at: t + 1, seq: -1}, func(run *entryRun, evs []timelineEntry) bool {
		if p.latestReservedAgainBy(run) < add(evs[0].at, d) {
			// No entry of the run frees a GPU for a run from its own
			// moment (reservedAgainBy < e.at + d for each).
			return evs[len(evs)-1].at <= limit
		}
		for _, e := range evs {
			if e.at > limit {
				return false
			}
			if p.timeline.reservedAgainBy[e.seq] < add(e.at, d) {
				continue
			}
			if !f(e) {
				return false
			}
		}
		return true
	})
}

// latestReservedAgainBy returns the latest reservedAgainBy of the timeline run r's entries. An
// entry's reservedAgainBy drops as reservations are added and a release
// loses GPUs, so the value stays an upper bound until an insert into r
// clears it, or [Profile.Unreserve] raises an entry's value, which clears
// it too (see recomputeReservedAgainBy). O(1), or O(R) for a run of R
// entries after either.
func (p *Profile) latestReservedAgainBy(r *entryRun) time.Duration {
	if !r.boundKnown {
		hi := time.Duration(0)
		for _, e := range r.entries {
			hi = max(hi, p.timeline.reservedAgainBy[e.seq])
		}
		r.bound, r.boundKnown = hi, true
	}
	return r.bound
}

// earliest returns the first start in [t, limit] (limit Forever:
// none) at which r fits for a run of d, and the GPUs it would use there.
// A whole-node gang's start comes from the whole-node windows, which also
// choose its GPUs when they can (see wholePlaces); otherwise a cursor
// brought to that start does. Other requests sweep.
func (p *Profile) earliest(r gang.Request, d time.Duration, s binpack.Scorer, t, limit time.Duration) (Start, bool) {
	if t > limit || t == Forever {
		return Start{}, false
	}
	if !p.whole(r) {
		return p.sweep(r, d, s, t, limit)
	}
	p.prepare()
	place := p.wholePlaces(r, s)
	at, pl, ok := p.wholeEarliest(r, d, t, limit, place)
	if !ok {
		return Start{}, false
	}
	if place {
		return Start{At: at, Placement: pl}, true
	}
	if st, ok := p.sweep(r, d, s, at, at); ok {
		return st, true
	}
	// The windows and the cursor disagree, which cannot happen while the
	// windows are right: count the miss and answer as a sweep would.
	p.wholeWins.misses++
	return p.sweep(r, d, s, t, limit)
}

// sweep sweeps a cursor from t to the first start at which r fits for
// a run of d, giving up past limit (Forever: never).
func (p *Profile) sweep(r gang.Request, d time.Duration, s binpack.Scorer, t, limit time.Duration) (Start, bool) {
	if t > limit || t == Forever {
		return Start{}, false
	}
	c := p.cursorFor(t, d)
	need := r.GPUs()
	try := func(t time.Duration) (Start, bool) {
		p.move(c, t, d)
		if c.freeGPUs(r.Class) < need || !c.room(r.Class, r.Members, r.GPUsPerMember) {
			return Start{}, false
		}
		c.flush()
		pl, out := gang.Place(c.ix, r, s)
		if out != gang.Placed {
			return Start{}, false
		}
		if r.Avoid == nil && !r.Distinct {
			pl = p.preferBusy(c, pl, r, t, s)
		}
		pl.Release(c.ix)
		return Start{At: t, Placement: pl}, true
	}
	if st, ok := try(t); ok {
		return st, true
	}
	// Then the moments when capacity can grow: releases and reservation
	// ends. Moving on from t, the GPUs of r's class usable for the run
	// grow only by what the events passed free: none from an event whose
	// GPUs are all reserved again before a run from its own moment ends
	// (nor for any later run), at most its GPUs of r's class from another
	// (starts passed only take GPUs away). So the next start worth trying
	// is the first at which that bound reaches r's size, or, when the GPUs
	// sufficed at t but r did not fit, the first at which any GPU can be
	// added: before it the usable GPUs only shrink. For a request that
	// asks for CPU or memory, what it lacked then may be those instead:
	// the first event that can free some for it comes into question too
	// (see useFreedAfter).
	for {
		free := c.freeGPUs(r.Class)
		deficit := max(need-free, 1)
		next, found := time.Duration(0), false
		p.freeing(t, d, limit, func(e timelineEntry) bool {
			if r.Class != topology.AnyType && p.dense.class[e.n] != r.Class {
				return true
			}
			if deficit -= (e.set & p.dense.alloc[e.n]).Len(); deficit > 0 {
				return true
			}
			next, found = e.at, true
			return false
		})
		if free >= need && limited(p.ix, r) {
			if !found {
				next = limit
			}
			if at, ok := p.useFreedAfter(r.Class, t, next); ok {
				next, found = at, true
			}
		}
		if !found {
			return Start{}, false
		}
		t = next
		if st, ok := try(t); ok {
			return st, true
		}
	}
}

// useFreedAfter returns the first moment after t and no later than limit
// of a release or reservation end on a node of class cl (AnyType: any
// node) that limits CPU or memory, and false when there is none. Such an
// event frees CPU or memory for a run from its own moment on, even when
// it frees no GPU the run can use: its GPUs may be unhealthy, or
// reserved again before the run ends (a reservation holds only its own
// CPU and memory). So freeing, which passes over such events, does not
// find it. O(k) for k entries after t up to the one returned.
func (p *Profile) useFreedAfter(cl topology.Class, t, limit time.Duration) (time.Duration, bool) {
	return p.endAfter(cl, t, limit, func(n topology.NodeID) bool {
		return p.ix.CPUCapacity(n) != topology.Unlimited || p.ix.MemoryCapacity(n) != topology.Unlimited
	})
}

// endAfter returns the first moment after t and no later than limit of
// a release or reservation end on a node of class cl (AnyType: any node)
// that keep accepts, and false when there is none. O(k) for k entries
// after t up to the one returned.
func (p *Profile) endAfter(cl topology.Class, t, limit time.Duration, keep func(topology.NodeID) bool) (time.Duration, bool) {
	at, found := time.Duration(0), false
	p.timeline.ends.From(timelineEntry{at: t + 1, seq: -1}, func(evs []timelineEntry) bool {
		for _, e := range evs {
			if e.at > limit {
				return false
			}
			if cl != topology.AnyType && p.dense.class[e.n] != cl {
				continue
			}
			if keep(e.n) {
				at, found = e.at, true
				return false
			}
		}
		return true
	})
	return at, found
}

// NextGrowth returns the first moment after t and no later than limit at
// which GPUs of a node of class cl (AnyType: any node) are released or a
// reservation of some ends, and false when there is none: before it, a
// later start finds no GPU of the class that an earlier one did not. It
// changes nothing but remembered answers (as every query). O(log E + k)
// for k timeline entries passed.
func (p *Profile) NextGrowth(cl topology.Class, t, limit time.Duration) (time.Duration, bool) {
	p.sync()
	defer p.settle()
	p.buildDense()
	p.flushTimeline()
	return p.endAfter(cl, t, limit, func(topology.NodeID) bool { return true })
}

// nextStamp starts a step of a sweep in which each node is refreshed at
// most once.
func (p *Profile) nextStamp() uint32 {
	p.scratch.stampN++
	if p.scratch.stampN == 0 {
		clear(p.scratch.stamp)
		p.scratch.stampN = 1
	}
	return p.scratch.stampN
}
