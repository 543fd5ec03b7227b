package scheduler

import (
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpusched/gpusched/topology"
)

// This file reads a snapshot document. It is read in two rounds, so that
// an error of the document's syntax or of its own keys is reported before
// any error inside the cluster, a team or a job, wherever each is:
//  1. the document as a whole: its syntax, its own keys and the types of
//     "now", "teams" and "jobs" (see snapshotTop); the cluster and each
//     team and job are kept as text, but for the plain jobs, which are
//     read as they pass (see below);
//  2. then "now", the cluster (its own keys, then each node), each team
//     and each job, in that order, each part with the precedence of
//     [jsonReader]: offences, then the first value of the wrong type,
//     then invalid values in the order of the part's fields.
//
// A job that is plain (see json_fast.go) is read as the first round
// passes over it, and so is a plain node as the cluster's own first
// round does: such a part has no error, so the order of the errors is
// the same.
//
// Errors name the part ("cluster", `cluster: nodes[1] "n1"`, `teams[0]
// "t"`, `jobs[3] "C"`) and the path within it.

// snapshotParts is a snapshot document after its first round.
type snapshotParts struct {
	now          []byte // nil: absent
	cluster      jsontext.Value
	clusterGiven bool
	teams        []jsontext.Value
	// jobs holds the jobs the fast path read in the first round, and
	// slowJobs the text of the others (see fastList).
	jobs     []Job
	slowJobs []slowPart
	plan     []jsontext.Value
}

// slowPart is the text of an element of a list that the fast path did
// not read, and the element's index.
type slowPart struct {
	i    int
	text jsontext.Value
}

// snapshotKeys are the keys of a snapshot document's object.
var snapshotKeys = []string{"now", "cluster", "teams", "jobs", "plan"}

// snapshotTop reads the document's object into p.
func (r *jsonReader) snapshotTop(p *snapshotParts) error {
	_, err := r.object(snapshotKeys, func(f int) error {
		var err error
		switch f {
		case 0:
			var b []byte
			var ok bool
			if b, ok, err = r.strBytes(); ok {
				p.now = append([]byte{}, b...)
			}
		case 1:
			p.cluster, err = r.read() // a null too: the part reports it
			p.clusterGiven = true
		case 2:
			p.teams, err = r.rawList(p.teams)
		case 3:
			p.jobs, p.slowJobs, err = fastList(r, p.jobs, p.slowJobs, 256, r.fastJob)
		case 4:
			p.plan, err = r.rawList(p.plan)
		}
		return err
	})
	return err
}

// rawList reads an array whose elements are read later, appending their
// text to list.
func (r *jsonReader) rawList(list []jsontext.Value) ([]jsontext.Value, error) {
	if ok, err := r.open('[', "an array"); !ok {
		return list, err
	}
	for {
		more, err := r.more()
		if err != nil || !more {
			return list, err
		}
		v, err := r.read()
		if err != nil {
			return list, err
		}
		list = append(list, v)
	}
}

// fastList reads an array of parts as the text that holds it is first
// read (the document's, for jobs; the cluster's, for nodes): read reads a
// part from the start of the text it is given (see fastJob), and the
// decoder passes over it. The parts read so are appended to fast, in
// order; the text of any other part is appended to slow, with its index
// in the array, for the full reader (see assemble). A part is expected
// to take guess bytes or more, for fast's first capacity.
func fastList[T any](r *jsonReader, fast []T, slow []slowPart, guess int, read func([]byte, *T) int) ([]T, []slowPart, error) {
	if ok, err := r.open('[', "an array"); !ok {
		return fast, slow, err
	}
	for {
		more, err := r.more()
		if err != nil || !more {
			return fast, slow, err
		}
		rest := r.dec.Rest()
		if r.noFast {
			rest = nil // the fast path reads nothing there
		}
		if fast == nil {
			fast = make([]T, 0, min(len(rest)/guess, 1<<16)+1)
		}
		fast = append(fast, *new(T))
		if n := read(rest, &fast[len(fast)-1]); n >= minFastPart {
			if _, err := r.dec.ReadValueOf(n); err != nil {
				return fast, slow, errSyntax
			}
			continue
		}
		fast[len(fast)-1] = *new(T)
		fast = fast[:len(fast)-1]
		v, err := r.read()
		if err != nil {
			return fast, slow, err
		}
		slow = append(slow, slowPart{len(fast) + len(slow), v})
	}
}

// minFastPart is the fewest bytes of a part that fastList keeps from the
// fast path. What a part is decoded into takes a few hundred bytes (a Job
// 320) and the list of them grows by appending, so a list of tiny parts
// such as {} would allocate hundreds of bytes per byte of input. A
// shorter part is left to the full reader, whose list is made to
// measure. Only a document written by hand has jobs or nodes this short
// that pass validation.
const minFastPart = 24

// assemble returns the elements of a list that fastList read: those of
// fast, in order, and, at the index of each slow part, what read reads
// from its text, in the order of the list. Its errors are read's. The
// list it returns is no longer than it needs to be: a fast list whose
// first capacity, guessed from the text that follows it, was too large
// is copied to its length.
func assemble[T any](fast []T, slow []slowPart, read func(sp slowPart, dst *T) error) ([]T, error) {
	if len(slow) == 0 {
		if cap(fast) > len(fast)+len(fast)/4+16 {
			return slices.Clone(fast), nil
		}
		return slices.Clip(fast), nil
	}
	all := make([]T, len(fast)+len(slow))
	k := 0
	for i := range all {
		if len(slow) > 0 && slow[0].i == i {
			if err := read(slow[0], &all[i]); err != nil {
				return nil, err
			}
			slow = slow[1:]
			continue
		}
		all[i] = fast[k]
		k++
	}
	return all, nil
}

// decodeSnapshotData decodes the snapshot document data (its second round
// is [jsonReader.snapshotParts]), without validating it.
func decodeSnapshotData(data []byte) (*Snapshot, error) {
	return decodeSnapshotDataWith(data, false)
}

// decodeSnapshotDataWith is decodeSnapshotData, with the fast path off
// when slow is true (for tests: see FuzzFastPathAgreesWithFullReader).
func decodeSnapshotDataWith(data []byte, slow bool) (*Snapshot, error) {
	if err := encodingError(snapshotErr, data); err != nil {
		return nil, err
	}
	doc := newJSONReader(data, snapshotErr)
	doc.noFast = slow
	var p snapshotParts
	if err := doc.document(data, func() error { return doc.snapshotTop(&p) }); err != nil {
		return nil, err
	}
	s := &Snapshot{}
	if p.now != nil {
		var err error
		if s.Now, err = parseTime(snapshotErr, "now", string(p.now)); err != nil {
			return nil, err
		}
	}
	if err := doc.snapshotParts(&p, s); err != nil {
		return nil, err
	}
	return s, nil
}

// snapshotParts reads the parts of a snapshot document into s.
func (r *jsonReader) snapshotParts(p *snapshotParts, s *Snapshot) error {
	if p.clusterGiven {
		var slow []slowPart
		r.readPart(p.cluster, "cluster", -1, "")
		if err := r.cluster(&s.Cluster, &slow); err != nil {
			return err
		}
		var err error
		s.Cluster.Nodes, err = assemble(s.Cluster.Nodes, slow, func(sp slowPart, n *topology.Node) error {
			r.readPart(sp.text, "cluster: nodes", sp.i, "name")
			return r.node(n)
		})
		if err != nil {
			return err
		}
	}
	if len(p.teams) > 0 {
		s.Teams = make([]Team, len(p.teams))
	}
	for i, raw := range p.teams {
		r.readPart(raw, "teams", i, "name")
		if err := r.team(&s.Teams[i]); err != nil {
			return err
		}
	}
	var err error
	s.Jobs, err = assemble(p.jobs, p.slowJobs, func(sp slowPart, j *Job) error {
		r.readPart(sp.text, "jobs", sp.i, "id")
		return r.job(j)
	})
	if err != nil {
		return err
	}
	if len(p.plan) > 0 {
		s.Plan = make([]Reservation, len(p.plan))
	}
	for i, raw := range p.plan {
		r.readPart(raw, "plan", i, "job")
		if err := r.planEntry(&s.Plan[i]); err != nil {
			return err
		}
	}
	return nil
}

// planEntry reads one entry of a snapshot's plan: a reservation as a
// decision writes it.
func (r *jsonReader) planEntry(p *Reservation) error {
	_, err := r.object([]string{"job", "start", "allocation", "message"}, func(f int) error {
		var err error
		switch f {
		case 0:
			_, err = r.str(&p.Job)
		case 1:
			err = r.timeValue(0, "start", &p.Start)
		case 2:
			p.Allocation, err = r.allocation()
		case 3:
			_, err = r.str(&p.Message)
		}
		return err
	})
	return r.partEnd(err)
}

// cluster reads a cluster's levels into c, and its nodes as fastList
// does: those the fast path reads into c.Nodes, the text of the others
// into slow, for assemble.
func (r *jsonReader) cluster(c *topology.Cluster, slow *[]slowPart) error {
	_, err := r.object([]string{"levels", "nodes"}, func(f int) error {
		var err error
		if f == 0 {
			c.Levels, err = r.stringList(nil)
		} else {
			c.Nodes, *slow, err = fastList(r, c.Nodes, *slow, 96, r.fastNode)
		}
		return err
	})
	return r.partEnd(err)
}

// partEnd is what a part reports when it is not an object: err, the
// offence of a null, or else what endPart reports.
func (r *jsonReader) partEnd(err error) error {
	if err != nil {
		return err
	}
	return r.endPart()
}

// stringList reads an array of strings (interned), nil when empty.
func (r *jsonReader) stringList(list []string) ([]string, error) {
	if ok, err := r.open('[', "an array"); !ok {
		return list, err
	}
	for i := 0; ; i++ {
		more, err := r.more()
		if err != nil || !more {
			return list, err
		}
		var s string
		r.pushIndex(i, true)
		ok, err := r.internedStr(&s)
		r.pop()
		if err != nil {
			return list, err
		}
		if ok {
			list = append(list, s)
		}
	}
}

// intList reads an array of integers; an empty array is empty, not nil.
func (r *jsonReader) intList() ([]int, error) {
	if ok, err := r.open('[', "an array"); !ok {
		return nil, err
	}
	list := []int{}
	for i := 0; ; i++ {
		more, err := r.more()
		if err != nil || !more {
			return list, err
		}
		var n int
		r.pushIndex(i, true)
		ok, err := r.integer(&n)
		r.pop()
		if err != nil {
			return list, err
		}
		if ok {
			list = append(list, n)
		}
	}
}

// nodeKeys are the keys of a node.
var nodeKeys = []string{"name", "gpus", "gpuType", "domains", "state", "unhealthyGPUs", "cpuMillis", "memoryMiB"}

// node reads one node of a cluster.
func (r *jsonReader) node(n *topology.Node) error {
	*n = topology.Node{State: topology.Ready}
	_, err := r.object(nodeKeys, func(f int) error {
		var err error
		switch f {
		case 0:
			_, err = r.str(&n.Name) // each node's own: not interned
		case 1:
			_, err = r.integer(&n.GPUs)
		case 2:
			_, err = r.internedStr(&n.GPUType)
		case 3:
			n.Domains, err = r.stringMap()
		case 4:
			var i int
			var ok bool
			if i, ok, err = r.enum(0, "state", nodeStateNames); ok {
				n.State = topology.NodeState(i)
			}
		case 5:
			var u []int
			if u, err = r.intList(); len(u) > 0 {
				n.Unhealthy = u
			}
		case 6:
			_, err = r.integer(&n.CPUMillis)
		case 7:
			_, err = r.integer(&n.MemoryMiB)
		}
		return err
	})
	return r.partEnd(err)
}

// stringMap reads an object of strings; {} is an empty map, not nil.
func (r *jsonReader) stringMap() (map[string]string, error) {
	if ok, err := r.open('{', "an object"); !ok {
		return nil, err
	}
	m := map[string]string{}
	for {
		more, err := r.more()
		if err != nil || !more {
			return m, err
		}
		name, err := r.name()
		if err != nil {
			return m, err
		}
		if _, dup := m[string(name)]; dup {
			return m, r.duplicate(name)
		}
		k := r.intern(name)
		var v string
		r.push(k)
		ok, err := r.internedStr(&v)
		r.pop()
		if err != nil {
			return m, err
		}
		if ok {
			m[k] = v
		} else {
			m[k] = "" // given, if not as a string: a repeat is an offence
		}
	}
}

// teamKeys are the keys of a team.
var teamKeys = []string{"name", "share", "usage", "parent", "quota"}

// team reads one team.
func (r *jsonReader) team(t *Team) error {
	_, err := r.object(teamKeys, func(f int) error {
		var err error
		switch f {
		case 0:
			_, err = r.internedStr(&t.Name)
		case 1:
			_, err = r.number(&t.Share)
		case 2:
			_, err = r.number(&t.Usage)
		case 3:
			_, err = r.internedStr(&t.Parent)
		case 4:
			err = r.quota(&t.Quota)
		}
		return err
	})
	return r.partEnd(err)
}

// quota reads a team's quota into *q.
func (r *jsonReader) quota(q **Quota) error {
	var v Quota
	ok, err := r.object([]string{"gpus", "borrowLimit", "cpuMillis", "memoryMiB"}, func(f int) error {
		var err error
		switch f {
		case 0:
			_, err = r.integer(&v.GPUs)
		case 1:
			_, err = r.integer(&v.BorrowLimit)
		case 2:
			_, err = r.integer(&v.CPUMillis)
		default:
			_, err = r.integer(&v.MemoryMiB)
		}
		return err
	})
	if ok {
		*q = &v
	}
	return err
}

// The checks of a job's values that are read as strings, in the order
// in which they are made.
const (
	jobKind = iota
	jobState
	jobPlacement
	jobSubmitted
	jobStarted
	jobEvictedAt
	jobTimeLimit
	jobGrace
)

// jobKeys are the keys of a job.
var jobKeys = []string{"id", "team", "tier", "kind", "submitted", "members", "gpusPerMember", "gpuType",
	"timeLimit", "checkpointGrace", "topology", "placement", "group", "spreadLevel", "state", "started",
	"evictedAt", "allocation", "mixGPUTypes", "cpuMillis", "memoryMiB", "eligibleNodes"}

// job reads one job, with the defaults of the keys it leaves out.
func (r *jsonReader) job(j *Job) error {
	*j = Job{Members: 1, Kind: Training, State: Pending, Placement: Pack}
	_, err := r.object(jobKeys, func(f int) error { return r.jobValue(j, f) })
	return r.partEnd(err)
}

// jobValue reads the value of field f of a job into j.
func (r *jsonReader) jobValue(j *Job, f int) error {
	var err error
	var i int
	var ok bool
	switch f {
	case 0:
		_, err = r.str(&j.ID)
	case 1:
		_, err = r.internedStr(&j.Team)
	case 2:
		var k int
		_, err = r.integer(&k)
		j.Tier = TierN(k)
	case 3:
		if i, ok, err = r.enum(jobKind, "kind", kindNames); ok {
			j.Kind = Kind(i)
		}
	case 4:
		err = r.timeValue(jobSubmitted, "submitted", &j.Submitted)
	case 5:
		_, err = r.integer(&j.Members)
	case 6:
		_, err = r.integer(&j.GPUsPerMember)
	case 7:
		_, err = r.internedStr(&j.GPUType)
	case 8:
		err = r.durationValue(jobTimeLimit, "timeLimit", &j.TimeLimit)
	case 9:
		err = r.durationValue(jobGrace, "checkpointGrace", &j.CheckpointGrace)
	case 10:
		err = r.topology(&j.Topology)
	case 11:
		if i, ok, err = r.enum(jobPlacement, "placement", placementNames); ok {
			j.Placement = PlacementMode(i)
		}
	case 12:
		_, err = r.internedStr(&j.Group)
	case 13:
		_, err = r.internedStr(&j.SpreadLevel)
	case 14:
		if i, ok, err = r.enum(jobState, "state", stateNames); ok {
			j.State = JobState(i)
		}
	case 15:
		err = r.timeValue(jobStarted, "started", &j.Started)
	case 16:
		err = r.timeValue(jobEvictedAt, "evictedAt", &j.EvictedAt)
	case 17:
		j.Allocation, err = r.allocation()
	case 18:
		_, err = r.boolean(&j.MixGPUTypes)
	case 19:
		_, err = r.integer(&j.CPUMillis)
	case 20:
		_, err = r.integer(&j.MemoryMiB)
	case 21:
		var l []string
		if l, err = r.stringList(nil); err == nil {
			if l == nil {
				l = []string{} // present and empty: no node, not every node
			}
			j.EligibleNodes = l
		}
	}
	return err
}

// enum reads a string that must be one of names and returns its index;
// another string is an invalid value, checked in the given order.
func (r *jsonReader) enum(order int, field string, names []string) (int, bool, error) {
	b, ok, err := r.strBytes()
	if !ok {
		return 0, false, err
	}
	if i, ok := enumIndex(names, b); ok {
		return i, true, nil
	}
	r.semantic(order, field, unknownEnum(string(b), names))
	return 0, false, nil
}

// timeValue reads an RFC 3339 time (see parseTime) into dst; a bad one is an
// invalid value, checked in the given order.
func (r *jsonReader) timeValue(order int, field string, dst *time.Time) error {
	b, ok, err := r.strBytes()
	if !ok {
		return err
	}
	t, perr := parseTime(keepMsg, field, string(b))
	if perr != nil {
		r.semantic(order, field, perr.(*fieldMsg).msg)
		return nil
	}
	*dst = t
	return nil
}

// durationValue reads a Go duration >= 0 into dst; a bad one is an invalid
// value, checked in the given order.
func (r *jsonReader) durationValue(order int, field string, dst *time.Duration) error {
	b, ok, err := r.strBytes()
	if !ok {
		return err
	}
	d, perr := parseDuration(keepMsg, field, string(b))
	if perr != nil {
		r.semantic(order, field, perr.(*fieldMsg).msg)
		return nil
	}
	*dst = d
	return nil
}

// fieldMsg is an error that keeps its field and message apart, for the
// reader to name the field in its own way.
type fieldMsg struct{ field, msg string }

func (e *fieldMsg) Error() string { return e.field + ": " + e.msg }

// keepMsg is the mkErr of fieldMsg.
func keepMsg(field, msg string) error { return &fieldMsg{field, msg} }

// topology reads a job's topology constraints.
func (r *jsonReader) topology(t *TopologySpec) error {
	_, err := r.object(topologyKeys, func(f int) error {
		var err error
		if f == 0 {
			_, err = r.internedStr(&t.Required)
		} else {
			_, err = r.internedStr(&t.Preferred)
		}
		return err
	})
	return err
}

// allocation reads a job's allocation, nil when empty.
func (r *jsonReader) allocation() (topology.Allocation, error) {
	if ok, err := r.open('[', "an array"); !ok {
		return nil, err
	}
	var a topology.Allocation
	for i := 0; ; i++ {
		more, err := r.more()
		if err != nil || !more {
			return a, err
		}
		r.pushIndex(i, false)
		var ng topology.NodeGPUs
		ok, err := r.nodeGPUs(&ng)
		r.pop()
		if err != nil {
			return a, err
		}
		if ok {
			a = append(a, ng)
		}
	}
}

// topologyKeys are the keys of a job's topology.
var topologyKeys = []string{"required", "preferred"}

// allocationKeys are the keys of an entry of an allocation.
var allocationKeys = []string{"node", "gpus"}

// nodeGPUs reads one entry of an allocation.
func (r *jsonReader) nodeGPUs(ng *topology.NodeGPUs) (bool, error) {
	return r.object(allocationKeys, func(f int) error {
		var err error
		if f == 0 {
			_, err = r.internedStr(&ng.Node)
		} else {
			ng.GPUs, err = r.intList()
		}
		return err
	})
}
