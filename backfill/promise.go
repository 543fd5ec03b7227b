package backfill

import (
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// Usable reports whether every GPU of pl is usable for a run of d from
// start, by the rule of [Profile]: healthy, on a ready node, free now or
// released by start, and held by no reservation at any moment of the
// run. A run from now (start <= 0) may use only GPUs free now. It
// changes nothing: a host checks with it that a slot promised earlier is
// still there before it reserves it again ([Profile.Reserve]) or takes
// it ([Profile.Take]). O(slots × e) for e events per node.
func (p *Profile) Usable(pl gang.Placement, start, d time.Duration) bool {
	start = max(start, 0)
	for _, sl := range pl.Slots {
		n := sl.Node
		if int(n) < 0 || int(n) >= len(p.nodes) || p.ix.State(n) != topology.Ready {
			return false
		}
		free := p.ix.FreeSet(n)
		u := free
		if start > 0 {
			u = p.usable(n, free, start, run(d)) & p.ix.Healthy(n)
		} else if ne := &p.nodes[n]; ne.resFirst < run(d) && len(ne.reservations()) > 0 {
			u &^= p.reservedIn(ne, 0, run(d))
		}
		if sl.GPUs&^u != 0 {
			return false
		}
	}
	return true
}

// Take starts a run of d now on the GPUs of pl, which the caller found
// usable from now ([Profile.Usable]): it holds them in the index and
// records their release at d, as [Profile.PlaceNow] does for the GPUs it
// chooses.
func (p *Profile) Take(pl gang.Placement, d time.Duration) {
	p.sync()
	defer p.settle()
	for _, sl := range pl.Slots {
		if err := p.ix.TakeSet(sl.Node, sl.GPUs); err != nil {
			panic("backfill: Take of GPUs that are not free: " + err.Error())
		}
	}
	p.recordRelease(pl, run(d))
}
