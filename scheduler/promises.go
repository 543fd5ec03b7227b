package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// This file keeps the promises of Snapshot.Plan (DESIGN section 3a),
// before any job's turn, in two passes over the pending jobs that hold
// an entry of the plan, in queue order:
//
//	keep             an entry whose GPUs are still usable for the job's whole
//	                 run from the promised start is kept: the job starts now on
//	                 those GPUs when its start has come, else they are reserved
//	                 for it again; otherwise the promise is broken, with its cause
//	improvePromises  each kept reservation is taken out and the job starts now
//	                 or takes the earliest slot that disturbs no other
//	                 reservation, never later than its promise (its own slot is
//	                 free again); a preemptor's claim on GPUs being evicted
//	                 moves only to start now or to another such claim
//	                 (claimHeld)
//
// Every promise kept is in the profile before any other job is looked at,
// and no job placed or reserved later may disturb one (the profile's
// rule): so a start never moves later unless a cause named in the job's
// message broke its promise. A job whose promise was broken is planned
// afresh in its turn.

// promise is a plan entry for a pending job, resolved on the index.
type promise struct {
	start time.Duration  // the promised start, an offset from now
	pl    gang.Placement // the promised GPUs
	// res is the index of the job's reservation in decided.Reservations
	// while it holds one (-1 otherwise), and ledger its index in the
	// ledger's list.
	res, ledger int
	// state: kept (reserved again), taken (started now on the promised
	// GPUs), or broken with why.
	kept, taken bool
	why         string
}

// keepPromises reads the plan and keeps what of it still holds (see the
// file comment). It runs once, after the queue is ordered.
func (st *stepState) keepPromises() {
	if len(st.snap.Plan) == 0 {
		return
	}
	slotOf := make(map[string]int32, len(st.pending))
	for i, j := range st.pending {
		slotOf[j.ID] = int32(i)
	}
	st.promises = make(map[int32]*promise, len(st.snap.Plan))
	for i := range st.snap.Plan {
		r := &st.snap.Plan[i]
		slot, ok := slotOf[r.Job]
		if !ok {
			continue // not pending: started, finished or unknown
		}
		st.promises[slot] = st.resolve(r)
	}
	for _, slot := range st.queue {
		if p := st.promises[slot]; p != nil && p.why == "" {
			st.keep(slot, p)
		}
	}
	st.improvePromises()
}

// resolve turns plan entry r into a promise on the index; one on a node
// or GPU the cluster no longer has is broken from the start.
func (st *stepState) resolve(r *Reservation) *promise {
	p := &promise{start: st.offset(r.Start), res: -1}
	for _, a := range r.Allocation {
		n, ok := st.ix.Lookup(a.Node)
		if !ok {
			p.why = fmt.Sprintf("node %q is no longer in the cluster", a.Node)
			return p
		}
		for _, g := range a.GPUs {
			if g >= st.ix.GPUs(n) {
				p.why = fmt.Sprintf("node %q has no GPU %d", a.Node, g)
				return p
			}
		}
		p.pl.Slots = append(p.pl.Slots, gang.Slot{Node: n, GPUs: topology.SetOf(a.GPUs...)})
	}
	p.pl.Level = topology.ClusterLevel
	return p
}

// keep keeps promise p of the job in slot, or breaks it, saying why.
func (st *stepState) keep(slot int32, p *promise) {
	j := st.pending[slot]
	req, ok := st.request(j)
	if !ok {
		p.why = fmt.Sprintf("no node has its GPU type %q any more", j.GPUType)
		return
	}
	if p.why = st.fitsShape(j, req, &p.pl); p.why != "" {
		return
	}
	if st.oneType(j, req) && !oneClass(st.ix, p.pl) {
		p.why = "its promised GPUs are of several types and the job does not mix types"
		return
	}
	if p.start > st.horizon && !st.preempts(j) {
		// A preemptor's claim on the GPUs its victims free ignores the
		// horizon when it is made (see claim), so it does when kept:
		// otherwise a victim requeued with a short grace takes its GPUs
		// back before the preemptor starts, and is evicted again.
		p.why = "its promised start is beyond the planning horizon"
		return
	}
	d := st.hold(j)
	usable := st.profile.Usable(p.pl, p.start, d)
	if !usable && (p.start > 0 || !st.profile.UsableReserved(p.pl, 0, d)) {
		p.why = st.whyUnusable(p)
		return
	}
	// A promise due now on GPUs whose job's release is due now too (its
	// time limit is reached, its eviction under way) is reserved from now,
	// as a reservation made afresh would be, not broken: the job starts
	// when they are free.
	if p.start == 0 && usable {
		st.profile.Take(p.pl, d)
		st.recordPlacement(j, p.pl)
		p.taken = true
		return
	}
	p.res, p.ledger = len(st.decided.Reservations), len(st.reservations.made)
	st.reserveAt(j, p.pl, p.start, d)
	p.kept = true
}

// fitsShape says how pl no longer fits job j (whose request is req), or
// "" when it does: as many GPUs as j needs, whole members on each node,
// nodes of j's GPU type, one domain of its required level. (A spread
// job's members may share a node when capacity made them.)
func (st *stepState) fitsShape(j *Job, req gang.Request, pl *gang.Placement) string {
	total := 0
	for i := range pl.Slots {
		sl := &pl.Slots[i]
		g := sl.GPUs.Len()
		total += g
		if g%j.GPUsPerMember != 0 {
			return "the job's shape changed since it was promised"
		}
		sl.Members = g / j.GPUsPerMember
		sl.CPUMillis, sl.MemoryMiB = int64(sl.Members)*req.CPUMillis, int64(sl.Members)*req.MemoryMiB
		if !st.ix.InClass(sl.Node, req.Class) {
			return "the job's GPU type changed since it was promised"
		}
		if req.Avoid != nil && req.Avoid(sl.Node) {
			return "the job's eligible nodes changed since it was promised"
		}
		if req.Required != gang.NoLevel && st.ix.DomainOf(req.Required, sl.Node) != st.ix.DomainOf(req.Required, pl.Slots[0].Node) {
			return "the job's topology changed since it was promised"
		}
	}
	if total != j.GPUs() {
		return "the job's shape changed since it was promised"
	}
	return ""
}

// whyUnusable names the first cause that makes a GPU of p unusable for
// its run: a node not ready, an unhealthy GPU, a GPU still held at the
// promised start, else another reservation (a job ahead in the queue:
// one of a higher tier, or one that changed).
func (st *stepState) whyUnusable(p *promise) string {
	for _, sl := range p.pl.Slots {
		name := st.ix.Name(sl.Node)
		switch st.ix.State(sl.Node) {
		case topology.Down:
			return fmt.Sprintf("node %q is down", name)
		case topology.Draining:
			return fmt.Sprintf("node %q is draining", name)
		}
		if bad := sl.GPUs &^ st.ix.Healthy(sl.Node); bad != 0 {
			return fmt.Sprintf("GPU %d of node %q is unhealthy", bad.Indices()[0], name)
		}
	}
	for _, sl := range p.pl.Slots {
		if p.start == 0 && sl.GPUs&st.ix.Held(sl.Node) != 0 {
			return fmt.Sprintf("GPUs of node %q are still held", st.ix.Name(sl.Node))
		}
	}
	return "a job ahead of it in the queue took its GPUs"
}

// improvePromises moves each kept promise, in queue order, to the
// earliest slot that disturbs no other reservation (improve). This is the
// compression of conservative backfill (Mu'alem and Feitelson); every
// backfill mode makes it, so that a protected job under EASY, too, is
// reserved the earliest start it has.
func (st *stepState) improvePromises() {
	moved := 0 // past the last reservation that left GPUs free now: one ahead of it may start now
	for at, slot := range st.queue {
		if p := st.promises[slot]; p != nil && p.kept && st.improveLeftRoom(st.pending[slot], p) {
			moved = at + 1
		}
	}
	for moved > 0 {
		moved = st.startKeptNow(st.queue[:moved])
	}
}

// improveLeftRoom improves job j's kept promise p (improve) and reports
// whether that may let a job ahead of j start now: j moved, or started
// now, off GPUs some of which are free now (mayStartOn), or a repin
// moved other reservations to make room for it (their old GPUs too).
func (st *stepState) improveLeftRoom(j *Job, p *promise) bool {
	old, repins := p.pl, st.repinMoves
	moved := st.improve(j, p)
	return st.repinMoves > repins || (moved || p.taken) && st.mayStartOn(old)
}

// improve moves job j's kept promise p to the earliest slot that
// disturbs no other reservation: its reservation is taken out, then it
// starts now if it can (on GPUs free now that no reservation needs
// during its run), else it is reserved the earliest slot, which is never
// later than its promise since that slot is free again. It reports
// whether j holds a reservation that moved (earlier, or under EASY onto
// other GPUs at the same start): its old GPUs are free again.
func (st *stepState) improve(j *Job, p *promise) (moved bool) {
	reqs := st.promiseRequests(j, p)
	d := st.hold(j)
	if st.cfg.Backfill == Conservative && st.noEarlierStart(reqs, d, p.start) {
		// The count of free GPUs allows no earlier start: nothing the
		// searches below could find, and its GPUs stay.
		return false
	}
	if st.cfg.Backfill == Conservative && st.stuckInPlace(j, reqs, d, p) {
		return false // nor could it, proven without taking it out
	}
	prev, mark, started := st.takeOutToStart(j, p, reqs, d)
	if started {
		return false
	}
	// Its own slot is free again, so the search on its own type finds
	// one by its promise. At the same start, EASY takes the profile's
	// choice of GPUs (busy now before free now), as a reservation made
	// afresh, which keeps EASY with a plan equal to textbook EASY;
	// conservative backfill keeps the promised GPUs, so that every job
	// behind sees the plan it was promised by and a forecast under exact
	// limits comes true to the second. Another type replaces it only
	// with a strictly earlier start.
	start, ok := st.earliestOfRequests(j, reqs, d, p.start)
	// Conservative backfill counts GPUs: when the count allows an
	// earlier start than the GPUs found, reservations in the way may
	// move to other GPUs at their own starts (repinAt).
	best := p.start
	if ok {
		best = min(best, start.At)
	}
	fresh := true // the profile's remembered answers are as mark left them
	claim := st.claimHeld(j, p.pl)
	if c, try := st.repinStart(j, reqs[0], d, best, p.start, true); try && !claim {
		if pl, done := st.repinAt(j, reqs[0], d, c); done {
			if c == 0 {
				st.recordPlacement(j, pl)
				p.kept, p.taken = false, true
				return false
			}
			p.start, p.pl = c, pl
			p.res, p.ledger = len(st.decided.Reservations), len(st.reservations.made)
			st.recordReservation(j, pl, c)
			return true
		}
		fresh = false
	}
	p.res, p.ledger = len(st.decided.Reservations), len(st.reservations.made)
	if !ok || start.At == p.start && (st.cfg.Backfill == Conservative || sameSlots(start.Placement, p.pl)) ||
		claim && !st.claimHeld(j, start.Placement) {
		// Nothing better: the reservation goes back as it was, and the
		// profile's remembered answers with it.
		st.putBack(j, p, d, mark, fresh, prev)
		return false
	}
	p.start, p.pl = start.At, start.Placement
	st.reserveAt(j, p.pl, p.start, d)
	return true
}

// claimHeld reports whether job j's kept promise on pl is a preemptor's
// claim on GPUs that jobs being evicted still hold (its victims, as far
// as Step can tell). Compression moves such a claim only to start now or
// to another claim (no re-pin): moved to a later start on GPUs no job
// being evicted holds, it would leave the GPUs its victims free to the
// jobs it may preempt, a requeued victim among them, which a later Step
// could evict again to start it sooner (DESIGN 3a: a preemptor's
// reservation on the GPUs its victims free keeps lower tiers from taking
// them; it starts when they are gone).
func (st *stepState) claimHeld(j *Job, pl gang.Placement) bool {
	if !st.preempts(j) {
		return false
	}
	evicting, _ := st.holdsBack(pl)
	return evicting
}

// earliestOfRequests is the earliest start by promised of a run of d for
// j under reqs[0], or under another of reqs when that is strictly earlier.
func (st *stepState) earliestOfRequests(j *Job, reqs []gang.Request, d, promised time.Duration) (backfill.Start, bool) {
	start, ok := st.earliestBy(j, reqs[0], d, 0, promised)
	for _, r := range reqs[1:] {
		by := promised - 1
		if ok {
			by = start.At - 1
		}
		if by < 0 {
			break
		}
		if s, found := st.earliestBy(j, r, d, 0, by); found {
			start, ok = s, true
		}
	}
	return start, ok
}

// noEarlierStart reports whether job j's kept reservation, from start
// (> 0) for a run of d under reqs[0], could not move earlier under any of
// reqs by the count of free GPUs of each request's class over time, a
// bound no search answers before: for its own class with its own
// reservation as if taken out (backfill.Profile.NoStartBefore), for
// another type's class as it is (backfill.Profile.FreeBound). O(log B +
// breakpoints swept) per request.
func (st *stepState) noEarlierStart(reqs []gang.Request, d, start time.Duration) bool {
	if start <= 0 || !st.profile.NoStartBefore(reqs[0], d, start) {
		return false
	}
	for _, r := range reqs[1:] {
		if st.profile.FreeBound(r, d, 0) < start {
			return false
		}
	}
	return true
}

// stuckInPlace reports whether job j's kept reservation p, for a run of
// d under reqs, could not move earlier, proven without taking it out,
// for a job that no repin would move (repinStart). Taken out, it frees
// its GPUs over [p.start, p.start+d), and its share of their nodes' CPU
// and memory, and nothing else. So a run from t < p.start that could
// then start either ends by p.start, and fits as things are, or holds
// the instant p.start-1, which stuckAt rules out. It holds when stuckAt
// does and no search with the reservation in place finds the first kind
// under any of reqs (another type's GPUs are not its own). Worked
// example, one member of 2 GPUs promised GPUs 0-1 of node a from 3h for
// 2h:
//
//	as things are       a: GPUs 0-1 busy until 3h; no start by 3h anywhere
//	at 3h-1ns           GPUs 0-1 still busy: no run holding it can use them
//	taken out           a run from 2h would need 0-1 at 2h: still busy
//	answer              true: its GPUs stay, nothing taken out
//
// Unlike taking the reservation out and putting it back, the searches
// leave the profile's remembered answers as tight as they were, for the
// jobs alike that follow. A spread job kept apart from its group starts
// now by its own rule (placeApart) and is not proven here. A Step
// without memos (Scheduler.noMemo) takes every promise out instead: the
// reference that tests compare with.
func (st *stepState) stuckInPlace(j *Job, reqs []gang.Request, d time.Duration, p *promise) bool {
	if st.memo == nil || p.start <= 0 || j.Placement == Spread && j.Group != "" ||
		st.repinFailures < maxRepinFailures && st.countExact(j, reqs[0]) {
		return false
	}
	before := p.start - 1
	if !st.stuckAt(j, reqs[0], p, before, d) {
		return false
	}
	for _, r := range reqs {
		if _, found := st.earliestBy(j, r, d, 0, before); found {
			return false
		}
	}
	return true
}

// stuckAt reports whether no run of job j under req for d that holds
// instant before can fit once j's reservation p, which starts after
// before, is taken out. Such a run needs all its GPUs at that instant,
// where p holds none yet, so each of these proves it without taking p
// out:
//
//	none of p's GPUs is usable then: the run gains nothing from them
//	  (unless j asks for CPU or memory that nodes limit: p frees its
//	  share of its nodes', which the run may use on their other GPUs);
//	j's members fit nowhere for that instant alone;
//	the members that p's nodes cannot hold then (counting the GPUs usable
//	  on them, g to a member) fit nowhere as things are for a run of d
//	  that holds the instant: they run on other nodes, which taking p
//	  out does not change.
//
// O(e) per node of p for its e events, then a search of one instant, then
// one of the starts from before+1-d, each when the one before does not
// decide.
func (st *stepState) stuckAt(j *Job, req gang.Request, p *promise, before, d time.Duration) bool {
	shares := st.ix.Limited() && (req.CPUMillis > 0 || req.MemoryMiB > 0)
	own, room := false, 0
	for i, sl := range p.pl.Slots {
		u := st.profile.UsableOn(sl.Node, before, 1)
		own = own || shares || u&sl.GPUs != 0
		if !slices.ContainsFunc(p.pl.Slots[:i], func(x gang.Slot) bool { return x.Node == sl.Node }) {
			room += u.Len() / req.GPUsPerMember
		}
	}
	if !own {
		return true
	}
	if _, found := st.earliestBy(j, req, 1, before, before); !found {
		return true
	}
	if room >= req.Members {
		return false
	}
	rest := req
	rest.Members -= room
	_, found := st.earliestBy(j, rest, d, max(0, before+1-max(d, 1)), before)
	return !found
}

// startKeptNow gives each job of queue (a prefix of the queue) that still
// holds a kept reservation, in order, another chance to start now: a
// reservation behind it that improvePromises moved onto other GPUs may
// have freed what it lacked (say its own start is due later on GPUs busy
// now, while the moved job no longer needs a GPU free now). A job that
// starts frees its reservation, which may let one ahead of it start: the
// result is the length of the prefix to try again (0 when no job
// started), so the caller's repeats end after at most one per kept
// promise. A job without room for its members on the GPUs free now is
// passed over without touching its reservation.
func (st *stepState) startKeptNow(queue []int32) int {
	again := 0
	for at, slot := range queue {
		p := st.promises[slot]
		if p == nil || !p.kept {
			continue
		}
		if st.startNow(st.pending[slot], p) {
			again = at
		}
	}
	return again
}

// startNow starts job j, which holds kept promise p, now if it can (on
// GPUs free now that no other reservation needs during its run), and
// reports whether it did; otherwise its reservation stays as it was. A
// job without room for its members on the GPUs free now is passed over
// without touching its reservation.
func (st *stepState) startNow(j *Job, p *promise) bool {
	reqs := st.promiseRequests(j, p)
	if !st.roomNow(reqs) {
		return false
	}
	d := st.hold(j)
	if st.noStartNowInPlace(j, p, reqs, d) {
		return false
	}
	prev, mark, started := st.takeOutToStart(j, p, reqs, d)
	if !started {
		st.putBack(j, p, d, mark, true, prev)
	}
	return started
}

// takeOutToStart takes job j's kept reservation p (a run of d under
// reqs) out of the profile and starts j now if it can, on GPUs free now
// that no other reservation needs during its run. Otherwise p stays out:
// prev (the decision entry p held) and mark are what putBack needs.
func (st *stepState) takeOutToStart(j *Job, p *promise, reqs []gang.Request, d time.Duration) (prev int, mark backfill.Mark, started bool) {
	prev = p.res
	mark = st.unreserve(j, p, d)
	if pl, ok := st.placeNowAnyOf(j, reqs, d); ok {
		st.recordPlacement(j, pl)
		p.kept, p.taken = false, true
		return prev, mark, true
	}
	return prev, mark, false
}

// noStartNowInPlace reports whether job j, holding kept promise p (a run
// of d under reqs), could not start now even with p taken out, proven
// with p in place: when the count of free GPUs allows no earlier start
// than p's (noEarlierStart, which counts p as taken out); or when none
// of p's GPUs is free now, since a run from now needs every GPU it takes
// free now, so taking p out frees nothing such a run could use (unless
// nodes limit CPU or memory: p's share of its nodes' frees too), and a
// search from now with p in place answers for it. A spread job kept
// apart from its group is left to placeNowAnyOf.
func (st *stepState) noStartNowInPlace(j *Job, p *promise, reqs []gang.Request, d time.Duration) bool {
	if st.noEarlierStart(reqs, d, p.start) {
		return true
	}
	if st.ix.Limited() || st.freeNow(p.pl) || j.Placement == Spread && j.Group != "" {
		return false
	}
	for _, r := range reqs {
		if _, found := st.earliestBy(j, r, d, 0, 0); found {
			return false
		}
	}
	return true
}

// putBack puts back job j's reservation p for a run of d, which unreserve
// took out of the decision's entry prev, leaving mark: in the profile with
// its remembered answers (Profile.Restore) when fresh says that only
// queries touched the profile since, else as a new reservation (a repin
// tried and undone in between leaves answers that only Reserve keeps
// sound); and in the decision as a new entry that takes over the old
// one's allocation.
func (st *stepState) putBack(j *Job, p *promise, d time.Duration, mark backfill.Mark, fresh bool, prev int) {
	p.res, p.ledger = len(st.decided.Reservations), len(st.reservations.made)
	if fresh {
		st.profile.Restore(p.pl, p.start, d, mark)
	} else {
		st.profile.Reserve(p.pl, p.start, d)
	}
	alloc := st.decided.Reservations[prev].Allocation
	st.decided.Reservations[prev].Allocation = nil
	st.recordReservationOf(j, p.pl, p.start, alloc)
}

// roomNow reports whether the GPUs free now have room for the members of
// one of reqs, whatever the reservations and the topology: a necessary
// condition for starting now. O(G) per request.
func (st *stepState) roomNow(reqs []gang.Request) bool {
	for _, r := range reqs {
		if st.ix.Capacity(topology.ClusterLevel, 0, r.Class, r.GPUsPerMember) >= r.Members {
			return true
		}
	}
	return false
}

// promiseRequests returns the requests under which job j, holding kept
// promise p, may move: its own request, or, for a gang that names no GPU
// type but runs on one (see oneType), one request per type with the
// type of its promise first (keep checked that it has one).
func (st *stepState) promiseRequests(j *Job, p *promise) []gang.Request {
	req, _ := st.request(j)
	if !st.oneType(j, req) {
		return []gang.Request{req}
	}
	own := st.ix.NodeClass(p.pl.Slots[0].Node)
	reqs := []gang.Request{req}
	reqs[0].Class = own
	for _, r := range st.typedRequests(j, req) {
		if r.Class != own {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// placeNowAnyOf starts j now under the first of reqs that fits, as its
// turn would (a spread job of a group apart from its group).
func (st *stepState) placeNowAnyOf(j *Job, reqs []gang.Request, d time.Duration) (gang.Placement, bool) {
	for _, r := range reqs {
		var pl gang.Placement
		var out gang.Outcome
		if j.Placement == Spread && j.Group != "" {
			pl, out = st.placeApart(j, r, d)
		} else {
			pl, out = st.placeNow(j, r, d, nil)
		}
		if out == gang.Placed {
			return pl, true
		}
	}
	return gang.Placement{}, false
}

// oneClass reports whether every node of pl has one GPU type.
func oneClass(ix *topology.Index, pl gang.Placement) bool {
	for _, sl := range pl.Slots {
		if ix.NodeClass(sl.Node) != ix.NodeClass(pl.Slots[0].Node) {
			return false
		}
	}
	return true
}

// sameSlots reports whether a and b hold the same GPUs: at once when
// they list the same slots in the same order, as a placement found again
// on the same GPUs mostly does, else by a map of each node's GPUs.
func sameSlots(a, b gang.Placement) bool {
	if len(a.Slots) != len(b.Slots) {
		return false
	}
	if slices.EqualFunc(a.Slots, b.Slots, func(x, y gang.Slot) bool { return x.Node == y.Node && x.GPUs == y.GPUs }) {
		return true
	}
	held := map[topology.NodeID]topology.GPUSet{}
	for _, sl := range a.Slots {
		held[sl.Node] |= sl.GPUs
	}
	for _, sl := range b.Slots {
		if held[sl.Node] != sl.GPUs {
			return false
		}
		delete(held, sl.Node)
	}
	return len(held) == 0
}

// unreserve takes j's kept reservation p, for a run of d, out of the
// profile, the ledger and the decision, and gives back what it counted
// against j's team. The mark is for putting it back (Profile.Restore).
func (st *stepState) unreserve(j *Job, p *promise, d time.Duration) backfill.Mark {
	mark := st.profile.Unreserve(p.pl, p.start, d)
	st.decided.Reservations[p.res].Job = ""
	st.unledger(p.ledger)
	st.retracted++
	p.res = -1
	st.addInUse(j, -1)
	if st.reserved != nil {
		st.reserved[j.Team] -= j.GPUs()
	}
	return mark
}

// brokenPromise is what a waiting job's message adds when its promise
// was not kept: the promised start and why.
func (st *stepState) brokenPromise(slot int32) string {
	if why := st.promiseBroken(slot); why != "" {
		return "; " + why
	}
	return ""
}

// promiseBroken says that the promise of the job in slot no longer holds,
// its start and why, or is "" when it held or there was none.
func (st *stepState) promiseBroken(slot int32) string {
	p := st.promises[slot]
	if p == nil || p.why == "" {
		return ""
	}
	return fmt.Sprintf("its promised start %s no longer holds: %s", st.at(p.start).UTC().Format(time.RFC3339), p.why)
}

// explainMoves gives each reservation of d whose job's promise was
// broken and which starts later than it the message that says why.
// O(R log P) for R reservations and P pending jobs.
func (st *stepState) explainMoves(d *Decision) {
	if len(st.promises) == 0 {
		return
	}
	for i := range d.Reservations {
		r := &d.Reservations[i]
		k, found := slices.BinarySearchFunc(st.pending, r.Job, func(j *Job, id string) int { return strings.Compare(j.ID, id) })
		if !found {
			continue
		}
		if p := st.promises[int32(k)]; p != nil && p.why != "" && r.Start.After(st.at(p.start)) {
			r.Message = st.promiseBroken(int32(k))
		}
	}
}
