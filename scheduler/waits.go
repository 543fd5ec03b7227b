package scheduler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// status is what one stage of a job's turn decided, in the manner of the
// Kubernetes scheduler framework's Status: code drives the pipeline, and
// for a job that waits, reason names the check that decided it and
// message says why, in the words the decision reports. The stage that
// decides builds the whole status; schedule records it, once, with
// recordWait. The zero status is undecided: the next stage goes on.
//
// Where each reason is decided:
//
//	reason               code     decided by
//	gpu-type             refused  knownType
//	unsatisfiable        refused  satisfiable
//	insufficient-gpus    refused  satisfiable (it waits for nodes down or draining)
//	quota                refused  admitted (Config.Admit)
//	behind-reservation   waiting  behindReservations
//	no-eligible-node     refused  eligibleSatisfiable (eligible.go: its nodes never hold it)
//	insufficient-gpus    waiting  noRoom
//	topology             waiting  noRoom
//	no-eligible-node     waiting  noRoom (the free GPUs hold it, its eligible nodes do not)
//	awaiting-preemption  waiting  claim (preemption.go)
//	awaiting-preemption  waiting  budgetWait (budget.go: the budget is spent)
//	priority             waiting  schedule (backfill off)
type status struct {
	code    code
	reason  Reason
	message string
	start   time.Time // the estimated start of a waiting job, where known
}

// code is how a job's turn ends.
type code uint8

const (
	undecided code = iota // no stage decided yet
	started               // placed now
	reserved              // holds a reservation: waits for GPUs, blocks strict order
	waiting               // waits for GPUs without a reservation: blocks strict order
	refused               // cannot run now for reasons of its own: blocks nobody
)

func (s status) decided() bool { return s.code != undecided }

// blocks reports whether the job waits for GPUs, reserved or not: with
// backfill off, every job after it waits too.
func (s status) blocks() bool { return s.code == reserved || s.code == waiting }

// waitFor is the status of a job that waits for GPUs.
func waitFor(why Reason, message string) status {
	return status{code: waiting, reason: why, message: message}
}

// refuse is the status of a job that a check of its own turns away.
func refuse(why Reason, message string) status {
	return status{code: refused, reason: why, message: message}
}

// recordWait records, for the job in slot whose turn ended in s, why it
// waits; it records nothing for a job that started or holds a
// reservation (those are recorded where they are made).
func (st *stepState) recordWait(slot int32, s status) {
	if s.code == waiting || s.code == refused {
		if st.promises != nil {
			s.message += st.brokenPromise(slot)
		}
		st.waits[slot] = Wait{Job: st.pending[slot].ID, Reason: s.reason, Message: s.message, Start: s.start}
	}
}

// Checks of a job alone: each returns refused, or undecided to pass.

// knownType refuses j when no node has its GPU type.
func knownType(j *Job, ok bool) status {
	if !ok {
		return refuse(ReasonGPUType, fmt.Sprintf("no node has GPU type %q", j.GPUType))
	}
	return status{}
}

// satisfiable refuses j when it cannot fit this cluster's ready nodes
// even with every job gone: unsatisfiable when it could not even with
// every node up (no node large enough for a member, or more members than
// the whole cluster, or the largest domain of its required level, holds
// on healthy GPUs of its type; for a gang that names no type, of one
// type), and insufficient-gpus, with a message that says it waits for
// nodes that are down or draining, when only those nodes are missing.
// The largest gangs of a shape are computed once per shape.
func (st *stepState) satisfiable(j *Job, req gang.Request) status {
	if st.ix.NumNodes() == 0 {
		return refuse(ReasonUnsatisfiable, "the cluster has no nodes")
	}
	if j.GPUsPerMember > st.ix.MaxGPUs() {
		return refuse(ReasonUnsatisfiable, fmt.Sprintf("needs %d GPUs on one node; the largest node has %d", j.GPUsPerMember, st.ix.MaxGPUs()))
	}
	ready, all := st.largestOf(req, true), st.largestOf(req, false)
	typ := typeWord(j.GPUType)
	if st.oneType(j, req) {
		f := st.typesThatHold(j, req)
		ready, all = f.ready, f.all
		typ = " same-type"
	}
	if j.Members <= ready {
		return status{}
	}
	shape := fmt.Sprintf("%d×%d%s GPUs", j.Members, j.GPUsPerMember, typ)
	if j.Members <= all {
		if req.Required != gang.NoLevel {
			return refuse(ReasonInsufficientGPUs, fmt.Sprintf("needs %s in one %s; no %s holds more than %s on ready nodes (%d with every node up): it waits for nodes that are down or draining",
				shape, j.Topology.Required, j.Topology.Required, counted(ready, "such member"), all))
		}
		return refuse(ReasonInsufficientGPUs, fmt.Sprintf("needs %s; the ready nodes hold at most %s (%d with every node up): it waits for nodes that are down or draining",
			shape, counted(ready, "such member"), all))
	}
	if req.Required != gang.NoLevel {
		return refuse(ReasonUnsatisfiable, fmt.Sprintf("needs %s in one %s; no %s of this cluster holds more than %s",
			shape, j.Topology.Required, j.Topology.Required, counted(all, "such member")))
	}
	return refuse(ReasonUnsatisfiable, fmt.Sprintf("needs %s; this cluster holds at most %s", shape, counted(all, "such member")))
}

// largestGang is the largest gang of req's member size, class and
// required level that fits the cluster with every job gone, on healthy
// GPUs: of ready nodes when ready, else of every node. One pass over the
// nodes, of which the cluster must have at least one.
func (st *stepState) largestGang(req gang.Request, ready bool) int {
	g := req.GPUsPerMember
	counts := func(id topology.NodeID) bool {
		return (!ready || st.ix.State(id) == topology.Ready) && st.ix.InClass(id, req.Class)
	}
	// A node's members with every job gone: its healthy GPUs, CPU and
	// memory capacity.
	room := func(id topology.NodeID) int {
		k := st.ix.Healthy(id).Len() / g
		if req.CPUMillis > 0 && st.ix.CPUCapacity(id) != topology.Unlimited {
			k = min(k, int(st.ix.CPUCapacity(id)/req.CPUMillis))
		}
		if req.MemoryMiB > 0 && st.ix.MemoryCapacity(id) != topology.Unlimited {
			k = min(k, int(st.ix.MemoryCapacity(id)/req.MemoryMiB))
		}
		return k
	}
	if req.Required == gang.NoLevel {
		total := 0
		for n := range st.ix.NumNodes() {
			if id := topology.NodeID(n); counts(id) {
				total += room(id)
			}
		}
		return total
	}
	per := make([]int, st.ix.NumDomains(req.Required))
	for n := range st.ix.NumNodes() {
		if id := topology.NodeID(n); counts(id) {
			per[st.ix.DomainOf(req.Required, id)] += room(id)
		}
	}
	return slices.Max(per) // every node is in a domain of each level
}

// admitted refuses j when the admission policy (Config.Admit, by default
// the teams' quotas) does not let its team start it now.
func (st *stepState) admitted(j *Job) status {
	var a Admitter = QuotaAdmitter{quotas: st.quotas}
	if st.cfg.Admit != nil {
		a = st.cfg.Admit
	}
	u := Usage{TeamGPUs: st.inUse[j.Team], IdleGPUs: st.ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType) + st.freeing}
	if r, ok := st.inUseRes[j.Team]; ok {
		u.TeamCPUMillis, u.TeamMemoryMiB = r[0], r[1]
	}
	if ok, why := a.Admit(st.snap, j, u); !ok {
		if why == "" {
			why = "not admitted by the admission policy"
		}
		return refuse(ReasonQuota, why)
	}
	return status{}
}

// Why a job waits for GPUs.

// whyWaits is the last stage of a job that neither starts nor holds a
// reservation: it says why j waits. Either j fits the free GPUs now but
// would delay a reservation (behind-reservation), or it does not fit them
// even ignoring the reservations (insufficient-gpus, or topology when
// the GPUs are free but no domain of its required level holds it). When
// j may have a reservation but the profile has no start for it within
// the planning horizon (noHorizonStart), the message of the second kind
// says so.
func (st *stepState) whyWaits(j *Job, req gang.Request, d time.Duration, key shapeKey, noHorizonStart bool) status {
	key.shadows, key.reservations = 0, 0
	out := st.fitIgnoringReservations(j, req, key)
	if out == gang.Placed {
		return st.behindReservations(j, req, d)
	}
	st.memo.noteFailsIgnoringReservations(key, j.Members)
	return st.noRoom(j, req, out, noHorizonStart)
}

// fitIgnoringReservations is whether j would fit the free GPUs now were
// no GPU reserved: gang.Placed, gang.NoDomain when enough GPUs are free
// but no domain of its required level holds it, else gang.NoCapacity.
// It places nothing.
func (st *stepState) fitIgnoringReservations(j *Job, req gang.Request, key shapeKey) gang.Outcome {
	if e := st.eligibleOf(j); e != nil && req.Avoid != nil {
		// Counted on the eligible nodes: exact, and O(their number).
		best, total := st.eligibleRoom(e, req, st.freeRoom, true)
		switch {
		case best >= j.Members:
			return gang.Placed
		case req.Required != gang.NoLevel && total >= j.Members:
			return gang.NoDomain
		}
		return gang.NoCapacity
	}
	clusterHolds := func() bool {
		return st.ix.CapacityFor(topology.ClusterLevel, 0, req.Class, req.GPUsPerMember, req.CPUMillis, req.MemoryMiB) >= j.Members
	}
	switch {
	case st.memo.failsIgnoringReservations(key, j.Members):
		if req.Required != gang.NoLevel && clusterHolds() {
			return gang.NoDomain
		}
		return gang.NoCapacity
	case req.Required == gang.NoLevel && req.Preferred == gang.NoLevel:
		// Without topology a gang fits exactly when the members fit.
		if clusterHolds() {
			return gang.Placed
		}
		return gang.NoCapacity
	}
	pl, out := gang.Place(st.ix, req, st.scorer(j))
	if out == gang.Placed {
		pl.Release(st.ix)
	}
	return out
}

// behindReservations is the status of j, which fits now but would delay
// the reservations that start within its run d; the message names them.
// The end of that run is a relative instant (for nextWake): which
// reservations it reaches changes as now moves. For Explain's target,
// the turn keeps them too.
func (st *stepState) behindReservations(j *Job, req gang.Request, d time.Duration) status {
	st.wake.from(d)
	s := waitFor(ReasonBehindReservation, st.delayed(req.Class, req.GPUsPerMember, d))
	if j.ID == st.target {
		var all []*madeReservation
		st.delays(req.Class, req.GPUsPerMember, d, func(rs *madeReservation) { all = append(all, rs) })
		slices.SortFunc(all, soonerReservation)
		for _, rs := range all {
			st.turn.delays = append(st.turn.delays, fmt.Sprintf("%s at %s", rs.job, formatTime(st.at(rs.start), time.RFC3339Nano)))
		}
	}
	return s
}

// soonerReservation orders reservations by start, then job: the order in
// which a waiting job's message names them, which does not depend on the
// order the Step made them in.
func soonerReservation(a, b *madeReservation) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return strings.Compare(a.job, b.job)
}

// noRoom is the status of j, which does not fit the free GPUs now (out
// says how), with the horizon's note when noHorizonStart.
func (st *stepState) noRoom(j *Job, req gang.Request, out gang.Outcome, noHorizonStart bool) status {
	if st.eligibleOf(j) != nil {
		// Would it fit the free GPUs without its list? Then its list is why.
		all := req
		all.Avoid = nil
		key := shapeKey{class: req.Class, gpusPerMember: req.GPUsPerMember, cpu: req.CPUMillis, mem: req.MemoryMiB, required: req.Required, preferred: req.Preferred,
			mode: int32(j.Placement), spread: req.SpreadLevel}
		if s := st.noEligibleRoom(j, req, st.fitIgnoringReservations(j, all, key)); s.decided() {
			return s
		}
	}
	if s := st.noResources(j, req, out); s.decided() {
		if noHorizonStart {
			s.message += st.horizonNote()
		}
		return s
	}
	free := st.ix.FreeGPUs(topology.ClusterLevel, 0, req.Class)
	why := ReasonInsufficientGPUs
	if out == gang.NoDomain {
		why = ReasonTopology
	}
	room := -1 // enough GPUs are free, but on too few nodes with room for a member
	if why == ReasonInsufficientGPUs && free >= j.GPUs() {
		room = st.ix.Capacity(topology.ClusterLevel, 0, req.Class, j.GPUsPerMember)
	}
	key := messageKey{why: why, members: j.Members, gpusPerMember: j.GPUsPerMember, free: free, room: room, gpuType: j.GPUType, required: j.Topology.Required}
	msg := st.memo.noRoomMessage(key, func() string {
		typ := typeWord(j.GPUType)
		switch {
		case why == ReasonTopology:
			return fmt.Sprintf("needs %d×%d%s GPUs in one %s; %d free in the cluster but no %s has room", j.Members, j.GPUsPerMember, typ, j.Topology.Required, free, j.Topology.Required)
		case room >= 0:
			return fmt.Sprintf("needs %d×%d%s GPUs, %d free but split across nodes: room for %s", j.Members, j.GPUsPerMember, typ, free, counted(room, "member"))
		}
		return fmt.Sprintf("needs %d×%d%s GPUs, %d free", j.Members, j.GPUsPerMember, typ, free)
	})
	if noHorizonStart {
		msg += st.horizonNote()
	}
	return waitFor(why, msg)
}

// horizonNote ends the message of a job for which no start was found
// within the planning horizon: Config.Horizon, or the end of year 9999
// when that comes first (see lastStartFor).
func (st *stepState) horizonNote() string {
	if st.cfg.Horizon > 0 && st.cfg.Horizon == st.horizon {
		return fmt.Sprintf("; no start within the %s planning horizon", formatDuration(st.cfg.Horizon))
	}
	return "; no start before the end of year 9999"
}

// delayed is the message of a job of class c and g GPUs per member that
// fits now but would delay reservations that start within d (see
// delays), which it names. With the same reservations of the class made
// so far, the same ones start within d when as many do, and with as many
// jobs placed, the same GPUs are free; so the text is formatted once per
// (class, member size, count, reservations, placements).
func (st *stepState) delayed(c topology.Class, g int, d time.Duration) string {
	key := delayKey{class: c, gpusPerMember: int32(g), shadows: st.shadowsWithin(d), all: len(st.reservations.made), started: len(st.decided.Placements)}
	if c != topology.AnyType {
		key.shadows, key.all = 0, 0
		if cr := st.reservations.byClass[c]; cr != nil {
			key.shadows, _ = slices.BinarySearch(cr.starts, d)
			key.all = len(cr.starts)
		}
	}
	return st.memo.delayMessage(key, func() string {
		return "fits now but would delay the reservation of " + st.formatDelayed(c, g, d)
	})
}

// formatDelayed names the three soonest reservations (by start, then
// job) that a job of class c and g GPUs per member could delay within d,
// and counts the others. O(R) for the R reservations that may delay.
func (st *stepState) formatDelayed(c topology.Class, g int, d time.Duration) string {
	var first [3]*madeReservation
	count := 0
	st.delays(c, g, d, func(rs *madeReservation) {
		count++
		// Insert rs among the soonest three, dropping the fourth.
		for i := range first {
			if first[i] == nil || soonerReservation(rs, first[i]) < 0 {
				copy(first[i+1:], first[i:len(first)-1])
				first[i] = rs
				break
			}
		}
	})
	if count == 0 {
		return "an earlier job"
	}
	var names []string
	for _, rs := range first {
		if rs != nil {
			names = append(names, fmt.Sprintf("%q at %s", rs.job, formatTime(st.at(rs.start), time.RFC3339Nano)))
		}
	}
	if more := count - len(names); more > 0 {
		names = append(names, fmt.Sprintf("%d more", more))
	}
	return strings.Join(names, ", ")
}

// typeWord is a GPU type as a word to put before "GPUs" in a message:
// " H100", or nothing for a job that names no type.
func typeWord(t string) string {
	if t == "" {
		return ""
	}
	return " " + t
}

// counted is "1 " + noun, or n and the noun's plural (noun + "s").
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// noResources is the status of j, which does not fit now (out says how),
// when its GPUs would fit were its CPU and memory not asked:
// insufficient-cpu when CPU alone stops it, else insufficient-memory.
// Undecided when j asks for neither or its GPUs do not fit either.
func (st *stepState) noResources(j *Job, req gang.Request, out gang.Outcome) status {
	if (req.CPUMillis == 0 && req.MemoryMiB == 0) || !st.ix.Limited() || out == gang.Placed {
		return status{}
	}
	key := func(r gang.Request) shapeKey {
		return shapeKey{class: r.Class, gpusPerMember: r.GPUsPerMember, cpu: r.CPUMillis, mem: r.MemoryMiB, required: r.Required,
			preferred: r.Preferred, mode: int32(j.Placement), spread: r.SpreadLevel, eligible: st.eligibleID(j)}
	}
	// Its answer depends on the job's shape and the state of the Step
	// (placements and reservations change what is free and pinned).
	return st.memo.resourceWait(resourceKey{key(req), j.Members}, st.changes()+st.retracted, func() status {
		return st.noResourcesNow(j, req, key)
	})
}

// noResourcesNow is noResources, unremembered.
func (st *stepState) noResourcesNow(j *Job, req gang.Request, key func(gang.Request) shapeKey) status {
	gpus := req
	gpus.CPUMillis, gpus.MemoryMiB = 0, 0
	if st.fitIgnoringReservations(j, gpus, key(gpus)) != gang.Placed {
		return status{}
	}
	cpu := req
	cpu.MemoryMiB = 0
	why, what, per := ReasonInsufficientMemory, "memory", formatMiB(req.MemoryMiB)
	room := st.ix.CapacityFor(topology.ClusterLevel, 0, req.Class, req.GPUsPerMember, 0, req.MemoryMiB)
	if req.CPUMillis > 0 && st.fitIgnoringReservations(j, cpu, key(cpu)) != gang.Placed {
		why, what, per = ReasonInsufficientCPU, "CPU", formatMillis(req.CPUMillis)
		room = st.ix.CapacityFor(topology.ClusterLevel, 0, req.Class, req.GPUsPerMember, req.CPUMillis, 0)
	}
	where := ""
	if j.Topology.Required != "" {
		where = " in one " + j.Topology.Required
	}
	return waitFor(why, fmt.Sprintf("needs %d×%d%s GPUs%s and %s per member; the free GPUs would hold it, but their nodes have %s for %s",
		j.Members, j.GPUsPerMember, typeWord(j.GPUType), where, per, what, counted(room, "member")))
}

// formatMiB formats MiB as GiB when whole ("64 GiB", "100 MiB").
func formatMiB(m int64) string {
	if m%1024 == 0 {
		return fmt.Sprintf("%d GiB", m/1024)
	}
	return fmt.Sprintf("%d MiB", m)
}

// formatMillis formats millicores as CPUs ("2 CPUs", "0.5 CPUs").
func formatMillis(m int64) string {
	if m%1000 == 0 {
		return fmt.Sprintf("%d CPUs", m/1000)
	}
	return fmt.Sprintf("%g CPUs", float64(m)/1000)
}
