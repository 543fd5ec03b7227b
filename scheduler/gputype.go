package scheduler

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// A job that names no GPU type still runs on one type: on a cluster of
// several types, the turn of a gang of several members tries one request
// per type (typedRequests) and keeps the best, unless the job sets
// MixGPUTypes. On a cluster of one type, for a job that names its type
// and for a job of one member (which sits on one node, so on one type,
// where the node scorer puts it), nothing here runs.

// oneType reports whether j, whose request is req, is a gang that names
// no GPU type but must run on one, on a cluster of several types.
func (st *stepState) oneType(j *Job, req gang.Request) bool {
	return req.Class == topology.AnyType && j.Members > 1 && !j.MixGPUTypes && st.ix.NumTypes() > 1
}

// typedRequests returns req once for each GPU type whose ready nodes could
// hold j with every job gone (as satisfiable counts them), with its class
// set to that type, in best-fit order as the placer orders domains: the
// fewest free GPUs of the type first, then the most used, then the type's
// name. O(T log T) for T types; which types could hold a shape is
// computed once per Step.
func (st *stepState) typedRequests(j *Job, req gang.Request) []gang.Request {
	type typed struct {
		class      topology.Class
		free, used int
	}
	var buf [topology.MaxGPUTypes]typed
	ts := buf[:0]
	for _, c := range st.typesThatHold(j, req).classes {
		ts = append(ts, typed{class: c,
			free: st.ix.FreeGPUs(topology.ClusterLevel, 0, c),
			used: st.ix.UsedGPUs(topology.ClusterLevel, 0, c)})
	}
	slices.SortStableFunc(ts, func(a, b typed) int {
		if c := cmp.Compare(a.free, b.free); c != 0 {
			return c
		}
		return cmp.Compare(b.used, a.used)
	})
	reqs := make([]gang.Request, len(ts))
	for i := range ts {
		reqs[i] = req
		reqs[i].Class = ts[i].class
	}
	return reqs
}

// oneTypeKey identifies the gangs that the same GPU types could hold.
type oneTypeKey struct {
	members, gpusPerMember, required int
	cpu, mem                         int64
}

// oneTypeFit is what the GPU types hold of one gang shape with every job
// gone: the classes, in type order, whose ready nodes could hold it, and
// the most members one type holds on its ready nodes and on all its nodes.
type oneTypeFit struct {
	classes    []topology.Class
	ready, all int
}

// typesThatHold returns what the GPU types hold of j, whose request is
// req, with every job gone; computed once per shape.
func (st *stepState) typesThatHold(j *Job, req gang.Request) oneTypeFit {
	key := oneTypeKey{members: j.Members, gpusPerMember: req.GPUsPerMember, required: req.Required, cpu: req.CPUMillis, mem: req.MemoryMiB}
	if f, ok := st.typesFor[key]; ok {
		return f
	}
	var f oneTypeFit
	for i := range st.ix.NumTypes() {
		r := req
		r.Class, _ = st.ix.TypeClass(i)
		ready := st.largestOf(r, true)
		if ready >= j.Members {
			f.classes = append(f.classes, r.Class)
		}
		f.ready, f.all = max(f.ready, ready), max(f.all, st.largestOf(r, false))
	}
	if st.typesFor == nil {
		st.typesFor = map[oneTypeKey]oneTypeFit{}
	}
	st.typesFor[key] = f
	return f
}

// tryOneType is the turn of j (see try) when j must run on one GPU type
// that it does not name: each stage tries the types in best-fit order
// (typedRequests). It starts j now on the type where it gets the
// tightest domain (placeNowOneType); else preempts for it on the first
// type, most free GPUs first, where preemption decides it; else reserves
// the earliest start of any type (the first in best-fit order among
// equals); else says why it waits, for the type that comes closest. Its
// cost is that of try once per type that could hold j.
func (st *stepState) tryOneType(j *Job, req gang.Request, mayReserve bool) status {
	reqs := st.typedRequests(j, req)
	d := st.hold(j)
	if s := st.placeNowOneType(j, reqs, d); s.decided() {
		return s
	}
	if st.preempts(j) {
		// Most free GPUs first (reqs is fewest first; stable among equals).
		byFree := slices.Clone(reqs)
		slices.SortStableFunc(byFree, func(a, b gang.Request) int {
			return cmp.Compare(st.ix.FreeGPUs(topology.ClusterLevel, 0, b.Class), st.ix.FreeGPUs(topology.ClusterLevel, 0, a.Class))
		})
		for _, r := range byFree {
			if s := st.preempt(j, r, d, mayReserve); s.decided() {
				return s
			}
		}
	}
	if mayReserve && st.horizon >= 0 {
		var best backfill.Start
		found := false
		for _, r := range reqs {
			by := st.horizon
			if found {
				if best.At == 0 {
					break
				}
				by = best.At - 1 // only a strictly earlier start replaces it
			}
			if start, ok := st.earliestBy(j, r, d, 0, by); ok {
				best, found = start, true
			}
		}
		for _, r := range reqs {
			if s := st.repinTurn(j, r, d, best, found); s.decided() {
				return s
			}
		}
		if found {
			st.reserveAt(j, best.Placement, best.At, d)
			return status{code: reserved}
		}
	}
	return st.whyWaitsOneType(j, reqs, d, mayReserve && st.horizon != backfill.Forever)
}

// placeNowOneType starts j now on one of the types of reqs, as the placer
// chooses domains: the tightest level first (from its preferred level
// outward to its required one), and among types that fit at one level,
// the first in best-fit order. A spread job, which seeks distinct places
// rather than a tight domain, takes the first type where it starts.
func (st *stepState) placeNowOneType(j *Job, reqs []gang.Request, d time.Duration) status {
	if len(reqs) > 1 && j.Placement != Spread {
		r0 := reqs[0]
		for l := r0.Preferred; l >= 0 && l > r0.Required; l-- {
			for _, r := range reqs {
				r.Required, r.Preferred = l, l
				if s := st.placeNowWithinShadows(j, r, d, st.shapeOf(j, r, d)); s.decided() {
					return s
				}
			}
		}
	}
	for _, r := range reqs {
		if s := st.placeNowWithinShadows(j, r, d, st.shapeOf(j, r, d)); s.decided() {
			return s
		}
	}
	return status{}
}

// whyWaitsOneType is whyWaits for a job that must run on one GPU type:
// behind-reservation when it fits the free GPUs of some type now (the
// first in best-fit order), else why it does not fit the type with the
// most free GPUs among those that could ever hold it (the first by name
// among equals), which the message names when other GPUs are free too.
func (st *stepState) whyWaitsOneType(j *Job, reqs []gang.Request, d time.Duration, noHorizonStart bool) status {
	closest, most := 0, -1
	for i, r := range reqs {
		key := st.shapeOf(j, r, d)
		key.shadows, key.reservations = 0, 0
		out := st.fitIgnoringReservations(j, r, key)
		if out == gang.Placed {
			return st.behindReservations(j, r, d)
		}
		st.memo.noteFailsIgnoringReservations(key, j.Members)
		free := st.ix.FreeGPUs(topology.ClusterLevel, 0, r.Class)
		if free > most || free == most && r.Class < reqs[closest].Class {
			closest, most = i, free
		}
	}
	r := reqs[closest] // satisfiable has passed j: some type could hold it
	key := st.shapeOf(j, r, d)
	key.shadows, key.reservations = 0, 0
	s := st.noRoom(j, r, st.fitIgnoringReservations(j, r, key), false)
	if st.ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType) > most {
		if name := st.typeName(r.Class); name != "" {
			s.message += fmt.Sprintf(" (all its members go on one GPU type; counted on %s, the type with the most free GPUs that could hold it)", name)
		} else {
			s.message += " (all its members go on one GPU type; counted on the nodes without a type, which have the most free GPUs of the types that could hold it)"
		}
	}
	if noHorizonStart {
		s.message += st.horizonNote()
	}
	return s
}

// largestOf is the largest gang of req's shape and class that the cluster
// holds with every job gone, on its ready nodes when ready, else on all
// (see largestGang), computed once per shape.
func (st *stepState) largestOf(req gang.Request, ready bool) int {
	if req.CPUMillis > 0 || req.MemoryMiB > 0 {
		// CPU and memory that hold as many members as the largest node's
		// GPUs do on every node never bind with every job gone: the shape
		// without them answers (and is remembered once for all).
		cpu, mem := st.ix.LeastCapacity()
		most := int64(st.ix.MaxGPUs() / req.GPUsPerMember)
		if (req.CPUMillis == 0 || cpu/req.CPUMillis >= most) && (req.MemoryMiB == 0 || mem/req.MemoryMiB >= most) {
			req.CPUMillis, req.MemoryMiB = 0, 0
		}
	}
	key := shapeKey{class: req.Class, gpusPerMember: req.GPUsPerMember, cpu: req.CPUMillis, mem: req.MemoryMiB, required: req.Required, preferred: gang.NoLevel, spread: gang.NoLevel}
	if ready {
		key.mode = -1 // a key no job's shape has
	}
	return st.memo.largest(key, func() int { return st.largestGang(req, ready) })
}

// typeName is the GPU type of class c ("" for AnyType).
func (st *stepState) typeName(c topology.Class) string {
	for i := range st.ix.NumTypes() {
		if tc, name := st.ix.TypeClass(i); tc == c {
			return name
		}
	}
	return ""
}
