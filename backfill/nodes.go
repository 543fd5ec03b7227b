package backfill

import (
	"time"

	"github.com/gpusched/gpusched/topology"
)

// UsableOn returns the GPUs of node n that a run of d starting at t
// (from now when t <= 0) may use as [Profile.Earliest] counts them: free
// now or released by t, and held by no reservation at any moment of the
// run; none on a node that is not ready. Those of them free now are what
// [Profile.PlaceNow] may take on n for a run from now. It is the rule of
// the sweep for one node, for callers that place a job on a few nodes of
// their choosing (a job limited to eligible nodes) without sweeping the
// cluster. It changes nothing. O(e) for the e events of n.
func (p *Profile) UsableOn(n topology.NodeID, t, d time.Duration) topology.GPUSet {
	if p.ix.State(n) != topology.Ready {
		return 0
	}
	return p.usable(n, p.ix.FreeSet(n), max(t, 0), run(d)) & p.ix.Healthy(n)
}

// AppendGrowths appends to dst the instants at which the GPUs of node n
// that [Profile.UsableOn] finds for a run can grow, as the run's start
// moves later: its releases and the ends of its reservations, unsorted
// and possibly repeated. Between two of them, a later start only loses
// GPUs. O(e) for the e events of n.
func (p *Profile) AppendGrowths(dst []time.Duration, n topology.NodeID) []time.Duration {
	ne := &p.nodes[n]
	for _, e := range ne.releases() {
		dst = append(dst, e.start)
	}
	for _, e := range ne.reservations() {
		dst = append(dst, e.end)
	}
	return dst
}

// FreeBy returns the GPUs of node n that are free now or released by t
// (from now when t <= 0), whatever the reservations: the GPUs that
// [Profile.UsableOn] would find for a run from t if no reservation held
// any; none on a node that is not ready. It changes nothing. O(e) for the
// e releases of n.
func (p *Profile) FreeBy(n topology.NodeID, t time.Duration) topology.GPUSet {
	if p.ix.State(n) != topology.Ready {
		return 0
	}
	return (p.ix.FreeSet(n) | p.nodes[n].releasedBy(t)) & p.ix.Healthy(n)
}
