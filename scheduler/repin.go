package scheduler

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// This file re-pins reservations under conservative backfill. Every
// reservation holds particular GPUs, while conservative backfill in its
// textbook form (Mu'alem and Feitelson) counts processors: when a job
// could start at t on GPUs that later reservations hold, the count lets
// it, and those reservations implicitly take other GPUs free at their
// own starts. repinAt does that explicitly: it takes the reservations
// that hold the GPUs the job lacks out, gives the job its start, and
// puts each of them back at exactly its own start on GPUs its request
// allows, or changes nothing. No promised start moves: a displaced
// reservation keeps its start and only changes GPUs. Only jobs the count
// describes (countExact: any GPUs of their type will do) start or are
// reserved this way, and only their reservations move; the count's start
// is tried, under conservative backfill, when the GPUs found give a
// later one (repinStart), and in a job's turn a few later starts the
// count allows when reservations that may not move are in the way at the
// first (laterRepinStart).

// maxDisplaced bounds the reservations one repin moves.
const maxDisplaced = 32

// maxRepinFailures bounds the repins a Step tries that fail: past it, it
// tries none. A repin that fails costs a scan of the nodes of the job's
// class; where moving reservations does not help (gangs the count does
// not describe hold the GPUs), most fail, and this bounds what they cost
// a Step. Where they help, they rarely fail.
const maxRepinFailures = 16

// displacedReservation is a reservation that repinAt moves to other GPUs.
type displacedReservation struct {
	k        int32 // its index in the ledger
	j        *Job
	req      gang.Request
	start, d time.Duration
	old, pl  gang.Placement // its GPUs before and after
}

// repinStart is the start that j (request req, run d), which holds no
// reservation, may get by repinAt under conservative backfill, when
// its best start found without moving other reservations is not as
// early as the count of free GPUs allows: better is that start (found:
// there is one). It returns the count's start (see
// backfill.Profile.FreeBound), or false when there is nothing to try:
// not conservative backfill, a request the count does not describe (see
// countExact), a count no earlier than better, or past by.
func (st *stepState) repinStart(j *Job, req gang.Request, d, better, by time.Duration, found bool) (time.Duration, bool) {
	if st.cfg.Backfill != Conservative || len(st.reservations.made) == st.retracted || st.repinFailures >= maxRepinFailures ||
		!st.countExact(j, req) {
		return 0, false
	}
	c := st.profile.FreeBound(req, d, 0)
	if c > by || c == backfill.Forever || found && c >= better {
		return 0, false
	}
	return c, true
}

// repinAt tries to give job j, which holds no reservation, a run of d
// under req from t (0: now) on GPUs that other reservations hold during
// that run: it takes those reservations out, finds j a placement at t,
// and puts each of them back at exactly its own start, in start order,
// on GPUs its request allows. One that finds no GPUs at its start has
// the reservations in its way moved in turn, the same way; at most
// maxDisplaced reservations move in all. When j finds no placement or a
// moved reservation cannot be put back at its start, every change is
// undone and it reports false. On success, j holds its placement in the
// profile (taken now when t is 0, else reserved from t) and the caller
// records it; the moved reservations are recorded anew (ledger, decision,
// and the promise a kept one came from), at their own starts.
// Preemptors' claims and reservations on GPUs being evicted are never
// moved. Cost: O(nodes of the class or eligible list × e) per search for
// the reservations in the way (one, plus one per reservation that finds
// no GPUs), and at most 2·maxDisplaced+1 earliest-start queries, each
// bounded to one instant.
func (st *stepState) repinAt(j *Job, req gang.Request, d, t time.Duration) (gang.Placement, bool) {
	moving := map[int32]bool{}
	ds := st.blockers(j, req, d, t, maxDisplaced, moving, nil)
	if len(ds) == 0 {
		st.repinFailures++
		return gang.Placement{}, false
	}
	st.takeOut(ds, moving)
	s, ok := st.earliestBy(j, req, d, t, t)
	if ok && t == 0 && !st.profile.Usable(s.Placement, 0, d) {
		ok = false // it would take GPUs released now but still held
	}
	var placed []heldRun // what the profile holds that the ledger does not yet
	if ok {
		st.profile.Reserve(s.Placement, t, d)
		placed = append(placed, heldRun{s.Placement, t, d})
		for i := 0; ok && i < len(ds); i++ {
			b := &ds[i]
			nb, found := st.earliestBy(b.j, b.req, b.d, b.start, b.start)
			if !found {
				// Move the reservations in its way too, then try again.
				more := st.blockers(b.j, b.req, b.d, b.start, maxDisplaced-len(ds), moving, placed)
				st.takeOut(more, moving)
				ds = append(ds, more...)
				b = &ds[i]
				nb, found = st.earliestBy(b.j, b.req, b.d, b.start, b.start)
				if len(more) == 0 || !found {
					ok = false
					break
				}
				rest := ds[i+1:]
				slices.SortStableFunc(rest, func(x, y displacedReservation) int { return cmp.Compare(x.start, y.start) })
			}
			b.pl = nb.Placement
			st.profile.Reserve(b.pl, b.start, b.d)
			placed = append(placed, heldRun{b.pl, b.start, b.d})
		}
	}
	if !ok {
		for i := len(placed) - 1; i >= 0; i-- {
			st.profile.Unreserve(placed[i].pl, placed[i].start, placed[i].d)
		}
		for i := range ds {
			st.profile.Reserve(ds[i].old, ds[i].start, ds[i].d)
		}
		st.repinFailures++
		return gang.Placement{}, false
	}
	if t == 0 {
		st.profile.Unreserve(s.Placement, 0, d)
		st.profile.Take(s.Placement, d)
	}
	for i := range ds {
		st.moveReservation(&ds[i])
	}
	if st.memo != nil {
		// A victim search that found none may find some on the GPUs
		// that a reservation left.
		clear(st.memo.failedSearches)
	}
	return s.Placement, true
}

// heldRun is a run that the profile holds reserved.
type heldRun struct {
	pl       gang.Placement
	start, d time.Duration
}

// takeOut takes the reservations ds out of the profile and notes them
// in moving.
func (st *stepState) takeOut(ds []displacedReservation, moving map[int32]bool) {
	for i := range ds {
		st.profile.Unreserve(ds[i].old, ds[i].start, ds[i].d)
		moving[ds[i].k] = true
	}
}

// blockers returns the reservations to move for j (request req, run d)
// to start at t, in start order, or none. A GPU of j's class (and
// eligible nodes) free by t that reservations hold during [t, t+d) is
// freed by moving every one of them; GPUs held by the same reservations
// are grouped, and groups are taken greedily, fewest reservations added
// first (then most GPUs freed), until as many GPUs are freed as j lacks,
// counted, with at most budget reservations moved. None when that is
// more, when a GPU's holders include one that may not move (see
// movable), or when the GPUs free by t would not hold j even with every
// reservation moved.
func (st *stepState) blockers(j *Job, req gang.Request, d, t time.Duration, budget int, moving map[int32]bool, placed []heldRun) []displacedReservation {
	if budget <= 0 {
		return nil
	}
	st.indexByNode()
	b := &blockerScan{st: st, req: req, t: t, d: d, end: addDur(t, max(d, 1)), budget: budget, moving: moving, placed: placed,
		groups: map[string]*blockGroup{}, mov: map[int32]bool{}}
	// The nodes are visited until the GPUs found that moves could free
	// are as many as j needs (it lacks no more).
	if e := st.eligibleOf(j); e != nil {
		for _, n := range e.nodes {
			if b.visit(n); b.freeable >= req.GPUs() {
				break
			}
		}
	} else {
		for n := range st.ix.NumNodes() {
			if b.visit(topology.NodeID(n)); b.freeable >= req.GPUs() {
				break
			}
		}
	}
	short := req.GPUs() - b.usable
	if short <= 0 || b.usable+b.freeable < req.GPUs() {
		return nil
	}
	chosen, ok := chooseGroups(b.order, short, budget)
	if !ok {
		return nil
	}
	return st.displacedOf(chosen)
}

// indexByNode lists the ledger's reservations by node, on first use
// (see reservations.byNode).
func (st *stepState) indexByNode() {
	l := &st.reservations
	if l.byNode != nil {
		return
	}
	l.byNode = make([][]int32, st.ix.NumNodes())
	for k := range l.made {
		if l.made[k].job != "" {
			st.addByNode(int32(k))
		}
	}
}

// blockGroup is the GPUs that the same reservations hold: moving all of
// ks frees gpus of them.
type blockGroup struct {
	ks   []int32 // ledger indices, ascending
	gpus int
}

// blockerScan gathers, node by node, the GPUs usable for a run of d from
// t and those that moving reservations could free for it (see blockers).
type blockerScan struct {
	st        *stepState
	req       gang.Request
	t, d, end time.Duration
	budget    int
	moving    map[int32]bool // reservations this repin moves already
	placed    []heldRun      // runs it reserved already: never moved
	usable    int            // GPUs usable as they are
	freeable  int            // GPUs whose holders may all move
	groups    map[string]*blockGroup
	order     []*blockGroup // the groups, in the order met
	holders   [topology.MaxGPUsPerNode][]int32
	key       []byte
	mov       map[int32]bool // movable, remembered
}

// movable is st.movable for ledger entry k, remembered.
func (b *blockerScan) movable(k int32) bool {
	m, ok := b.mov[k]
	if !ok {
		m = b.st.movable(&b.st.reservations.made[k])
		b.mov[k] = m
	}
	return m
}

// visit counts node n's GPUs: usable ones, and those free by t that
// reservations hold during the run, grouped by their holders.
func (b *blockerScan) visit(n topology.NodeID) {
	st := b.st
	if !st.ix.InClass(n, b.req.Class) {
		return
	}
	free := st.profile.FreeBy(n, b.t)
	if free == 0 {
		return
	}
	u := st.profile.UsableOn(n, b.t, b.d)
	b.usable += u.Len()
	held := free &^ u
	if held == 0 {
		return
	}
	b.collectHolders(n, held)
	for g := range held.All() {
		hs := b.holders[g]
		if len(hs) == 0 || len(hs) > b.budget || slices.ContainsFunc(hs, func(k int32) bool { return k < 0 || !b.movable(k) }) {
			continue
		}
		slices.Sort(hs)
		hs = slices.Compact(hs)
		b.key = b.key[:0]
		for _, k := range hs {
			b.key = binary.LittleEndian.AppendUint32(b.key, uint32(k))
		}
		gr := b.groups[string(b.key)]
		if gr == nil {
			gr = &blockGroup{ks: slices.Clone(hs)}
			b.groups[string(b.key)] = gr
			b.order = append(b.order, gr)
		}
		gr.gpus++
		b.freeable++
	}
}

// collectHolders sets holders[g], for each GPU g of held on node n, to
// the reservations that hold it during the run: ledger indices, or -1
// for one that may not move (it holds the GPU from before t, or this
// repin reserved it). It drops taken-out entries from the node's list.
// A GPU with a holder that may not move, or with more holders than the
// budget, frees nothing (visit passes it over) whatever else holds it:
// once every GPU of held is such, the walk stops (its holders lists are
// then cut short), which bounds the walk for a long run that every
// reservation after t holds.
func (b *blockerScan) collectHolders(n topology.NodeID, held topology.GPUSet) {
	st, l := b.st, &b.st.reservations
	for g := range held.All() {
		b.holders[g] = b.holders[g][:0]
	}
	live := held // GPUs that may yet be freed
	// The list is in start order: those from end on do not overlap.
	list := l.byNode[n]
	ks, i := list[:0], 0
	for ; i < len(list) && live != 0; i++ {
		k := list[i]
		rs := &l.made[k]
		if st.walked != nil {
			*st.walked++
		}
		if rs.job == "" {
			continue // taken out: drop it from the list
		}
		if rs.start >= b.end {
			break
		}
		ks = append(ks, k)
		if b.moving[k] || addDur(rs.start, max(st.hold(rs.of), 1)) <= b.t {
			continue
		}
		h := k
		if rs.start < b.t {
			h = -1 // it holds them from before t: not to be moved
		}
		got := b.addHolder(n, rs.slots, held, h)
		if h < 0 {
			live &^= got
			continue
		}
		for g := range (got & live).All() {
			if len(b.holders[g]) > b.budget {
				live &^= topology.SetOf(g)
			}
		}
	}
	l.byNode[n] = append(ks, list[i:]...)
	for _, r := range b.placed {
		if r.start < b.end && addDur(r.start, max(r.d, 1)) > b.t {
			b.addHolder(n, r.pl.Slots, held, -1) // not to be moved
		}
	}
}

// addHolder adds h to the holders of the GPUs of held that slots hold on
// node n, and returns those GPUs.
func (b *blockerScan) addHolder(n topology.NodeID, slots []gang.Slot, held topology.GPUSet, h int32) topology.GPUSet {
	var got topology.GPUSet
	for _, sl := range slots {
		if sl.Node == n {
			got |= sl.GPUs & held
		}
	}
	for g := range got.All() {
		b.holders[g] = append(b.holders[g], h)
	}
	return got
}

// chooseGroups takes groups greedily, fewest reservations added first
// (then most GPUs freed), until short GPUs are freed: every group whose
// holders are all chosen is freed with them. It returns the reservations
// chosen, or false when that takes more than budget of them.
func chooseGroups(groups []*blockGroup, short, budget int) (map[int32]bool, bool) {
	cands := slices.Clone(groups)
	chosen := map[int32]bool{}
	added := func(gr *blockGroup) int {
		c := 0
		for _, k := range gr.ks {
			if !chosen[k] {
				c++
			}
		}
		return c
	}
	for short > 0 {
		best, bestAdd := -1, 0
		for i, gr := range cands {
			if gr == nil {
				continue
			}
			a := added(gr)
			if best < 0 || a < bestAdd || a == bestAdd && gr.gpus > cands[best].gpus {
				best, bestAdd = i, a
			}
		}
		if best < 0 || len(chosen)+bestAdd > budget {
			return nil, false
		}
		for _, k := range cands[best].ks {
			chosen[k] = true
		}
		for i, gr := range cands {
			if gr != nil && added(gr) == 0 {
				short -= gr.gpus
				cands[i] = nil
			}
		}
	}
	return chosen, true
}

// displacedOf is the reservations of the ledger entries chosen, with
// the requests they move under, in start order (then ledger order).
func (st *stepState) displacedOf(chosen map[int32]bool) []displacedReservation {
	ds := make([]displacedReservation, 0, len(chosen))
	for k := range chosen {
		rs := &st.reservations.made[k]
		r, _ := st.request(rs.of)
		if st.oneType(rs.of, r) {
			r.Class = st.ix.NodeClass(rs.slots[0].Node)
		}
		ds = append(ds, displacedReservation{k: k, j: rs.of, req: r, start: rs.start, d: st.hold(rs.of),
			old: gang.Placement{Slots: rs.slots, Level: topology.ClusterLevel}})
	}
	slices.SortFunc(ds, func(a, b displacedReservation) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.k, b.k))
	})
	return ds
}

// countExact reports whether any GPUs of req's class free for a run
// will do for j (request req), so that counting free GPUs over time finds
// its earliest start as a textbook count of processors does: one GPU per
// member, no required topology level, no list of eligible nodes, no CPU
// or memory to fit, members not spread over nodes. Only such jobs start
// or are reserved by moving others, and only such reservations move: a
// Step in a world where every job runs exactly its limit then finds no
// earlier start than the one before it did (the forecast stays exact).
func (st *stepState) countExact(j *Job, req gang.Request) bool {
	return req.GPUsPerMember == 1 && req.Required == gang.NoLevel && req.Avoid == nil && j.Placement != Spread &&
		(req.CPUMillis == 0 && req.MemoryMiB == 0 || !st.ix.Limited())
}

// movable reports whether repinAt may move rs: a reservation whose job
// counting describes (countExact), not a preemptor's claim made in this
// Step (on the GPUs of its victims, or of jobs being evicted), and on no
// GPU of a job being evicted.
func (st *stepState) movable(rs *madeReservation) bool {
	if rs.claim {
		return false
	}
	if r, _ := st.request(rs.of); !st.countExact(rs.of, r) {
		return false
	}
	for _, sl := range rs.slots {
		if sl.GPUs&st.evicting[sl.Node] != 0 {
			return false
		}
	}
	return true
}

// moveReservation records that displaced reservation b, which the
// profile now holds on b.pl, moved there from the ledger's entry b.k:
// the old entry and its decision entry are taken out and new ones made
// at the same start, and the promise it kept, if any, follows it. What
// counts against the team is unchanged.
func (st *stepState) moveReservation(b *displacedReservation) {
	st.repinMoves++
	rs := &st.reservations.made[b.k]
	st.decided.Reservations[rs.res].Job = ""
	st.unledger(int(b.k))
	st.retracted++
	st.addInUse(b.j, -1)
	if st.reserved != nil {
		st.reserved[b.j.Team] -= b.j.GPUs()
	}
	res, ledger := len(st.decided.Reservations), len(st.reservations.made)
	st.recordReservation(b.j, b.pl, b.start)
	if slot, ok := slices.BinarySearchFunc(st.pending, b.j.ID, func(p *Job, id string) int { return strings.Compare(p.ID, id) }); ok {
		if p := st.promises[int32(slot)]; p != nil && p.kept && p.ledger == int(b.k) {
			p.pl, p.res, p.ledger = b.pl, res, ledger
		}
	}
}

// addByNode lists reservation made[k] under each of its nodes, in start
// order (see reservations.byNode). O(reservations of the node) each.
func (st *stepState) addByNode(k int32) {
	l := &st.reservations
	start := l.made[k].start
	for _, sl := range l.made[k].slots {
		list := l.byNode[sl.Node]
		i, _ := slices.BinarySearchFunc(list, start, func(x int32, s time.Duration) int {
			return cmp.Or(cmp.Compare(l.made[x].start, s), -1) // after those of the same start
		})
		if i > 0 && list[i-1] == k {
			continue // a second slot on the node
		}
		l.byNode[sl.Node] = slices.Insert(list, i, k)
	}
}
