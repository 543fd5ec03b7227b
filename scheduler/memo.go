package scheduler

import (
	"slices"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// stepMemo is what a Step remembers of one job to answer faster for the
// jobs that look alike to it: in a long queue many jobs of one shape wait
// in a row. Each entry answers a question whose answer depends only on
// its key and on what the key pins down of the Step's state, and free
// GPUs only get fewer during a Step, so an entry never goes stale. A
// Step without a memo (stepState.memo nil, Scheduler.noMemo) asks every
// question anew and decides the same: tests compare the two.
//
// Every method may be called on a nil *stepMemo: it then knows nothing
// and remembers nothing.
type stepMemo struct {
	// noFitNow holds, per shape and view of the reservations, the fewest
	// members known not to fit now clear of the reservations.
	noFitNow map[shapeKey]int
	// noFitIgnoringReservations is the same, fitting now on the free
	// GPUs whatever the reservations (key.shadows and key.reservations
	// are 0).
	noFitIgnoringReservations map[shapeKey]int
	// largestGang holds, per shape, the most members that fit the empty
	// cluster (see stepState.largestGang).
	largestGang map[shapeKey]int
	// failedSearches remembers, per shape and tier, the victim searches
	// that found none: a job with at least as many members and at least
	// as long a window (so that at least the same GPUs are reserved for
	// others) finds none either, with the default selector.
	failedSearches map[preemptKey][]failedSearch
	// waitedAt remembers, per waitKey, the state (see changes) in which
	// preempt last decided nothing for such a job, which it does without
	// changing anything: a job alike, in the same state, fares the same.
	waitedAt map[waitKey]int
	// resourceWaits remembers, per shape and member count, the state
	// (see changes) in which noResources last decided and what: a job
	// alike, in the same state, waits alike.
	resourceWaits map[resourceKey]resourceWait
	// delayMessages and noRoomMessages are the wait messages already
	// formatted, by what they say.
	delayMessages  map[delayKey]string
	noRoomMessages map[messageKey]string
}

func newStepMemo() *stepMemo {
	return &stepMemo{
		noFitNow:                  map[shapeKey]int{},
		noFitIgnoringReservations: map[shapeKey]int{},
		largestGang:               map[shapeKey]int{},
		failedSearches:            map[preemptKey][]failedSearch{},
		waitedAt:                  map[waitKey]int{},
		resourceWaits:             map[resourceKey]resourceWait{},
		delayMessages:             map[delayKey]string{},
		noRoomMessages:            map[messageKey]string{},
	}
}

// shapeKey identifies jobs that fit or fail alike. shadows and
// reservations pin down the reservations a job must respect: with
// reservations made so far, the shadows of them that start within its
// run are the earliest-starting ones, the same set for every job with
// equal counts (see shadowsWithin).
//
// The keys of the Step's memos have no padding between or after their
// fields: a map then hashes a key as one block of memory, where padding
// makes it hash each run of fields apart, which several lookups per
// pending job come to feel.
type shapeKey struct {
	class         topology.Class
	mode          int32 // the job's PlacementMode: the GPUs of a start, so whether preempt claims it, depend on it
	gpusPerMember int
	cpu, mem      int64 // per member, as the gang.Request
	required      int   // gang.Request levels
	preferred     int
	spread        int // the request's SpreadLevel: it too chooses a start's GPUs (for the preemption memos; whether a job fits does not depend on it)
	shadows       int
	reservations  int
	eligible      int32 // the job's list of eligible nodes (eligibleSet.id; 0: every node)
}

// preemptKey identifies the jobs whose victim searches fail alike.
type preemptKey struct {
	shape shapeKey
	tier  int
}

// waitKey identifies the jobs that preempt treats alike in one state of
// the Step: everything of a job that preempt reads (its hold, or
// Forever for a run past every reservation's start: see preempt) but
// whether it may reserve. That changes only how a claim is recorded (a
// reservation, or a wait when a ReservationPolicy declines), never
// whether preempt decides: every claim is made when the start is
// claimable whatever mayReserve says, and where mayReserve makes
// asFastAnyway leave the claim to the search, that search claims the
// same start (victims found are not worth evicting for it, and without
// them awaitEvictions finds it).
type waitKey struct {
	preemptKey
	members int
	hold    time.Duration
}

// failedSearch is a victim search that found none: for members members
// whose run, with the largest grace, spans window.
type failedSearch struct {
	members int
	window  time.Duration
}

// delayKey identifies the behind-reservation messages that are alike:
// the job's class and GPUs per member (a job can delay only the
// reservations that hold free GPUs on a node with room for a member: see
// delays), (for that class) how many reservations start within its run
// out of how many were made, and how many jobs were placed (which leaves
// the same GPUs free).
type delayKey struct {
	class                 topology.Class
	gpusPerMember         int32 // not int: the key has no padding
	shadows, all, started int
}

// messageKey identifies the no-room messages that are alike.
type messageKey struct {
	why                    Reason
	members, gpusPerMember int
	free, room             int
	gpuType, required      string
}

// fewestNoFit reports whether members members of the shape key are known
// not to fit: at least as many as a gang noted in noFit.
func fewestNoFit(noFit map[shapeKey]int, key shapeKey, members int) bool {
	least, known := noFit[key]
	return known && members >= least
}

// noteNoFit notes in noFit that members members of key do not fit.
func noteNoFit(noFit map[shapeKey]int, key shapeKey, members int) {
	if least, known := noFit[key]; !known || members < least {
		noFit[key] = members
	}
}

// failsNow reports whether members members of key are known not to fit
// now clear of the reservations.
func (m *stepMemo) failsNow(key shapeKey, members int) bool {
	return m != nil && fewestNoFit(m.noFitNow, key, members)
}

func (m *stepMemo) noteFailsNow(key shapeKey, members int) {
	if m != nil {
		noteNoFit(m.noFitNow, key, members)
	}
}

// failsIgnoringReservations reports whether members members of key are
// known not to fit now even ignoring the reservations.
func (m *stepMemo) failsIgnoringReservations(key shapeKey, members int) bool {
	return m != nil && fewestNoFit(m.noFitIgnoringReservations, key, members)
}

func (m *stepMemo) noteFailsIgnoringReservations(key shapeKey, members int) {
	if m != nil {
		noteNoFit(m.noFitIgnoringReservations, key, members)
	}
}

// largest returns the remembered largest gang of key, or compute's.
func (m *stepMemo) largest(key shapeKey, compute func() int) int {
	if m == nil {
		return compute()
	}
	most, ok := m.largestGang[key]
	if !ok {
		most = compute()
		m.largestGang[key] = most
	}
	return most
}

// searchFails reports whether a victim search for members members over
// window is known to find none: one for no more members and no longer
// a window found none.
func (m *stepMemo) searchFails(key preemptKey, members int, window time.Duration) bool {
	if m == nil {
		return false
	}
	for _, f := range m.failedSearches[key] {
		if members >= f.members && window >= f.window {
			return true
		}
	}
	return false
}

// noteSearchFailed keeps only the failures no other implies: the list
// stays short.
func (m *stepMemo) noteSearchFailed(key preemptKey, f failedSearch) {
	if m == nil {
		return
	}
	m.failedSearches[key] = append(slices.DeleteFunc(m.failedSearches[key], func(o failedSearch) bool {
		return f.members <= o.members && f.window <= o.window
	}), f)
}

// resourceKey identifies the jobs whose CPU or memory waits are alike.
type resourceKey struct {
	shape   shapeKey
	members int
}

// resourceWait is a remembered noResources answer and the state it was
// given in.
type resourceWait struct {
	changes int
	s       status
}

// resourceWait returns noResources' answer for key in state changes,
// computing it with decide unless remembered.
func (m *stepMemo) resourceWait(key resourceKey, changes int, decide func() status) status {
	if m == nil {
		return decide()
	}
	if w, ok := m.resourceWaits[key]; ok && w.changes == changes {
		return w.s
	}
	s := decide()
	m.resourceWaits[key] = resourceWait{changes, s}
	return s
}

// waitedIn reports whether preempt decided nothing for a job of key in
// the state changes.
func (m *stepMemo) waitedIn(key waitKey, changes int) bool {
	if m == nil {
		return false
	}
	at, ok := m.waitedAt[key]
	return ok && at == changes
}

func (m *stepMemo) noteWaited(key waitKey, changes int) {
	if m != nil {
		m.waitedAt[key] = changes
	}
}

// message returns the remembered message of key, or format's.
func message[K comparable](m map[K]string, key K, format func() string) string {
	if m == nil {
		return format()
	}
	msg, ok := m[key]
	if !ok {
		msg = format()
		m[key] = msg
	}
	return msg
}

func (m *stepMemo) delayMessage(key delayKey, format func() string) string {
	if m == nil {
		return format()
	}
	return message(m.delayMessages, key, format)
}

func (m *stepMemo) noRoomMessage(key messageKey, format func() string) string {
	if m == nil {
		return format()
	}
	return message(m.noRoomMessages, key, format)
}
