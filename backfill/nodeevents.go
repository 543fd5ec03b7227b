package backfill

import (
	"slices"
	"sort"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// nodeEvent is one event of a node: a release (start == end == at) or a
// reservation of [start, end).
type nodeEvent struct {
	start, end time.Duration
	set        topology.GPUSet
	seq        int32 // of its timeline entry: the release, or the reservation's end
	startSeq   int32 // of a reservation's entry among the starts
	reserve    bool
	// cpu and mem are a reservation's CPU and memory on the node (see
	// resources.go); zero for a release.
	cpu, mem int64
}

// nodeEvents is the events of one node: its releases in
// events[:numReleases], in the order recorded, then its reservations,
// ordered by end (those with equal ends in the order made). A reservation
// that ended by a run's start cannot hold a GPU during the run, so a scan
// for the reservations a run overlaps walks them from the last and stops
// at the first that ended by its start.
//
// Beside them, a summary that answers most runs without reading the
// events (see [Profile.usable]).
type nodeEvents struct {
	events      []nodeEvent
	numReleases int
	// releasedGPUs is the GPUs of all releases, and lastRelease the
	// latest release time (0 when none).
	releasedGPUs topology.GPUSet
	lastRelease  time.Duration
	// The earliest reservation start and the latest reservation end (0
	// when none).
	firstReservation, lastReservationEnd time.Duration
	// listed says that the node is in Profile.eventful: events can be
	// empty again after a move drops its only release (see MoveRelease).
	listed bool
}

// addRelease appends release e.
func (ne *nodeEvents) addRelease(e nodeEvent) {
	ne.events = slices.Insert(ne.events, ne.numReleases, e)
	ne.numReleases++
	ne.releasedGPUs |= e.set
	ne.lastRelease = max(ne.lastRelease, e.start)
}

// releasesChanged recomputes releasedGPUs and lastRelease after the releases
// changed.
func (ne *nodeEvents) releasesChanged() {
	ne.releasedGPUs, ne.lastRelease = 0, 0
	for _, e := range ne.releases() {
		ne.releasedGPUs |= e.set
		ne.lastRelease = max(ne.lastRelease, e.start)
	}
}

// releaseSet returns the GPUs of the release with timeline entry seq,
// and false when the node has no such release any more.
func (ne *nodeEvents) releaseSet(seq int32) (topology.GPUSet, bool) {
	for _, e := range ne.releases() {
		if e.seq == seq {
			return e.set, true
		}
	}
	return 0, false
}

// releases returns the releases.
func (ne *nodeEvents) releases() []nodeEvent { return ne.events[:ne.numReleases] }

// reservations returns the reservations, ordered by end.
func (ne *nodeEvents) reservations() []nodeEvent { return ne.events[ne.numReleases:] }

// addReservation inserts reservation e after those that end by its end.
func (ne *nodeEvents) addReservation(e nodeEvent) {
	if len(ne.events) == ne.numReleases {
		ne.firstReservation = e.start
	}
	ne.firstReservation = min(ne.firstReservation, e.start)
	ne.lastReservationEnd = max(ne.lastReservationEnd, e.end)
	i := ne.numReleases + sort.Search(len(ne.events)-ne.numReleases, func(i int) bool { return ne.events[ne.numReleases+i].end > e.end })
	ne.events = slices.Insert(ne.events, i, e)
}

// freedAt is when e frees its GPUs in the timeline: a release's time or a
// reservation's end; false for a reservation that never ends.
func (e *nodeEvent) freedAt() (time.Duration, bool) {
	if !e.reserve {
		return e.start, true
	}
	return e.end, e.end != Forever
}

// releasedNone reports whether no GPU of s on node n is free now or
// released by t, so that none of them is usable for a run from t. It
// reads the node's earliest release, which a release moved later leaves
// earlier than the truth: that only answers false more often. O(1), after
// buildDense.
func (p *Profile) releasedNone(n topology.NodeID, s topology.GPUSet, t time.Duration) bool {
	return s&p.dense.alloc[n]&^p.seenHeld[n] == 0 && t < p.dense.earliestRelease[n]
}

// noteStart records a reservation of node n from start.
func (p *Profile) noteStart(n topology.NodeID, start time.Duration) {
	rn := &p.reserved
	if rn.firstStart == nil {
		rn.firstStart = make([]time.Duration, p.ix.NumNodes())
		for i := range rn.firstStart {
			rn.firstStart[i] = Forever
		}
		rn.count = make([]uint32, p.ix.NumNodes())
	}
	rn.firstStart[n] = min(rn.firstStart[n], start)
	rn.count[n]++
}

// reservations is the number of reservations made on node n so far
// (wrapping around).
func (p *Profile) reservations(n topology.NodeID) uint32 {
	if p.reserved.count == nil {
		return 0
	}
	return p.reserved.count[n]
}

// noteEvent lists node n among the nodes with events, once.
func (p *Profile) noteEvent(n topology.NodeID) {
	if ne := &p.nodes[n]; !ne.listed {
		ne.listed = true
		p.eventful = append(p.eventful, n)
	}
}

// usable is the rule of the type comment for node n, whose free GPUs now
// are base.
func (p *Profile) usable(n topology.NodeID, base topology.GPUSet, t, d time.Duration) topology.GPUSet {
	ne := &p.nodes[n]
	u := base | ne.releasedBy(t)
	end := add(t, d)
	if u == 0 || ne.lastReservationEnd <= t || ne.firstReservation >= end {
		return u
	}
	return u &^ p.reservedIn(ne, t, end)
}

// releasedBy returns the GPUs of the node that its releases free by t.
// O(1) when t is at or after its last release, else O(e) for its e
// releases.
func (ne *nodeEvents) releasedBy(t time.Duration) topology.GPUSet {
	if ne.lastRelease <= t {
		return ne.releasedGPUs
	}
	var u topology.GPUSet
	for _, e := range ne.releases() {
		if e.start <= t {
			u |= e.set
		}
	}
	return u
}

// reservedIn returns the GPUs that some reservation of ne holds at any
// moment of [t0, t1): it walks the reservations from the last ended and
// stops at the first that ended by t0.
func (p *Profile) reservedIn(ne *nodeEvents, t0, t1 time.Duration) topology.GPUSet {
	var s topology.GPUSet
	for i := len(ne.events) - 1; i >= ne.numReleases; i-- {
		e := &ne.events[i]
		if e.end <= t0 {
			break
		}
		if e.start < t1 {
			s |= e.set
		}
	}
	return s
}
