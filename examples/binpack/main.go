// Command binpack runs the bin-packing seed scenario and a two-level
// topology scenario, and prints the fragmentation each placement leaves.
//
// Part 1: inference pods of 4, 2, 1 and 1 GPUs on three empty nodes of 8
// GPUs. Pack puts all four on one node, which ends 100% used, and leaves
// two whole nodes free. Spread puts each pod on the emptiest node, so the
// pods touch all three nodes and every free GPU is stranded on a partly
// used node: no 8-GPU member fits anywhere.
//
// Part 2: 32 nodes in 2 spines × 2 leaves × 8 nodes × 8 GPUs, with some
// work already running, and training gangs that require or prefer one
// leaf. Each gang lands in the best-fit domain: the one with room for it
// that has the fewest free GPUs.
package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/internal/scenario"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

func main() { scenario.Main("binpack", run) }

var now = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

func run(w io.Writer) error {
	if err := seed(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return leaves(w)
}

// seed places the pods of 4, 2, 1 and 1 GPUs with pack, then with spread.
func seed(w io.Writer) error {
	var cluster topology.Cluster
	for i := range 3 {
		cluster.Nodes = append(cluster.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: 8, GPUType: "H100"})
	}
	fmt.Fprintln(w, "part 1: pods of 4, 2, 1 and 1 GPUs on 3 empty nodes × 8 GPUs")
	for _, mode := range []scheduler.PlacementMode{scheduler.Pack, scheduler.Spread} {
		snap := &scheduler.Snapshot{Now: now, Cluster: cluster}
		for i, g := range []int{4, 2, 1, 1} {
			snap.Jobs = append(snap.Jobs, scheduler.Job{
				ID: fmt.Sprintf("pod%d", i+1), Team: "serving", Tier: scheduler.P0, Kind: scheduler.Inference,
				Submitted: now.Add(time.Duration(i) * time.Second), Members: 1, GPUsPerMember: g,
				GPUType: "H100", Placement: mode,
			})
		}
		d, err := scheduler.New(scheduler.Config{}).Step(snap)
		if err != nil {
			return err
		}
		ix, err := apply(snap, d)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s:\n", mode)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range d.Placements {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.Job, gpus(p.Allocation.Count()), p.Allocation)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for n := range topology.NodeID(ix.NumNodes()) {
			used := ix.Healthy(n).Len() - ix.Free(n)
			fmt.Fprintf(w, "  node %s: %d/%d used (%d%%), %d idle\n", ix.Name(n), used, ix.GPUs(n), 100*used/ix.GPUs(n), ix.Free(n))
		}
		r := fragmentation(ix, nil)
		fmt.Fprintf(w, "  nodes touched %d; free %d; stranded on partly used nodes %d; 8-GPU members that fit %d; free GPUs wasted for them %d\n",
			r.Nodes-r.EmptyNodes, r.FreeGPUs, r.StrandedGPUs, r.MembersFitting, r.WastedForMember)
	}
	fmt.Fprintln(w, "\nBoth leave 24 - 8 = 16 GPUs free. Pack keeps them as two whole nodes;")
	fmt.Fprintln(w, "spread leaves them as 4 + 6 + 6 on three partly used nodes, where no")
	fmt.Fprintln(w, "8-GPU member fits.")
	return nil
}

// leaves runs gangs with leaf constraints on a 32-node, two-level cluster.
func leaves(w io.Writer) error {
	cluster := topology.Cluster{Levels: []string{"spine", "leaf"}}
	for s := range 2 {
		for l := range 2 {
			leaf := fmt.Sprintf("l%d", 2*s+l)
			for i := range 8 {
				cluster.Nodes = append(cluster.Nodes, topology.Node{
					Name: fmt.Sprintf("%s-n%d", leaf, i), GPUs: 8, GPUType: "H100",
					Domains: map[string]string{"spine": fmt.Sprintf("s%d", s), "leaf": leaf},
				})
			}
		}
	}
	snap := &scheduler.Snapshot{Now: now.Add(time.Hour), Cluster: cluster}
	running := func(id string, gpus int, nodes ...string) {
		j := scheduler.Job{ID: id, Team: "research", Tier: scheduler.P1, Members: len(nodes), GPUsPerMember: gpus,
			GPUType: "H100", TimeLimit: 24 * time.Hour, Submitted: now, Started: now, State: scheduler.Running}
		for _, n := range nodes {
			j.Allocation = append(j.Allocation, topology.NodeGPUs{Node: n, GPUs: topology.FirstN(gpus).Indices()})
		}
		snap.Jobs = append(snap.Jobs, j)
	}
	running("run-a", 8, "l0-n0", "l0-n1", "l0-n2")
	running("run-b", 4, "l1-n0", "l1-n1")
	running("run-c", 8, "l3-n0", "l3-n1", "l3-n2", "l3-n3", "l3-n4", "l3-n5")
	type gangSpec struct {
		id             string
		members, gpus  int
		required, pref string
		kind           scheduler.Kind
	}
	specs := []gangSpec{
		{"g1", 10, 8, "spine", "leaf", scheduler.Training},
		{"g2", 4, 8, "leaf", "", scheduler.Training},
		{"g3", 6, 8, "leaf", "", scheduler.Training},
		{"g4", 1, 4, "", "", scheduler.Inference},
		{"g5", 2, 8, "leaf", "", scheduler.Training},
	}
	for i, g := range specs {
		snap.Jobs = append(snap.Jobs, scheduler.Job{
			ID: g.id, Team: "research", Tier: scheduler.P1, Kind: g.kind, Members: g.members, GPUsPerMember: g.gpus,
			GPUType: "H100", TimeLimit: 12 * time.Hour, Submitted: now.Add(time.Duration(i) * time.Minute),
			Topology: scheduler.TopologySpec{Required: g.required, Preferred: g.pref},
		})
	}
	ix, err := topology.NewIndex(&cluster)
	if err != nil {
		return err
	}
	leaf, _ := ix.LevelOf("leaf")
	fmt.Fprintln(w, "part 2: 32 nodes = 2 spines × 2 leaves × 8 nodes × 8 GPUs")
	before, err := apply(&scheduler.Snapshot{Cluster: cluster, Jobs: snap.Jobs}, &scheduler.Decision{})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "running: run-a 3×8 in l0, run-b 2×4 in l1, run-c 6×8 in l3")
	if err := perLeaf(w, before, leaf); err != nil {
		return err
	}
	d, err := scheduler.New(scheduler.Config{}).Step(snap)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "gang\tshape\tconstraint\tlands in\tnodes")
	for _, g := range specs {
		c := "none"
		switch {
		case g.required != "" && g.pref != "":
			c = fmt.Sprintf("required %s, preferred %s", g.required, g.pref)
		case g.required != "":
			c = "required " + g.required
		}
		where, nodes := "", ""
		for _, p := range d.Placements {
			if p.Job == g.id {
				where, nodes = landing(ix, leaf, p.Allocation), plural(len(p.Allocation), "node")
			}
		}
		for _, r := range d.Reservations {
			if r.Job == g.id {
				where = fmt.Sprintf("reserved from %s in %s", r.Start.Format("15:04"), landing(ix, leaf, r.Allocation))
			}
		}
		for _, p := range d.Pending {
			if p.Job == g.id {
				where = "waits: " + p.Message
			}
		}
		fmt.Fprintf(tw, "%s\t%d×%d\t%s\t%s\t%s\n", g.id, g.members, g.gpus, c, where, nodes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	after, err := apply(snap, d)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\nafter:")
	if err := perLeaf(w, after, leaf); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ng1 fits no leaf (64 GPUs each), so it relaxes to the spine: s1, with 80")
	fmt.Fprintln(w, "free GPUs, is a tighter fit than s0 with 96; it fills l2 and the two")
	fmt.Fprintln(w, "empty nodes of l3. g2 and g3 then take the leaf with the fewest free")
	fmt.Fprintln(w, "GPUs that still has room: l0 (40 free) for g2, l1 (56 free) for g3.")
	fmt.Fprintln(w, "The 4-GPU pod g4 fills the free half of a partly used node rather than")
	fmt.Fprintln(w, "opening the last empty one. g5 needs two empty nodes in one leaf and")
	fmt.Fprintln(w, "only one is left, so it is reserved the nodes g1 frees at 13:00.")
	return nil
}

func gpus(n int) string { return plural(n, "GPU") }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// landing names the leaves of an allocation ("l0", or "l2 + l3").
func landing(ix *topology.Index, leaf int, a topology.Allocation) string {
	var names []string
	for _, s := range a {
		n, ok := ix.Lookup(s.Node)
		if !ok {
			names = append(names, "?"+s.Node)
			continue
		}
		name := ix.DomainName(leaf, ix.DomainOf(leaf, n))
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
	}
	return strings.Join(names, " + ")
}

// perLeaf prints the fragmentation of each leaf and of the cluster.
func perLeaf(w io.Writer, ix *topology.Index, leaf int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "domain\tfree\tempty nodes\tstranded\t8-GPU nodes\twasted for 8\t")
	for d := range topology.DomainID(ix.NumDomains(leaf)) {
		r := fragmentation(ix, func(n topology.NodeID) bool { return ix.DomainOf(leaf, n) == d })
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", ix.DomainName(leaf, d), r.FreeGPUs, r.EmptyNodes, r.StrandedGPUs, r.NodesFitting, r.WastedForMember)
	}
	r := fragmentation(ix, nil)
	fmt.Fprintf(tw, "cluster\t%d\t%d\t%d\t%d\t%d\t\n", r.FreeGPUs, r.EmptyNodes, r.StrandedGPUs, r.NodesFitting, r.WastedForMember)
	return tw.Flush()
}

// fragmentation measures the ready nodes of ix that keep reports true
// (all when keep is nil) against 8-GPU members.
func fragmentation(ix *topology.Index, keep func(topology.NodeID) bool) binpack.Report {
	var use []binpack.NodeUse
	for n := range topology.NodeID(ix.NumNodes()) {
		if ix.State(n) != topology.Ready || (keep != nil && !keep(n)) {
			continue
		}
		use = append(use, binpack.NodeUse{GPUs: ix.Healthy(n).Len(), Free: ix.Free(n)})
	}
	return binpack.Fragmentation(use, 8)
}

// apply builds the index of snap's cluster with the allocations of its
// running jobs and the placements of d held.
func apply(snap *scheduler.Snapshot, d *scheduler.Decision) (*topology.Index, error) {
	ix, err := topology.NewIndex(&snap.Cluster)
	if err != nil {
		return nil, err
	}
	var allocs []topology.Allocation
	for _, j := range snap.Jobs {
		if j.State != scheduler.Pending {
			allocs = append(allocs, j.Allocation)
		}
	}
	for _, p := range d.Placements {
		allocs = append(allocs, p.Allocation)
	}
	for _, a := range allocs {
		for _, s := range a {
			n, ok := ix.Lookup(s.Node)
			if !ok {
				return nil, fmt.Errorf("unknown node %q", s.Node)
			}
			if err := ix.TakeSet(n, topology.SetOf(s.GPUs...)); err != nil {
				return nil, err
			}
		}
	}
	return ix, nil
}
