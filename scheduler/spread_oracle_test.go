package scheduler_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// spreadWorld is a small cluster with replicas of group "web" running on
// it (one member each, on nodes that are not down, so that none is
// evicted), other jobs running beside them, and pending replicas of
// "web" spread over nodes or over the domains of a level, in priority
// order p0, p1, ...
type spreadWorld struct {
	snap  *scheduler.Snapshot
	level string // the pending replicas' spread level, "" for nodes
}

func drawSpreadWorld(t *rapid.T) spreadWorld {
	c := gen.SmallCluster(t)
	held := make([]topology.GPUSet, len(c.Nodes))
	var jobs []scheduler.Job
	for i := range rapid.IntRange(0, 5).Draw(t, "running") {
		ni := rapid.IntRange(0, len(c.Nodes)-1).Draw(t, "rnode")
		n := c.Nodes[ni]
		if n.State == topology.Down {
			continue
		}
		g := rapid.IntRange(1, 3).Draw(t, "rgpus")
		free := topology.FirstN(n.GPUs) &^ held[ni]
		if free.Len() < g {
			continue
		}
		s := free.Lowest(g)
		held[ni] |= s
		j := scheduler.Job{ID: fmt.Sprintf("r%d", i), Kind: scheduler.Inference, Members: 1, GPUsPerMember: g,
			State: scheduler.Running, Started: gen.Now.Add(-time.Hour),
			Allocation: topology.Allocation{{Node: n.Name, GPUs: s.Indices()}}}
		if rapid.Bool().Draw(t, "replica") {
			j.Group, j.Placement = "web", scheduler.Spread
		}
		jobs = append(jobs, j)
	}
	level := ""
	if len(c.Levels) > 0 && rapid.Bool().Draw(t, "byDomain") {
		level = rapid.SampledFrom(c.Levels).Draw(t, "spreadLevel")
	}
	for i := range rapid.IntRange(1, 3).Draw(t, "pending") {
		j := scheduler.Job{ID: fmt.Sprintf("p%d", i), Kind: scheduler.Inference, Group: "web", Placement: scheduler.Spread,
			SpreadLevel: level, Members: rapid.IntRange(1, 4).Draw(t, "members"), GPUsPerMember: rapid.IntRange(1, 3).Draw(t, "gpus"),
			Submitted: gen.Now.Add(time.Duration(i) * time.Second)}
		if rapid.IntRange(0, 3).Draw(t, "typed") == 0 {
			j.GPUType = c.Nodes[rapid.IntRange(0, len(c.Nodes)-1).Draw(t, "typeOf")].GPUType
		}
		if len(c.Levels) > 0 && rapid.IntRange(0, 2).Draw(t, "topology") == 0 {
			j.Topology.Required = rapid.SampledFrom(c.Levels).Draw(t, "required")
		}
		jobs = append(jobs, j)
	}
	return spreadWorld{snap: &scheduler.Snapshot{Now: gen.Now, Cluster: c, Jobs: jobs}, level: level}
}

// unit names the place a spread counts for node n: the node, or its
// domain of the spread level, told apart by its path from the outermost
// level.
func (w spreadWorld) unit(n *topology.Node) string {
	if w.level == "" {
		return n.Name
	}
	p := ""
	for _, l := range w.snap.Cluster.Levels {
		p += "/" + n.Domains[l]
		if l == w.level {
			return p
		}
	}
	panic("unknown level")
}

// domain names the domain of node n at level l by its path, "" for no
// level.
func (w spreadWorld) domain(n *topology.Node, l string) string {
	p := ""
	for _, x := range w.snap.Cluster.Levels {
		if l == "" {
			break
		}
		p += "/" + n.Domains[x]
		if x == l {
			break
		}
	}
	return p
}

// mostPlaces is the brute-force answer: the most distinct places that
// the members of j and the replicas already in group (a set of places)
// can sit on, over every way to put j's members on the free GPUs
// (free[i] on node i of the cluster) of domain dom of its required level
// (any domain when dom is nil) and of GPU type typ (when typ is nil, any
// type j may use: one, for a gang that names none and does not mix types
// on a cluster of several), or -1 when j fits nowhere.
func (w spreadWorld) mostPlaces(j *scheduler.Job, free []int, group map[string]bool, dom, typ *string) int {
	nodes := w.snap.Cluster.Nodes
	if typ == nil && j.GPUType == "" && j.Members > 1 && !j.MixGPUTypes {
		types := map[string]bool{}
		for _, n := range nodes {
			types[n.GPUType] = true
		}
		if len(types) > 1 {
			best := -1
			for t := range types {
				best = max(best, w.mostPlaces(j, free, group, dom, &t))
			}
			return best
		}
	}
	if dom == nil && j.Topology.Required != "" {
		best := -1
		for i := range nodes {
			d := w.domain(&nodes[i], j.Topology.Required)
			best = max(best, w.mostPlaces(j, free, group, &d, typ))
		}
		return best
	}
	var usable []int
	for i, n := range nodes {
		if dom != nil && w.domain(&nodes[i], j.Topology.Required) != *dom {
			continue
		}
		if n.State == topology.Ready && (j.GPUType == "" || n.GPUType == j.GPUType) && (typ == nil || n.GPUType == *typ) && free[i] >= j.GPUsPerMember {
			usable = append(usable, i)
		}
	}
	best := -1
	var used []int // nodes holding a member so far
	var walk func(k, left int)
	walk = func(k, left int) {
		if left == 0 {
			places := map[string]bool{}
			for p := range group {
				places[p] = true
			}
			for _, i := range used {
				places[w.unit(&nodes[i])] = true
			}
			best = max(best, len(places))
			return
		}
		if k == len(usable) {
			return
		}
		i := usable[k]
		for m := min(left, free[i]/j.GPUsPerMember); m >= 0; m-- {
			if m > 0 {
				used = append(used, i)
			}
			walk(k+1, left-m)
			if m > 0 {
				used = used[:len(used)-1]
			}
		}
	}
	walk(0, j.Members)
	return best
}

// TestSpreadGroupPlacesAsFarAsCapacityAllows checks the promise of
// spread placement against brute force on small clusters: each pending
// replica of a group that Step places puts its members and the group's
// replicas (running, and placed earlier in the same Step) on as many
// distinct nodes, or domains of the spread level, as any placement on
// the free GPUs of the domain of its required level it went to could;
// and a replica that Step does not place fits
// nowhere. Replicas are checked in priority order up to the first one
// not placed (its reservation, if any, is not modelled).
func TestSpreadGroupPlacesAsFarAsCapacityAllows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := drawSpreadWorld(t)
		s := w.snap
		d, err := scheduler.New(scheduler.Config{Order: scheduler.TierOrder{}}).Step(s)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]int{}
		free := make([]int, len(s.Cluster.Nodes))
		for i, n := range s.Cluster.Nodes {
			byName[n.Name] = i
			free[i] = n.GPUs - len(n.Unhealthy)
		}
		group := map[string]bool{}
		take := func(a topology.Allocation) {
			for _, ng := range a {
				i := byName[ng.Node]
				for _, g := range ng.GPUs {
					if !slices.Contains(s.Cluster.Nodes[i].Unhealthy, g) {
						free[i]--
					}
				}
			}
		}
		for _, j := range s.Jobs {
			if j.State == scheduler.Running {
				take(j.Allocation)
				if j.Group == "web" {
					for _, ng := range j.Allocation {
						group[w.unit(&s.Cluster.Nodes[byName[ng.Node]])] = true
					}
				}
			}
		}
		placed := map[string]topology.Allocation{}
		for _, p := range d.Placements {
			placed[p.Job] = p.Allocation
		}
		for i := range s.Jobs {
			j := &s.Jobs[i]
			if j.State != scheduler.Pending {
				continue
			}
			a, ok := placed[j.ID]
			if !ok {
				if best := w.mostPlaces(j, free, group, nil, nil); best >= 0 {
					t.Fatalf("%s fits (on %d places) but is not placed\n%s", j.ID, best, dump(s, d))
				}
				return
			}
			// Within the domain of its required level and the GPU type
			// (when it mixes none) that it went to.
			first := &s.Cluster.Nodes[byName[a[0].Node]]
			dom := w.domain(first, j.Topology.Required)
			var typ *string
			if !j.MixGPUTypes {
				typ = &first.GPUType
			}
			best := w.mostPlaces(j, free, group, &dom, typ)
			for _, ng := range a {
				group[w.unit(&s.Cluster.Nodes[byName[ng.Node]])] = true
			}
			if len(group) != best {
				t.Fatalf("%s: group on %d places after placing it on %v, %d possible\n%s", j.ID, len(group), a, best, dump(s, d))
			}
			take(a)
		}
	})
}

// withGroups gives some jobs of s a group ("a" or "b"), running or
// pending, spread or packed, and makes some more pending ones spread, so
// that replicas meet in one Step.
func withGroups(t *rapid.T, s *scheduler.Snapshot) *scheduler.Snapshot {
	for i := range s.Jobs {
		j := &s.Jobs[i]
		switch rapid.IntRange(0, 3).Draw(t, "group") {
		case 0:
			j.Group = "a"
		case 1:
			j.Group = "b"
		}
		if j.Group != "" && j.State == scheduler.Pending && rapid.Bool().Draw(t, "spreadGroup") {
			j.Placement = scheduler.Spread
		}
	}
	return s
}

// TestSpreadGroupsKeepInvariants runs invariants 1–3, 5 and 6 and
// determinism (7) on random snapshots whose jobs form groups: spreading
// replicas apart never breaks gang rules, delays a reservation or leaves
// a fitting job waiting, and does not depend on input order.
func TestSpreadGroupsKeepInvariants(t *testing.T) {
	forModes(t, func(t *rapid.T, cfg scheduler.Config) {
		s := withGroups(t, gen.Snapshot(t))
		d := step(t, cfg, s)
		if err := checkAll(newWorld(s, d, cfg), checkNoDoubleAllocation, checkGangs, checkNoJobLost,
			checkReservationsHold, checkWorkConserving); err != nil {
			t.Fatalf("%v\n%s", err, dump(s, d))
		}
		if d2 := step(t, cfg, gen.Shuffle(t, s)); !reflect.DeepEqual(d, d2) {
			t.Fatalf("decision depends on input order:\n%+v\nvs shuffled\n%+v", d, d2)
		}
	})
}
