package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

type msgKey struct {
	why              Reason
	m, g, free, room int
	typ, required    string
}

// delayKey identifies the behind-reservation messages that are alike:
// the job's class and GPUs per member (a job can delay only the
// reservations that hold free GPUs on a node with room for a member: see
// delays), (for that class) how many reservations start within its run
// out of how many were made, and how many jobs were placed (which leaves
// the same GPUs free).
type delayKey struct {
	class               topology.Class
	g                   int32 // not int: the key has no padding (see shapeKey)
	blocks, all, placed int
}

// overQuota says why j's team may not start it now, or "".
func (st *stepState) overQuota(j *Job) string {
	var a Admitter = QuotaAdmitter{quotas: st.quotas}
	if st.cfg.Admit != nil {
		a = st.cfg.Admit
	}
	u := Usage{TeamGPUs: st.inUse[j.Team], IdleGPUs: st.ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType) + st.freeing}
	if ok, why := a.Admit(st.snap, j, u); !ok {
		if why == "" {
			why = "not admitted by the admission policy"
		}
		return why
	}
	return ""
}

// explain records why j, which does not fit now honouring reservations,
// waits.
func (st *stepState) explain(j *Job, req gang.Request, d time.Duration, key shapeKey) {
	key.blocks, key.resv = 0, 0
	out := gang.NoCapacity
	if m, known := st.noFitAtAll[key]; known && j.Members >= m {
		out = gang.NoCapacity
		if req.Required != gang.NoLevel && st.ix.Capacity(topology.ClusterLevel, 0, req.Class, req.GPUsPerMember) >= j.Members {
			out = gang.NoDomain
		}
	} else {
		if req.Required == gang.NoLevel && req.Preferred == gang.NoLevel {
			// Without topology a gang fits exactly when the members fit.
			out = gang.NoCapacity
			if st.ix.Capacity(topology.ClusterLevel, 0, req.Class, req.GPUsPerMember) >= j.Members {
				out = gang.Placed
			}
		} else {
			var pl gang.Placement
			if pl, out = gang.Place(st.ix, req, st.scorer(j)); out == gang.Placed {
				pl.Release(st.ix)
			}
		}
		if out == gang.Placed {
			st.wait(j, ReasonBehindReservation, st.delayed(req.Class, req.GPUsPerMember, d), time.Time{})
			if j.ID == st.target {
				st.delays(req.Class, req.GPUsPerMember, d, func(rs *resvInfo) {
					st.turn.delays = append(st.turn.delays, fmt.Sprintf("%s at %s", rs.job, formatTime(st.at(rs.start), time.RFC3339Nano)))
				})
			}
			return
		}
		if !known || j.Members < m {
			st.noFitAtAll[key] = j.Members
		}
	}
	free := st.ix.FreeGPUs(topology.ClusterLevel, 0, req.Class)
	typ := typeWord(j.GPUType)
	why := ReasonInsufficientGPUs
	if out == gang.NoDomain {
		why = ReasonTopology
	}
	room := -1 // enough GPUs are free, but on too few nodes with room for a member
	if why == ReasonInsufficientGPUs && free >= j.GPUs() {
		room = st.ix.Capacity(topology.ClusterLevel, 0, req.Class, j.GPUsPerMember)
	}
	mk := msgKey{why: why, m: j.Members, g: j.GPUsPerMember, free: free, room: room, typ: j.GPUType, required: j.Topology.Required}
	msg, ok := st.msgs[mk]
	if !ok {
		switch {
		case why == ReasonTopology:
			msg = fmt.Sprintf("needs %d×%d%s GPUs in one %s; %d free in the cluster but no %s has room", j.Members, j.GPUsPerMember, typ, j.Topology.Required, free, j.Topology.Required)
		case room >= 0:
			msg = fmt.Sprintf("needs %d×%d%s GPUs, %d free but split across nodes: room for %s", j.Members, j.GPUsPerMember, typ, free, counted(room, "member"))
		default:
			msg = fmt.Sprintf("needs %d×%d%s GPUs, %d free", j.Members, j.GPUsPerMember, typ, free)
		}
		st.msgs[mk] = msg
	}
	st.wait(j, why, msg, time.Time{})
}

// delayed is the message of a job of class c and g GPUs per member that
// fits now but would delay reservations that start within d (see
// delays), which it names. With the same reservations of the class made
// so far, the same ones start within d when as many do, and with as many
// jobs placed, the same GPUs are free; so the text is formatted once per
// (class, member size, count, reservations, placements).
func (st *stepState) delayed(c topology.Class, g int, d time.Duration) string {
	key := delayKey{class: c, g: int32(g), blocks: st.blocks(d), all: len(st.reserve), placed: len(st.d.Placements)}
	if c != topology.AnyType {
		key.blocks, key.all = 0, 0
		if cr := st.byClass[c]; cr != nil {
			key.blocks, _ = slices.BinarySearch(cr.starts, d)
			key.all = len(cr.starts)
		}
	}
	if msg, ok := st.delayMsg[key]; ok {
		return msg
	}
	msg := "fits now but would delay the reservation of " + st.formatDelayed(c, g, d)
	st.delayMsg[key] = msg
	return msg
}

// formatDelayed names the first three reservations (in the order they
// were made) that a job of class c and g GPUs per member could delay
// within d, and counts the others.
func (st *stepState) formatDelayed(c topology.Class, g int, d time.Duration) string {
	var names []string
	blocks := 0
	st.delays(c, g, d, func(rs *resvInfo) {
		if blocks++; blocks <= 3 {
			names = append(names, fmt.Sprintf("%q at %s", rs.job, formatTime(st.at(rs.start), time.RFC3339Nano)))
		}
	})
	if len(names) == 0 {
		return "an earlier job"
	}
	if more := blocks - len(names); more > 0 {
		names = append(names, fmt.Sprintf("%d more", more))
	}
	return strings.Join(names, ", ")
}

// never says why j can never fit this cluster, or "". The answer depends
// only on the shape, so it is computed once per shape.
func (st *stepState) never(j *Job, req gang.Request) string {
	if st.ix.NumNodes() == 0 {
		return "the cluster has no nodes"
	}
	if j.GPUsPerMember > st.ix.MaxGPUs() {
		return fmt.Sprintf("needs %d GPUs on one node; the largest node has %d", j.GPUsPerMember, st.ix.MaxGPUs())
	}
	key := shapeKey{class: req.Class, g: req.GPUsPerMember, req: req.Required, pre: gang.NoLevel, spread: gang.NoLevel}
	most, ok := st.most[key]
	if !ok {
		most = st.mostMembers(req)
		st.most[key] = most
	}
	if j.Members <= most {
		return ""
	}
	typ := typeWord(j.GPUType)
	if req.Required != gang.NoLevel {
		return fmt.Sprintf("needs %d×%d%s GPUs in one %s; no %s of this cluster holds more than %s", j.Members, j.GPUsPerMember, typ, j.Topology.Required, j.Topology.Required, counted(most, "such member"))
	}
	return fmt.Sprintf("needs %d×%d%s GPUs; this cluster holds at most %s", j.Members, j.GPUsPerMember, typ, counted(most, "such member"))
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

// mostMembers is the largest gang of req's member size, class and required
// level that fits the cluster with every job gone: ready and draining
// nodes, healthy GPUs. One pass over the nodes per distinct shape.
func (st *stepState) mostMembers(req gang.Request) int {
	g := req.GPUsPerMember
	if req.Required == gang.NoLevel {
		total := 0
		for n := range st.ix.NumNodes() {
			id := topology.NodeID(n)
			if st.ix.State(id) != topology.Down && st.ix.InClass(id, req.Class) {
				total += st.ix.Healthy(id).Len() / g
			}
		}
		return total
	}
	per := make([]int, st.ix.NumDomains(req.Required))
	for n := range st.ix.NumNodes() {
		id := topology.NodeID(n)
		if st.ix.State(id) != topology.Down && st.ix.InClass(id, req.Class) {
			per[st.ix.DomainOf(req.Required, id)] += st.ix.Healthy(id).Len() / g
		}
	}
	if len(per) == 0 {
		return 0 // a cluster without nodes has no domains
	}
	return slices.Max(per)
}

// wait records why j waits, in its slot of the ID order.
func (st *stepState) wait(j *Job, why Reason, msg string, start time.Time) {
	st.waits[st.rank[st.index(j)]] = Wait{Job: j.ID, Reason: why, Message: msg, Start: start}
}
