package gang_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// answers lists every count and order an index answers, to compare two
// indexes that must agree.
func answers(ix *topology.Index) string {
	s := fmt.Sprint(held(ix))
	for l := topology.ClusterLevel; l < ix.NumLevels(); l++ {
		for c := range topology.Class(ix.NumClasses()) {
			for d := range topology.DomainID(ix.NumDomains(l)) {
				s += fmt.Sprint(l, c, d, ix.FreeGPUs(l, d, c), ix.UsedGPUs(l, d, c))
				for f := 0; f <= ix.MaxGPUs(); f++ {
					s += fmt.Sprint(slices.Collect(ix.Bucket(l, d, c, f)))
				}
			}
			if l >= 0 {
				s += fmt.Sprint(slices.Collect(ix.BestDomains(l, c, 0)))
			}
		}
	}
	return s
}

// smallRequest draws any valid request for ix, with Avoid, Distinct,
// SpreadLevel and a Chooser that picks by position.
func smallRequest(t *rapid.T, ix *topology.Index) gang.Request {
	// Mostly small members, so that gangs often fit.
	g := rapid.IntRange(1, ix.MaxGPUs()).Draw(t, "gpus")
	if rapid.Bool().Draw(t, "small") {
		g = min(g, 2)
	}
	r := gang.NewRequest(rapid.IntRange(1, 6).Draw(t, "members"), g)
	r.Class = topology.Class(rapid.IntRange(0, ix.NumClasses()-1).Draw(t, "class"))
	nl := ix.NumLevels()
	level := func(name string) int {
		if l := rapid.IntRange(-1, nl-1).Draw(t, name); l >= 0 {
			return l
		}
		return gang.NoLevel
	}
	r.Required, r.Preferred, r.SpreadLevel = level("required"), level("preferred"), level("spread")
	r.Distinct = rapid.Bool().Draw(t, "distinct")
	if rapid.Bool().Draw(t, "avoid") {
		avoid := make([]bool, ix.NumNodes())
		for n := range avoid {
			avoid[n] = rapid.IntRange(0, 3).Draw(t, "avoided") == 0
		}
		r.Avoid = func(n topology.NodeID) bool { return avoid[n] }
	}
	if rapid.Bool().Draw(t, "chooser") {
		k := rapid.IntRange(0, 4).Draw(t, "choice")
		r.Chooser = gang.ChooserFunc(func(_ *topology.Index, _ int, _ gang.Request, fits []topology.DomainID) topology.DomainID {
			if k == 4 {
				return -1 // outside the list: best fit
			}
			return fits[k%len(fits)]
		})
	}
	return r
}

// TestPlaceSmallAgreesWithBruteForce places random gangs on small random
// clusters and checks against brute force over the nodes: Place succeeds
// exactly when some domain of a level it may use has room on nodes of
// the gang's class it does not avoid; it lands in the level and domain
// the documented order names (levels from the preferred outward, domains
// best fit first, a chooser's first); every member sits on free healthy
// GPUs of a ready node of its class that it does not avoid; Distinct
// spreads over as many nodes (or SpreadLevel domains) as the domain
// offers; Pack uses the fewest nodes; the same request on a clone lands
// alike; and Release restores every answer of the index.
func TestPlaceSmallAgreesWithBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix := smallHeldIndex(t)
		for range 6 {
			placeSmall(t, ix.Clone(), false)
		}
	})
}

// TestPlaceSmallWithResources is TestPlaceSmallAgreesWithBruteForce on
// nodes that limit CPU and memory, some of them used, with requests that
// ask for some: a member fits a node only where its GPUs, CPU and memory
// all fit, the rules count members so, every slot holds its members' CPU
// and memory in the index, and no node that had room ends over its
// capacity. Planted once: fill not holding a slot's CPU (AddUse left
// out); the property failed at once.
func TestPlaceSmallWithResources(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix := resHeldIndex(t)
		for range 6 {
			placeSmall(t, ix.Clone(), true)
		}
	})
}

// resHeldIndex is smallHeldIndex on nodes that mostly limit CPU and
// memory, with some of both in use where GPUs are held.
func resHeldIndex(t *rapid.T) *topology.Index {
	c := gen.SmallCluster(t)
	for i := range c.Nodes {
		if rapid.IntRange(0, 3).Draw(t, "limitCPU") > 0 {
			c.Nodes[i].CPUMillis = rapid.IntRange(1, 16).Draw(t, "cpuCap") * 1000
		}
		if rapid.IntRange(0, 3).Draw(t, "limitMem") > 0 {
			c.Nodes[i].MemoryMiB = rapid.IntRange(1, 16).Draw(t, "memCap") * 1024
		}
	}
	ix := heldIndex(t, c)
	for n := range topology.NodeID(ix.NumNodes()) {
		if ix.Held(n) != 0 {
			ix.AddUse(n, int64(rapid.IntRange(0, 16).Draw(t, "usedCPU"))*1000, int64(rapid.IntRange(0, 16).Draw(t, "usedMem"))*1024)
		}
	}
	return ix
}

// placeSmall places one random request on ix and checks it; with res,
// the request asks for CPU and memory too.
func placeSmall(t *rapid.T, ix *topology.Index, res bool) {
	r := smallRequest(t, ix)
	if res {
		r.CPUMillis = int64(rapid.IntRange(0, 6).Draw(t, "cpu")) * 1000
		r.MemoryMiB = int64(rapid.IntRange(0, 6).Draw(t, "mem")) * 1024
	}
	// fit is how many members fit free GPUs, CPU and memory.
	fit := func(free int, cpu, mem int64) int {
		k := free / r.GPUsPerMember
		if r.CPUMillis > 0 {
			k = min(k, int(min(cpu/r.CPUMillis, 1<<20)))
		}
		if r.MemoryMiB > 0 {
			k = min(k, int(min(mem/r.MemoryMiB, 1<<20)))
		}
		return k
	}
	membersOn := func(ix *topology.Index, n topology.NodeID) int {
		return fit(ix.Free(n), ix.FreeCPU(n), ix.FreeMemory(n))
	}
	scorers := []binpack.Scorer{nil, binpack.Pack{}, binpack.Spread{},
		binpack.ScorerFunc(func(c binpack.Candidate) int64 { return int64(len(c.GPUType)*3 - c.Free) })}
	si := rapid.IntRange(0, len(scorers)-1).Draw(t, "scorer")
	scorer := scorers[si]
	consolidate := si < 2
	g := r.GPUsPerMember

	usable := func(n topology.NodeID) bool {
		return ix.State(n) == topology.Ready && ix.InClass(n, r.Class) && (r.Avoid == nil || !r.Avoid(n))
	}
	in := func(l int, d topology.DomainID, n topology.NodeID) bool {
		return l == topology.ClusterLevel || ix.DomainOf(l, n) == d
	}
	// room is the brute-force count of members that fit in domain d
	// of level l, on every node of the class or only on usable ones.
	room := func(l int, d topology.DomainID, all bool) int {
		k := 0
		for n := range topology.NodeID(ix.NumNodes()) {
			if in(l, d, n) && ix.InClass(n, r.Class) && (all || usable(n)) {
				k += membersOn(ix, n)
			}
		}
		return k
	}
	// The levels tried, then per level the domains in the documented
	// order; the first with usable room is where the gang goes.
	var levels []int
	stop := topology.ClusterLevel
	if r.Required != gang.NoLevel {
		stop = r.Required
	}
	start := stop
	if r.Preferred != gang.NoLevel && r.Preferred > start {
		start = r.Preferred
	}
	for l := start; l >= stop; l-- {
		levels = append(levels, l)
	}
	wantLevel, wantDom, found := 0, topology.DomainID(0), false
	for _, l := range levels {
		type dom struct {
			id         topology.DomainID
			free, used int
		}
		var fits []dom
		for d := range topology.DomainID(ix.NumDomains(l)) {
			if room(l, d, true) < r.Members {
				continue
			}
			x := dom{id: d}
			for n := range topology.NodeID(ix.NumNodes()) {
				if in(l, d, n) && ix.InClass(n, r.Class) && ix.State(n) == topology.Ready {
					x.free += ix.Free(n)
					x.used += (ix.Held(n) & ix.Healthy(n)).Len()
				}
			}
			fits = append(fits, x)
		}
		slices.SortFunc(fits, func(a, b dom) int {
			return cmp.Or(cmp.Compare(a.free, b.free), cmp.Compare(b.used, a.used), cmp.Compare(a.id, b.id))
		})
		if r.Chooser != nil && l != topology.ClusterLevel && len(fits) > 0 {
			ids := make([]topology.DomainID, len(fits))
			for i, x := range fits {
				ids[i] = x.id
			}
			i := max(slices.Index(ids, r.Chooser.Choose(ix, l, r, ids)), 0)
			fits = append(append([]dom{fits[i]}, fits[:i]...), fits[i+1:]...)
		}
		for _, x := range fits {
			if room(l, x.id, false) >= r.Members {
				wantLevel, wantDom, found = l, x.id, true
				break
			}
		}
		if found {
			break
		}
	}

	before := answers(ix)
	cl := ix.Clone()
	pl, out := gang.Place(ix, r, scorer)
	if found != (out == gang.Placed) {
		t.Fatalf("Place = %s, brute force finds a domain: %v", out, found)
	}
	if !found {
		want := gang.NoCapacity
		if r.Required != gang.NoLevel && room(topology.ClusterLevel, 0, false) >= r.Members {
			want = gang.NoDomain
		}
		if out != want {
			t.Fatalf("outcome %s, want %s", out, want)
		}
		if answers(ix) != before {
			t.Fatal("a failed Place changed the index")
		}
		return
	}
	if pl.Level != wantLevel || pl.Domain != wantDom {
		t.Fatalf("placed in level %d domain %d, want level %d domain %d", pl.Level, pl.Domain, wantLevel, wantDom)
	}
	members := 0
	taken := make([]topology.GPUSet, ix.NumNodes())
	units := map[topology.DomainID]bool{}
	for _, s := range pl.Slots {
		if !usable(s.Node) || !in(pl.Level, pl.Domain, s.Node) {
			t.Fatalf("slot on %s: not usable or outside the domain", ix.Name(s.Node))
		}
		if s.Members < 1 || s.GPUs.Len() != s.Members*g || s.GPUs&^cl.FreeSet(s.Node) != 0 || s.GPUs&taken[s.Node] != 0 {
			t.Fatalf("slot %+v: wrong or unfree GPUs", s)
		}
		if s.CPUMillis != int64(s.Members)*r.CPUMillis || s.MemoryMiB != int64(s.Members)*r.MemoryMiB {
			t.Fatalf("slot %+v: CPU or memory not its members'", s)
		}
		taken[s.Node] |= s.GPUs
		members += s.Members
		if r.SpreadLevel != gang.NoLevel {
			units[ix.DomainOf(r.SpreadLevel, s.Node)] = true
		} else {
			units[topology.DomainID(s.Node)] = true
		}
	}
	if members != r.Members {
		t.Fatalf("%d members placed, want %d", members, r.Members)
	}
	for n := range topology.NodeID(ix.NumNodes()) {
		if ix.Held(n) != cl.Held(n)|taken[n] {
			t.Fatalf("node %s holds %v, want %v", ix.Name(n), ix.Held(n).Indices(), (cl.Held(n) | taken[n]).Indices())
		}
		var cpu, mem int64
		for _, s := range pl.Slots {
			if s.Node == n {
				cpu, mem = cpu+s.CPUMillis, mem+s.MemoryMiB
			}
		}
		if ix.UsedCPU(n) != cl.UsedCPU(n)+cpu*btoi(ix.Limited()) || ix.UsedMemory(n) != cl.UsedMemory(n)+mem*btoi(ix.Limited()) {
			t.Fatalf("node %s uses %d CPU %d memory, want %d and %d more than %d and %d", ix.Name(n), ix.UsedCPU(n), ix.UsedMemory(n), cpu, mem, cl.UsedCPU(n), cl.UsedMemory(n))
		}
		// Invariant 11: no node over-committed by what the gang added.
		if (cpu > 0 && ix.UsedCPU(n) > ix.CPUCapacity(n)) || (mem > 0 && ix.UsedMemory(n) > ix.MemoryCapacity(n)) {
			t.Fatalf("node %s over-committed: CPU %d of %d, memory %d of %d", ix.Name(n), ix.UsedCPU(n), ix.CPUCapacity(n), ix.UsedMemory(n), ix.MemoryCapacity(n))
		}
	}
	if r.Distinct && !consolidate {
		offered := map[topology.DomainID]bool{}
		for n := range topology.NodeID(ix.NumNodes()) {
			if usable(n) && in(pl.Level, pl.Domain, n) && membersOn(cl, n) >= 1 {
				if r.SpreadLevel != gang.NoLevel {
					offered[ix.DomainOf(r.SpreadLevel, n)] = true
				} else {
					offered[topology.DomainID(n)] = true
				}
			}
		}
		if want := min(r.Members, len(offered)); len(units) != want {
			t.Fatalf("distinct gang over %d units, %d could be used", len(units), want)
		}
	}
	if consolidate {
		var per []int
		for n := range topology.NodeID(ix.NumNodes()) {
			if usable(n) && in(pl.Level, pl.Domain, n) {
				per = append(per, membersOn(cl, n))
			}
		}
		slices.Sort(per)
		slices.Reverse(per)
		need, left := 0, r.Members
		for ; left > 0; need++ {
			left -= per[need]
		}
		if got := countNodes(pl); got != need {
			t.Fatalf("pack used %d nodes, %d suffice", got, need)
		}
	}
	// The members, one by one, go to the documented node: replay the
	// rules over the nodes and compare the sequence of nodes taken.
	var got, want []topology.NodeID
	for _, s := range pl.Slots {
		for range s.Members {
			got = append(got, s.Node)
		}
	}
	free := make([]int, ix.NumNodes())
	fcpu, fmem := make([]int64, ix.NumNodes()), make([]int64, ix.NumNodes())
	typ := make([]string, ix.NumNodes())
	for n := range free {
		free[n] = cl.Free(topology.NodeID(n))
		fcpu[n], fmem[n] = cl.FreeCPU(topology.NodeID(n)), cl.FreeMemory(topology.NodeID(n))
		c := ix.NodeClass(topology.NodeID(n))
		_, typ[n] = ix.TypeClass(max(int(c)-1, 0))
	}
	for left := r.Members; left > 0; {
		var cands []topology.NodeID
		for n := range topology.NodeID(ix.NumNodes()) {
			if usable(n) && in(pl.Level, pl.Domain, n) && fit(free[n], fcpu[n], fmem[n]) >= 1 {
				cands = append(cands, n)
			}
		}
		best, k := topology.NodeID(-1), 1
		// better reports whether node a goes before node b: by score
		// (or members hosted), then fewer free GPUs, type, lowest ID.
		var better func(a, b topology.NodeID) bool
		if consolidate {
			k = 0
			for _, n := range cands {
				k = max(k, min(fit(free[n], fcpu[n], fmem[n]), left))
			}
			better = func(a, b topology.NodeID) bool {
				ka, kb := min(fit(free[a], fcpu[a], fmem[a]), k), min(fit(free[b], fcpu[b], fmem[b]), k)
				if ka != kb {
					return ka > kb
				}
				return free[a] < free[b] || free[a] == free[b] && a < b
			}
		} else {
			if r.Distinct && len(want) > 0 {
				var fresh []topology.NodeID
				for _, n := range cands {
					ok := true
					for _, m := range want {
						if m == n || r.SpreadLevel != gang.NoLevel && ix.DomainOf(r.SpreadLevel, m) == ix.DomainOf(r.SpreadLevel, n) {
							ok = false
						}
					}
					if ok {
						fresh = append(fresh, n)
					}
				}
				if len(fresh) > 0 {
					cands = fresh
				}
			}
			sc := scorer
			better = func(a, b topology.NodeID) bool {
				sa := sc.Score(binpack.Candidate{Free: free[a], Request: g, GPUType: typ[a]})
				sb := sc.Score(binpack.Candidate{Free: free[b], Request: g, GPUType: typ[b]})
				if sa != sb {
					return sa > sb
				}
				if free[a] != free[b] {
					return free[a] < free[b]
				}
				if typ[a] != typ[b] {
					return typ[a] < typ[b]
				}
				return a < b
			}
		}
		for _, n := range cands {
			if best < 0 || better(n, best) {
				best = n
			}
		}
		if best < 0 {
			t.Fatalf("replay found no node for member %d", r.Members-left)
		}
		for range k {
			want = append(want, best)
		}
		free[best] -= k * g
		if fcpu[best] != topology.Unlimited {
			fcpu[best] -= int64(k) * r.CPUMillis
		}
		if fmem[best] != topology.Unlimited {
			fmem[best] -= int64(k) * r.MemoryMiB
		}
		left -= k
	}
	if !slices.Equal(got, want) {
		t.Fatalf("members on nodes %v, the rules put them on %v", got, want)
	}
	alloc := pl.Allocation(ix)
	var slots topology.Allocation
	for _, s := range pl.Slots {
		slots = append(slots, topology.NodeGPUs{Node: ix.Name(s.Node), GPUs: s.GPUs.Indices()})
	}
	if fmt.Sprint(alloc) != fmt.Sprint(slots.Canonical()) {
		t.Fatalf("Allocation %v, slots %v", alloc, slots.Canonical())
	}
	pc, outc := gang.Place(cl, r, scorer)
	if outc != out || fmt.Sprint(pc.Allocation(cl)) != fmt.Sprint(pl.Allocation(ix)) {
		t.Fatalf("on a clone: %s %v, want %s %v", outc, pc.Allocation(cl), out, pl.Allocation(ix))
	}
	pl.Release(ix)
	if answers(ix) != before {
		t.Fatal("Release did not restore the index")
	}
}

// TestFillSmallAgreesWithBruteForce: Fill into any domain succeeds
// exactly when the domain's usable nodes have room for the gang.
func TestFillSmallAgreesWithBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix := smallHeldIndex(t)
		r := smallRequest(t, ix)
		l := rapid.IntRange(topology.ClusterLevel, ix.NumLevels()-1).Draw(t, "level")
		d := topology.DomainID(rapid.IntRange(0, ix.NumDomains(l)-1).Draw(t, "domain"))
		scorer := rapid.SampledFrom([]binpack.Scorer{nil, binpack.Spread{}}).Draw(t, "scorer")
		k := 0
		for n := range topology.NodeID(ix.NumNodes()) {
			if ix.InClass(n, r.Class) && (l == topology.ClusterLevel || ix.DomainOf(l, n) == d) && (r.Avoid == nil || !r.Avoid(n)) {
				k += ix.Free(n) / r.GPUsPerMember
			}
		}
		before := answers(ix)
		pl, ok := gang.Fill(ix, r, l, d, scorer)
		if ok != (k >= r.Members) {
			t.Fatalf("Fill = %v, room for %d of %d members", ok, k, r.Members)
		}
		if ok {
			pl.Release(ix)
		}
		if answers(ix) != before {
			t.Fatal("Fill then Release changed the index")
		}
	})
}

// smallHeldIndex indexes a small random cluster and holds random GPUs on
// about half its nodes.
func smallHeldIndex(t *rapid.T) *topology.Index { return heldIndex(t, gen.SmallCluster(t)) }

// heldIndex indexes c and holds random GPUs on about half its nodes.
func heldIndex(t *rapid.T, c topology.Cluster) *topology.Index {
	ix, err := topology.NewIndex(&c)
	if err != nil {
		t.Fatal(err)
	}
	for n := range topology.NodeID(ix.NumNodes()) {
		if rapid.Bool().Draw(t, "idle") {
			continue
		}
		s := topology.GPUSet(rapid.Uint64Range(0, uint64(topology.FirstN(ix.GPUs(n)))).Draw(t, "held"))
		if err := ix.TakeSet(n, s); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
