package scheduler

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/topology"
)

// DefaultTiers is the number of priority tiers of the default policy.
const DefaultTiers = 4

// ValidationError is the error Validate returns: the field path within
// the snapshot ("jobs[3] \"C\": gpusPerMember") and what is wrong with it.
type ValidationError struct {
	// Field is the path of the offending field, with the job or team it
	// belongs to: "now", "cluster", "teams[1] \"a\": share",
	// "jobs[3] \"C\": allocation[0].gpus".
	Field string
	// Msg says what is wrong with it: a rule ("must be >= 1, got 0") or a
	// finding ("unknown level \"rack\"").
	Msg string
}

// Error formats the error as "snapshot: FIELD: MSG", or "snapshot:
// FIELD MSG" when MSG states a rule ("must ..."), as in
// `snapshot: jobs[3] "C": gpusPerMember must be >= 1, got 0`.
func (e *ValidationError) Error() string {
	if strings.HasPrefix(e.Msg, "must ") || strings.HasPrefix(e.Msg, "is ") {
		return "snapshot: " + e.Field + " " + e.Msg
	}
	return "snapshot: " + e.Field + ": " + e.Msg
}

func verr(field, format string, args ...any) error {
	return &ValidationError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks a snapshot against the rules of the default policy
// (tiers 0..DefaultTiers-1). It returns a *ValidationError naming the
// first bad field, or nil. [Scheduler.Step] runs the same checks with the
// scheduler's tier count, and so does [Scheduler.Validate]. It builds no
// index, only maps of node and team names: O(N log N + T + A) for N
// nodes, T teams and A jobs, allocation entries and allocated GPUs.
func Validate(s *Snapshot) error { return validateTiers(s, DefaultTiers) }

// Validate checks a snapshot against the rules of the scheduler's policy:
// the package's [Validate], with tiers 0..n-1 for the n tiers of the
// policy (its Tiers, or its preemption matrix's). A snapshot it accepts,
// [Scheduler.Step] accepts. A policy whose modes Step refuses (see
// [Config]) is refused here too, whatever the snapshot.
func (s *Scheduler) Validate(snap *Snapshot) error {
	if err := s.cfg.checkModes(); err != nil {
		return err
	}
	return validateTiers(snap, s.cfg.tiers())
}

func validateTiers(s *Snapshot, tiers int) error {
	if s == nil {
		return verr("snapshot", "is nil") // the library never panics on input
	}
	if s.Now.IsZero() {
		return verr("now", "is missing")
	}
	if err := s.Cluster.Validate(); err != nil {
		return &ValidationError{Field: "cluster", Msg: err.Error()}
	}
	nodes := make(map[string]int, len(s.Cluster.Nodes))
	for i := range s.Cluster.Nodes {
		nodes[s.Cluster.Nodes[i].Name] = i
	}
	node := func(n string) (int, int, bool) {
		i, ok := nodes[n]
		if !ok {
			return 0, 0, false
		}
		return i, s.Cluster.Nodes[i].GPUs, true
	}
	known := func(n string) (int, bool) {
		i, ok := nodes[n]
		return i, ok
	}
	if err := validateJobs(s, tiers, node, known, make([]topology.GPUSet, len(s.Cluster.Nodes))); err != nil {
		return err
	}
	return validatePlan(s.Plan)
}

// checked is what validate learns on the way, for Step.
type checked struct {
	ix    *topology.Index   // the cluster's index, every GPU free
	nodes []topology.NodeID // the node of every allocation entry of every job, in snapshot order
	held  []topology.GPUSet // per node, the GPUs running and evicting jobs hold
}

// validate is Validate for a policy of the given number of tiers, for
// Step: it builds the cluster's index, which checks the cluster and finds
// the nodes that allocations name, and returns what it learned.
func validate(s *Snapshot, tiers int) (checked, error) {
	if s == nil {
		return checked{}, verr("snapshot", "is nil")
	}
	if s.Now.IsZero() {
		return checked{}, verr("now", "is missing")
	}
	ix, err := topology.NewIndex(&s.Cluster)
	if err != nil {
		return checked{}, &ValidationError{Field: "cluster", Msg: err.Error()}
	}
	c := checked{ix: ix, held: make([]topology.GPUSet, ix.NumNodes())}
	err = validateJobs(s, tiers, func(n string) (int, int, bool) {
		id, ok := ix.Lookup(n)
		if !ok {
			return 0, 0, false
		}
		c.nodes = append(c.nodes, id)
		return int(id), ix.GPUs(id), true
	}, func(n string) (int, bool) {
		id, ok := ix.Lookup(n)
		return int(id), ok
	}, c.held)
	if err == nil {
		err = validatePlan(s.Plan)
	}
	if err != nil {
		return checked{}, err
	}
	return c, nil
}

// validatePlan checks the entries of a plan, in order, for what makes an
// entry malformed: no job or start, a job listed twice, no allocation,
// an entry of the allocation with no node name or no GPUs, a negative
// GPU index, or one GPU twice. What only shows that the world moved on
// since the plan was made is not an error, and Step handles it: an entry
// for a job that is unknown or not pending is ignored; one on a node that
// left the cluster or on a GPU index the node no longer has, one whose
// GPUs are no longer usable, one that no longer fits its job's shape, and
// one that shares a GPU with the entry of a job ahead in the queue are
// not kept (the job is planned afresh, and its pending message says why).
// O(P log P + A) for P entries and A allocated GPUs.
func validatePlan(plan []Reservation) error {
	seen := make(map[string]int, len(plan))
	for i := range plan {
		r := &plan[i]
		// Field paths are formatted only for an error: a host passes
		// back thousands of entries every Step.
		f := func(sub string) string { return planField(i, r) + sub }
		if r.Job == "" {
			return verr(fmt.Sprintf("plan[%d]: job", i), "is missing")
		}
		if k, dup := seen[r.Job]; dup {
			return verr(f(": job"), "is listed twice (also plan[%d])", k)
		}
		seen[r.Job] = i
		if r.Start.IsZero() {
			return verr(f(": start"), "is missing")
		}
		if len(r.Allocation) == 0 {
			return verr(f(": allocation"), "must be given")
		}
		for k, a := range r.Allocation {
			af := func(sub string) string { return f(fmt.Sprintf(": allocation[%d]%s", k, sub)) }
			if a.Node == "" {
				return verr(af(".node"), "is missing")
			}
			if len(a.GPUs) == 0 {
				return verr(af(".gpus"), "holds no GPUs on node %q (leave the entry out)", a.Node)
			}
			var set topology.GPUSet
			for _, g := range a.GPUs {
				if g < 0 {
					return verr(af(".gpus"), "GPU index %d is negative", g)
				}
				if set.Has(g) {
					return verr(af(".gpus"), "GPU %d of node %q is listed twice", g, a.Node)
				}
				if g < topology.MaxGPUsPerNode {
					set |= topology.SetOf(g)
				}
			}
		}
	}
	return nil
}

// planField names plan entry i, r, for an error: plan[2] "C".
func planField(i int, r *Reservation) string { return fmt.Sprintf("plan[%d] %q", i, r.Job) }

// validateJobs checks the teams and jobs of s, whose cluster is valid;
// node returns a node's number among the cluster's nodes (any numbering
// from 0) and its GPU count, or false for an unknown name. When the
// snapshot is valid, it has asked node about every allocation entry of
// every job exactly once, in order, and claimed (zero, by node number)
// holds the GPUs the allocations hold. known returns a node's number in
// the same numbering, or false, for the names of eligible nodes. The error names the first field
// at fault, in input order: teams first, then each job's ID, fields and
// allocation.
func validateJobs(s *Snapshot, tiers int, node func(name string) (int, int, bool), known func(name string) (int, bool), claimed []topology.GPUSet) error {
	if err := validateTeams(s.Teams); err != nil {
		return err
	}
	ids := newIDCheck(s.Jobs)
	eligible := eligibleCheck{known: known, nodes: len(claimed)}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if err := ids.check(i, j); err != nil {
			return err
		}
		if err := checkJobFields(s.Cluster.Levels, tiers, i, j); err != nil {
			return err
		}
		if err := eligible.check(i, j); err != nil {
			return err
		}
		if j.State == Pending {
			if len(j.Allocation) > 0 {
				return verr(jobField(i, j)+": allocation", "a pending job holds no allocation")
			}
			continue
		}
		if err := checkAllocation(s, i, node, claimed); err != nil {
			return err
		}
	}
	return nil
}

// eligibleCheck checks the jobs' EligibleNodes: every name a node that
// known reports, none listed twice in one list. It marks each node with
// the last job that listed it and where, so a list of E names costs E
// lookups and no allocation beyond two slices over the nodes, made at the
// first list; an error's field path is built only for the error. A list
// that is the very slice of a job checked before (a host that gives every
// pod of one placement rule the same list) is not read again.
type eligibleCheck struct {
	known func(name string) (int, bool)
	nodes int // the number of nodes: known's numbers are below it
	// by, by node number, 1 + the index of the last job whose list named
	// it (0: none), and at the place in that list.
	by, at []int
	// done holds the lists found valid, by identity.
	done map[listID]bool
}

// listID is the identity of a non-empty slice of names: its first
// element's address and its length. Two slices of one identity hold the
// same names in the same order.
type listID struct {
	first *string
	n     int
}

// idOf returns the identity of names, which must not be empty.
func idOf(names []string) listID { return listID{&names[0], len(names)} }

// check checks job i's EligibleNodes. O(E) for E names.
func (c *eligibleCheck) check(i int, j *Job) error {
	if len(j.EligibleNodes) == 0 {
		return nil
	}
	id := idOf(j.EligibleNodes)
	if c.done[id] {
		return nil
	}
	if c.by == nil {
		c.by, c.at, c.done = make([]int, c.nodes), make([]int, c.nodes), map[listID]bool{}
	}
	field := func(k int) string { return fmt.Sprintf("%s: eligibleNodes[%d]", jobField(i, j), k) }
	for k, name := range j.EligibleNodes {
		n, ok := c.known(name)
		if !ok {
			return verr(field(k), "unknown node %q", clip(name))
		}
		if c.by[n] == i+1 {
			return verr(field(k), "node %q listed twice (also eligibleNodes[%d])", clip(name), c.at[n])
		}
		c.by[n], c.at[n] = i+1, k
	}
	c.done[id] = true
	return nil
}

// jobField names job i, j, for an error: jobs[3] "C".
func jobField(i int, j *Job) string { return fmt.Sprintf("jobs[%d] %q", i, j.ID) }

// validateTeams checks each team's fields in input order, then the tree
// their parents make (checkTeamTree).
func validateTeams(ts []Team) error {
	teams := make(map[string]int, len(ts))
	for i := range ts {
		t := &ts[i]
		f := func() string { return fmt.Sprintf("teams[%d] %q", i, t.Name) }
		if t.Name == "" {
			return verr(fmt.Sprintf("teams[%d]", i), "name is empty")
		}
		if j, dup := teams[t.Name]; dup {
			return verr(f(), "duplicate team name (also teams[%d])", j)
		}
		teams[t.Name] = i
		if t.Share < 0 || math.IsNaN(t.Share) || math.IsInf(t.Share, 0) {
			return verr(f()+": share", "must be >= 0, got %v", t.Share)
		}
		if t.Usage < 0 || math.IsNaN(t.Usage) || math.IsInf(t.Usage, 0) {
			return verr(f()+": usage", "must be >= 0, got %v", t.Usage)
		}
		if q := t.Quota; q != nil {
			if q.GPUs < 0 {
				return verr(f()+": quota.gpus", "must be >= 0, got %d", q.GPUs)
			}
			if q.BorrowLimit < 0 {
				return verr(f()+": quota.borrowLimit", "must be >= 0, got %d", q.BorrowLimit)
			}
			if q.CPUMillis < 0 {
				return verr(f()+": quota.cpuMillis", "must be >= 0, got %d", q.CPUMillis)
			}
			if q.MemoryMiB < 0 {
				return verr(f()+": quota.memoryMiB", "must be >= 0, got %d", q.MemoryMiB)
			}
		}
	}
	return checkTeamTree(ts, teams)
}

// idCheck finds repeated job IDs. Jobs listed in ID order, as hosts
// usually keep them, repeat an ID only next to each other; otherwise a
// map (byID non-nil) finds repeats.
type idCheck struct {
	jobs []Job
	byID map[string]int
}

func newIDCheck(jobs []Job) idCheck {
	c := idCheck{jobs: jobs}
	if !slices.IsSortedFunc(jobs, func(a, b Job) int { return strings.Compare(a.ID, b.ID) }) {
		c.byID = make(map[string]int, len(jobs))
	}
	return c
}

// check refuses job i, j, when its ID is empty or repeats an earlier
// job's; the jobs must be checked in order.
func (c idCheck) check(i int, j *Job) error {
	if j.ID == "" {
		return verr(fmt.Sprintf("jobs[%d]", i), "id is empty")
	}
	if c.byID == nil {
		if i > 0 && c.jobs[i-1].ID == j.ID {
			return verr(jobField(i, j), "duplicate job id (also jobs[%d])", i-1)
		}
		return nil
	}
	if k, dup := c.byID[j.ID]; dup {
		return verr(jobField(i, j), "duplicate job id (also jobs[%d])", k)
	}
	c.byID[j.ID] = i
	return nil
}

// checkJobFields checks job i's own fields, in the order they are listed
// here, against the number of tiers and the cluster's levels.
func checkJobFields(levels []string, tiers int, i int, j *Job) error {
	f := func() string { return jobField(i, j) }
	switch {
	case j.Tier.Level(tiers) < 0 || j.Tier.Level(tiers) >= tiers:
		return verr(f()+": tier", "must be in 0..%d, got %d", tiers-1, j.Tier.Level(tiers))
	case j.Kind > Inference:
		return verr(f()+": kind", "unknown kind %d", j.Kind)
	case j.State > Evicting:
		return verr(f()+": state", "unknown state %d", j.State)
	case j.Placement > Spread:
		return verr(f()+": placement", "unknown placement %d", j.Placement)
	case j.Members < 1:
		return verr(f()+": members", "must be >= 1, got %d", j.Members)
	case j.GPUsPerMember < 1:
		return verr(f()+": gpusPerMember", "must be >= 1, got %d", j.GPUsPerMember)
	case j.GPUsPerMember > topology.MaxGPUsPerNode:
		return verr(f()+": gpusPerMember", "must be <= %d, got %d", topology.MaxGPUsPerNode, j.GPUsPerMember)
	case j.Members > 1<<20:
		return verr(f()+": members", "must be <= %d, got %d", 1<<20, j.Members)
	case j.TimeLimit < 0:
		return verr(f()+": timeLimit", "must be >= 0, got %s", j.TimeLimit)
	case j.CheckpointGrace < 0:
		return verr(f()+": checkpointGrace", "must be >= 0, got %s", j.CheckpointGrace)
	case j.CPUMillis < 0:
		return verr(f()+": cpuMillis", "must be >= 0, got %d", j.CPUMillis)
	case j.MemoryMiB < 0:
		return verr(f()+": memoryMiB", "must be >= 0, got %d", j.MemoryMiB)
	}
	req, pref := -1, -1
	if l := j.Topology.Required; l != "" {
		if req = levelIndex(levels, l); req < 0 {
			return verr(f()+": topology.required", "unknown level %q", l)
		}
	}
	if l := j.Topology.Preferred; l != "" {
		if pref = levelIndex(levels, l); pref < 0 {
			return verr(f()+": topology.preferred", "unknown level %q", l)
		}
		if req >= 0 && pref < req {
			return verr(f()+": topology.preferred", "level %q is outside required level %q", l, j.Topology.Required)
		}
	}
	if l := j.SpreadLevel; l != "" && levelIndex(levels, l) < 0 {
		return verr(f()+": spreadLevel", "unknown level %q", l)
	}
	return nil
}

// checkAllocation checks the allocation of running or evicting job i:
// known nodes, GPU indices in range and claimed by no other entry, whole
// members on each node, members × gpusPerMember GPUs in all. It asks
// node about each entry once, in order, and adds the GPUs to claimed.
func checkAllocation(s *Snapshot, i int, node func(name string) (int, int, bool), claimed []topology.GPUSet) error {
	j := &s.Jobs[i]
	if len(j.Allocation) == 0 {
		return verr(jobField(i, j)+": allocation", "must be given for %s job", article(j.State.String()))
	}
	total := 0
	for k, a := range j.Allocation {
		af := func() string { return fmt.Sprintf("%s: allocation[%d]", jobField(i, j), k) }
		ni, gpus, ok := node(a.Node)
		if !ok {
			return verr(af()+".node", "unknown node %q", a.Node)
		}
		for _, g := range a.GPUs {
			if g < 0 || g >= gpus {
				return verr(af()+".gpus", "GPU index %d out of range 0..%d of node %q", g, gpus-1, a.Node)
			}
			bit := topology.SetOf(g)
			if claimed[ni]&bit != 0 {
				if other := claimant(s, a.Node, g); other != i {
					return verr(af()+".gpus", "GPU %d of node %q is claimed twice (also jobs[%d] %q)", g, a.Node, other, s.Jobs[other].ID)
				}
				return verr(af()+".gpus", "GPU %d of node %q is claimed twice by this job", g, a.Node)
			}
			claimed[ni] |= bit
		}
		if len(a.GPUs) == 0 {
			return verr(af()+".gpus", "holds no GPUs on node %q (leave the entry out)", a.Node)
		}
		if len(a.GPUs)%j.GPUsPerMember != 0 {
			return verr(af()+".gpus", "%d GPUs on node %q is not a whole number of members of %d", len(a.GPUs), a.Node, j.GPUsPerMember)
		}
		total += len(a.GPUs)
	}
	if total != j.GPUs() {
		return verr(jobField(i, j)+": allocation", "holds %d GPUs, want members × gpusPerMember = %d", total, j.GPUs())
	}
	return nil
}

// checkTeamTree reports the first team, in input order, whose parent is
// unknown, else the first whose way up ends in a cycle or is more than
// fairshare.MaxDepth levels long; teams maps each name to its index.
// Unknown parents are looked for first, so that a walk up never meets
// one. Each team is walked over once: O(T) for T teams.
func checkTeamTree(ts []Team, teams map[string]int) error {
	for i := range ts {
		if p := ts[i].Parent; p != "" {
			if _, ok := teams[p]; !ok {
				return verr(fmt.Sprintf("teams[%d] %q: parent", i, ts[i].Name), "unknown team %q", p)
			}
		}
	}
	const (
		unseen = iota
		onPath // on the way up being walked
		top    // the way up ends at a top-level team
		cycle  // the way up ends in a cycle
	)
	state := make([]uint8, len(ts))
	depth := make([]int, len(ts)) // levels below the top, once settled top
	var path []int
	for i := range ts {
		t := &ts[i]
		if t.Parent == "" {
			continue
		}
		// Walk up to a team already settled, a top-level team, or a team
		// of this walk (a cycle), then settle the walk's teams alike.
		path = path[:0]
		end, k := uint8(top), i
		for {
			if st := state[k]; st != unseen {
				end = st
				if st == onPath {
					end = cycle
				}
				break
			}
			state[k] = onPath
			path = append(path, k)
			p := ts[k].Parent
			if p == "" {
				break
			}
			k = teams[p]
		}
		for _, k := range path {
			state[k] = end
		}
		if state[i] == cycle {
			return verr(fmt.Sprintf("teams[%d] %q: parent", i, t.Name), "cycle in the team tree")
		}
		if len(path) == 0 {
			continue // settled by an earlier walk
		}
		d := 0 // the path's last team is a top-level one, or below a settled one
		if last := path[len(path)-1]; ts[last].Parent != "" {
			d = depth[k] + 1
		}
		for j := len(path) - 1; j >= 0; j-- {
			depth[path[j]] = d
			d++
		}
		if depth[i] > fairshare.MaxDepth {
			return verr(fmt.Sprintf("teams[%d] %q: parent", i, t.Name), "more than %d levels below a top-level team", fairshare.MaxDepth)
		}
	}
	return nil
}

func levelIndex(levels []string, l string) int {
	for i, x := range levels {
		if x == l {
			return i
		}
	}
	return -1
}

// claimant returns the first job that holds GPU g of node.
func claimant(s *Snapshot, node string, g int) int {
	for i := range s.Jobs {
		for _, a := range s.Jobs[i].Allocation {
			if a.Node == node && slices.Contains(a.GPUs, g) {
				return i
			}
		}
	}
	return -1
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}
