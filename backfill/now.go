package backfill

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Queries for a run from now (PlaceNow, FitsNow, WithReservations) work
// on the live index itself: blockNow makes it show only the GPUs usable
// for [0, d), recording each node it changes in the undo log, and
// restore puts them back before the query returns.

// undoLog is the held GPUs of each node of the live index that the
// current query changed, to restore them: at[n] is n's place in saved
// plus one (0: not changed).
type undoLog struct {
	saved []savedHeld
	at    []int32
}

type savedHeld struct {
	n        topology.NodeID
	held     topology.GPUSet
	cpu, mem int64 // the node's use in the live index
}

// touch saves node n's held GPUs the first time the current query
// changes it, and returns the GPUs it had free then.
func (p *Profile) touch(n topology.NodeID) topology.GPUSet {
	if p.undo.at[n] == 0 {
		p.undo.saved = append(p.undo.saved, savedHeld{n: n, held: p.ix.Held(n), cpu: p.ix.UsedCPU(n), mem: p.ix.UsedMemory(n)})
		p.undo.at[n] = int32(len(p.undo.saved))
	}
	return p.ix.Healthy(n) &^ p.undo.saved[p.undo.at[n]-1].held
}

// touched reports whether the current query changed node n.
func (p *Profile) touched(n topology.NodeID) bool { return p.undo.at[n] > 0 }

// setUsable makes the index show exactly u free on node n.
func (p *Profile) setUsable(n topology.NodeID, u topology.GPUSet) {
	p.ix.SetHeld(n, topology.FirstN(p.ix.GPUs(n))&^u)
}

// restore undoes every change of the current query.
func (p *Profile) restore() {
	for i := len(p.undo.saved) - 1; i >= 0; i-- {
		s := p.undo.saved[i]
		p.ix.SetUse(s.n, s.cpu, s.mem)
		p.ix.SetHeld(s.n, s.held)
		p.undo.at[s.n] = 0
	}
	p.undo.saved = p.undo.saved[:0]
}

// blockNow applies, for a window [0, d), every reservation that starts
// before d. Only nodes with free GPUs now can change (at time 0 a node's
// usable GPUs are its free ones minus reserved ones), so it walks
// whichever is shorter: the nodes with free GPUs, or the reservation
// starts.
func (p *Profile) blockNow(d time.Duration) {
	if p.timeline.starts.Len() == 0 {
		return
	}
	withFree := 0
	for f := 1; f <= p.ix.MaxGPUs(); f++ {
		withFree += p.ix.NodesWithFree(topology.ClusterLevel, 0, topology.AnyType, f)
	}
	if withFree < p.timeline.starts.Len() {
		nodes := p.scratch.nodes[:0]
		for f := 1; f <= p.ix.MaxGPUs(); f++ {
			for n := range p.ix.Bucket(topology.ClusterLevel, 0, topology.AnyType, f) {
				nodes = append(nodes, n)
			}
		}
		slices.Sort(nodes)
		for _, n := range nodes {
			p.blockNode(n, d)
		}
		p.scratch.nodes = nodes[:0]
		return
	}
	p.timeline.starts.All(func(evs []timelineEntry) bool {
		for _, e := range evs {
			if e.at >= d {
				return false
			}
			if !p.touched(e.n) && p.ix.FreeSet(e.n) != 0 {
				p.blockNode(e.n, d)
			}
		}
		return true
	})
}

// blockNode removes from node n's free GPUs those reserved before d.
// GPUs released at 0 stay out: they are held now.
func (p *Profile) blockNode(n topology.NodeID, d time.Duration) {
	free := p.ix.FreeSet(n)
	if p.tracksUse() {
		// The CPU and memory of the reservations during [0, d) count as
		// used now.
		if cpu, mem := p.peakUse(n, p.ix.Held(n), -1, d); cpu != p.ix.UsedCPU(n) || mem != p.ix.UsedMemory(n) {
			p.touch(n)
			p.ix.SetUse(n, cpu, mem)
		}
	}
	if u := p.usable(n, free, 0, d) & free; u != free {
		p.touch(n)
		p.setUsable(n, u)
	}
}

// PlaceNow places r for a run of d starting now on GPUs that are free now
// and reserved by nobody before now+d, holds them in the index, and
// records their release at d, in place of any release they still had (of
// a job that ended early). When r does not fit that way, it returns
// an outcome other than gang.Placed and changes nothing. Cost: O(G) when
// the free GPUs of r's class cannot hold it; otherwise O(min(F, R)·e·L)
// for the F nodes with free GPUs and the R reservations that start
// before d, plus one [gang.Place] and one [Profile.AddRelease] per node
// placed on.
func (p *Profile) PlaceNow(r gang.Request, d time.Duration, s binpack.Scorer) (gang.Placement, gang.Outcome) {
	if !r.Valid(p.ix) {
		return gang.Placement{}, gang.Invalid
	}
	d = run(d)
	p.sync()
	defer p.settle()
	if p.cannotFitNow(r) {
		return gang.Placement{}, gang.NoCapacity
	}
	if p.timeline.starts.Len() == 0 {
		pl, out := gang.Place(p.ix, r, s)
		if out == gang.Placed {
			p.recordRelease(pl, d)
		}
		return pl, out
	}
	p.blockNow(d)
	pl, out := gang.Place(p.ix, r, s)
	if out == gang.Placed {
		if r.Avoid == nil && !r.Distinct {
			pl = p.preferReserved(pl, r, d, s)
		}
		pl.Release(p.ix)
	}
	p.restore()
	if out != gang.Placed {
		return pl, out
	}
	for _, sl := range pl.Slots {
		if err := p.ix.TakeSet(sl.Node, sl.GPUs); err != nil {
			panic("backfill: profile lost track of free GPUs: " + err.Error())
		}
		p.ix.AddUse(sl.Node, sl.CPUMillis, sl.MemoryMiB)
	}
	p.recordRelease(pl, d)
	return pl, out
}

// cannotFitNow reports whether r, well formed, has fewer members' room
// on the free GPUs of its class than it needs: then no placement now
// exists, whatever the reservations, and [gang.Place] would say
// NoCapacity. O(G).
func (p *Profile) cannotFitNow(r gang.Request) bool {
	if _, ok := p.memoShape(gang.Request{Members: r.Members, GPUsPerMember: r.GPUsPerMember, Class: r.Class, Required: r.Required, Preferred: r.Preferred}); !ok {
		return false
	}
	return p.ix.Capacity(topology.ClusterLevel, 0, r.Class, r.GPUsPerMember) < r.Members
}

// recordRelease records the release at d of the GPUs pl took now. They
// were free, so a release they still have is of a job that ended early:
// it goes, or they would count as free from then on while pl holds them
// until d. Dropping it only tightens the profile.
func (p *Profile) recordRelease(pl gang.Placement, d time.Duration) {
	for _, sl := range pl.Slots {
		if p.nodes[sl.Node].releasedGPUs&sl.GPUs != 0 {
			p.dropReleases(sl.Node, sl.GPUs)
		}
		p.setShares(sl.Node, sl.GPUs, sl.CPUMillis, sl.MemoryMiB)
		p.addRelease(sl.Node, sl.GPUs, d)
	}
}

// FitsNow reports whether r would fit for a run of d starting now, as
// PlaceNow would find, without changing anything. It costs what PlaceNow
// does, less the recording.
func (p *Profile) FitsNow(r gang.Request, d time.Duration, s binpack.Scorer) gang.Outcome {
	if !r.Valid(p.ix) {
		return gang.Invalid
	}
	d = run(d)
	if p.cannotFitNow(r) {
		return gang.NoCapacity
	}
	p.blockNow(d)
	pl, out := gang.Place(p.ix, r, s)
	if out == gang.Placed {
		pl.Release(p.ix)
	}
	p.restore()
	return out
}

// WithReservations runs fn while the index shows, for a run of d starting
// now, only the GPUs that no reservation holds before now+d, then restores
// the index. fn must leave the index as it found it. A query fn makes
// ([Profile.Earliest] and the like) answers for the index as it shows
// then, and the profile remembers none of those answers. O(min(F, R)·e·L)
// around fn, as for [Profile.PlaceNow].
func (p *Profile) WithReservations(d time.Duration, fn func()) {
	d = run(d)
	p.sync()
	defer p.settle()
	p.blockNow(d)
	defer p.restore()
	was := p.within
	p.within = true
	defer func() { p.within = was }()
	fn()
}
