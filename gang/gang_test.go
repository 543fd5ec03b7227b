package gang_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// held returns every node's held GPUs.
func held(ix *topology.Index) []topology.GPUSet {
	out := make([]topology.GPUSet, ix.NumNodes())
	for n := range out {
		out[n] = ix.Held(topology.NodeID(n))
	}
	return out
}

// capacityScan is the brute-force number of members of g GPUs that fit
// in domain d of level for class c.
func capacityScan(ix *topology.Index, level int, d topology.DomainID, c topology.Class, g int) int {
	total := 0
	for n := range topology.NodeID(ix.NumNodes()) {
		if ix.InClass(n, c) && (level == topology.ClusterLevel || ix.DomainOf(level, n) == d) {
			total += ix.Free(n) / g
		}
	}
	return total
}

// fitsScan reports whether some domain of level hosts r, by brute force.
func fitsScan(ix *topology.Index, r gang.Request, level int) bool {
	for d := range topology.DomainID(ix.NumDomains(level)) {
		if capacityScan(ix, level, d, r.Class, r.GPUsPerMember) >= r.Members {
			return true
		}
	}
	return false
}

// minNodes is the fewest nodes of the domain that host r: fill nodes by
// most members first.
func minNodes(ix *topology.Index, r gang.Request, level int, d topology.DomainID) int {
	var fits []int
	for n := range topology.NodeID(ix.NumNodes()) {
		if ix.InClass(n, r.Class) && (level == topology.ClusterLevel || ix.DomainOf(level, n) == d) {
			fits = append(fits, ix.Free(n)/r.GPUsPerMember)
		}
	}
	slices.Sort(fits)
	slices.Reverse(fits)
	left := r.Members
	for i, k := range fits {
		left -= k
		if left <= 0 {
			return i + 1
		}
	}
	return -1
}

func randomIndex(t *rapid.T) *topology.Index {
	c := gen.Cluster(t)
	ix, err := topology.NewIndex(&c)
	if err != nil {
		t.Fatal(err)
	}
	for n := range topology.NodeID(ix.NumNodes()) {
		if k := rapid.IntRange(0, ix.GPUs(n)).Draw(t, "busy"); k > 0 {
			_, _ = ix.Take(n, k)
		}
	}
	return ix
}

func randomRequest(t *rapid.T, ix *topology.Index) gang.Request {
	r := gang.NewRequest(rapid.IntRange(1, 16).Draw(t, "members"), rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus"))
	if ts := ix.Types(); rapid.Bool().Draw(t, "typed") {
		r.Class, _ = ix.Class(rapid.SampledFrom(ts).Draw(t, "type"))
	}
	if nl := ix.NumLevels(); nl > 0 {
		if req := rapid.IntRange(-1, nl-1).Draw(t, "required"); req >= 0 {
			r.Required = req
		}
		if pre := rapid.IntRange(-1, nl-1).Draw(t, "preferred"); pre >= 0 && (r.Required == gang.NoLevel || pre >= r.Required) {
			r.Preferred = pre
		}
	}
	return r
}

// TestPlaceWholeOrNothing: a placed gang has exactly its members, each
// on free GPUs of one node of its class, all inside one domain of its
// required level; a gang that is not placed changes nothing; and Place
// succeeds exactly when a brute-force scan finds a domain with room.
func TestPlaceWholeOrNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ix := randomIndex(t)
		r := randomRequest(t, ix)
		if r.GPUsPerMember > ix.MaxGPUs() {
			r.GPUsPerMember = ix.MaxGPUs()
		}
		scorer := rapid.SampledFrom([]binpack.Scorer{nil, binpack.Pack{}, binpack.Spread{}}).Draw(t, "scorer")
		outer := topology.ClusterLevel
		if r.Required != gang.NoLevel {
			outer = r.Required
		}
		want := fitsScan(ix, r, outer)
		before := held(ix)
		freeBefore := make([]topology.GPUSet, ix.NumNodes())
		for n := range freeBefore {
			freeBefore[n] = ix.FreeSet(topology.NodeID(n))
		}
		pl, out := gang.Place(ix, r, scorer)
		if (out == gang.Placed) != want {
			t.Fatalf("Place = %s, brute force says fits %v", out, want)
		}
		after := held(ix)
		if out != gang.Placed {
			if !slices.Equal(before, after) {
				t.Fatalf("failed Place (%s) changed the index", out)
			}
			if wantOut := gang.NoCapacity; r.Required != gang.NoLevel && fitsScan(ix, r, topology.ClusterLevel) {
				if out != gang.NoDomain {
					t.Fatalf("outcome %s, want %s: fits the cluster but no domain", out, gang.NoDomain)
				}
			} else if out != wantOut {
				t.Fatalf("outcome %s, want %s", out, wantOut)
			}
			return
		}
		members := 0
		taken := make([]topology.GPUSet, ix.NumNodes())
		for _, s := range pl.Slots {
			if s.GPUs.Len() != s.Members*r.GPUsPerMember || s.Members < 1 {
				t.Fatalf("slot %+v: %d GPUs for %d members of %d", s, s.GPUs.Len(), s.Members, r.GPUsPerMember)
			}
			if s.GPUs&^freeBefore[s.Node] != 0 {
				t.Fatalf("slot on %s uses GPUs %v that were not free", ix.Name(s.Node), s.GPUs.Indices())
			}
			if !ix.InClass(s.Node, r.Class) {
				t.Fatalf("slot on %s of the wrong class", ix.Name(s.Node))
			}
			if pl.Level != topology.ClusterLevel && ix.DomainOf(pl.Level, s.Node) != pl.Domain {
				t.Fatalf("slot on %s outside the placement's domain", ix.Name(s.Node))
			}
			if r.Required != gang.NoLevel && ix.DomainOf(r.Required, s.Node) != ix.DomainOf(r.Required, pl.Slots[0].Node) {
				t.Fatalf("slots on %s and %s in different domains of level %d", ix.Name(s.Node), ix.Name(pl.Slots[0].Node), r.Required)
			}
			taken[s.Node] |= s.GPUs
			members += s.Members
		}
		if members != r.Members {
			t.Fatalf("placed %d members, want %d", members, r.Members)
		}
		for n := range before {
			if after[n] != before[n]|taken[n] {
				t.Fatalf("node %s held %v, want %v", ix.Name(topology.NodeID(n)), after[n].Indices(), (before[n] | taken[n]).Indices())
			}
		}
		if r.Required != gang.NoLevel && (pl.Level < r.Required || (r.Preferred != gang.NoLevel && pl.Level > r.Preferred)) {
			t.Fatalf("placed at level %d, outside required %d .. preferred %d", pl.Level, r.Required, r.Preferred)
		}
		// Pack touches the fewest nodes of the domain it chose.
		if scorer != nil && scorer != (binpack.Pack{}) {
			return
		}
		pl.Release(ix)
		if best := minNodes(ix, r, pl.Level, pl.Domain); countNodes(pl) != best {
			t.Fatalf("pack used %d nodes, %d suffice", countNodes(pl), best)
		}
	})
}

func countNodes(pl gang.Placement) int {
	var ns []topology.NodeID
	for _, s := range pl.Slots {
		if !slices.Contains(ns, s.Node) {
			ns = append(ns, s.Node)
		}
	}
	return len(ns)
}

func TestPackFewestNodes(t *testing.T) {
	// Free: a 8, b 6, c 4, d 2, e 8. 5×2 fits on a (4 members) and then
	// on b (1): two nodes, the fullest that fits for the rest.
	c := &topology.Cluster{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		c.Nodes = append(c.Nodes, topology.Node{Name: n, GPUs: 8})
	}
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	for name, busy := range map[string]int{"b": 2, "c": 4, "d": 6} {
		n, _ := ix.Lookup(name)
		_, ok := ix.Take(n, busy)
		require.True(t, ok)
	}
	cases := []struct {
		members, gpus int
		nodes         []string
	}{
		{1, 2, []string{"d"}},
		{1, 5, []string{"b"}},
		{2, 4, []string{"a"}},
		{5, 2, []string{"a", "d"}},
		{3, 4, []string{"a", "c"}},
		{4, 8, nil},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dx%d", tc.members, tc.gpus), func(t *testing.T) {
			pl, out := gang.Place(ix, gang.NewRequest(tc.members, tc.gpus), nil)
			if tc.nodes == nil {
				require.Equal(t, gang.NoCapacity, out)
				return
			}
			require.Equal(t, gang.Placed, out)
			defer pl.Release(ix)
			var got []string
			for _, a := range pl.Allocation(ix) {
				got = append(got, a.Node)
			}
			require.Equal(t, tc.nodes, got)
		})
	}
}

// leafCluster has spine s0 with leaves l0 and l1, and spine s1 with leaf
// l0, four nodes of 8 GPUs per leaf.
func leafCluster(t *testing.T) *topology.Index {
	c := &topology.Cluster{Levels: []string{"spine", "leaf"}}
	for _, p := range [][2]string{{"s0", "l0"}, {"s0", "l1"}, {"s1", "l0"}} {
		for i := range 4 {
			c.Nodes = append(c.Nodes, topology.Node{
				Name: fmt.Sprintf("%s-%s-%d", p[0], p[1], i), GPUs: 8,
				Domains: map[string]string{"spine": p[0], "leaf": p[1]},
			})
		}
	}
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	return ix
}

func take(t *testing.T, ix *topology.Index, name string, k int) {
	n, ok := ix.Lookup(name)
	require.True(t, ok)
	_, ok = ix.Take(n, k)
	require.True(t, ok)
}

func TestBestFitDomain(t *testing.T) {
	cases := []struct {
		name  string
		busy  map[string]int
		req   gang.Request
		want  string // domain name at the required level
		level int
	}{
		{"fewest free wins", map[string]int{"s0-l1-0": 8, "s0-l1-1": 8}, gang.Request{Members: 2, GPUsPerMember: 8, Required: 1, Preferred: gang.NoLevel}, "s0/l1", 1},
		{"room beats fewest free", map[string]int{"s0-l1-0": 8, "s0-l1-1": 8, "s0-l1-2": 8}, gang.Request{Members: 2, GPUsPerMember: 8, Required: 1, Preferred: gang.NoLevel}, "s0/l0", 1},
		{"ties by name", nil, gang.Request{Members: 1, GPUsPerMember: 8, Required: 1, Preferred: gang.NoLevel}, "s0/l0", 1},
		{"equal free, more used wins", map[string]int{"s0-l1-0": 4, "s1-l0-0": 4}, gang.Request{Members: 1, GPUsPerMember: 2, Required: 1, Preferred: gang.NoLevel}, "s0/l1", 1},
		{"spine with fewest free", map[string]int{"s0-l0-0": 8}, gang.Request{Members: 4, GPUsPerMember: 8, Required: 0, Preferred: gang.NoLevel}, "s1", 0},
		{"capacity, not free GPUs, decides", map[string]int{"s0-l1-0": 4, "s0-l1-1": 4, "s0-l1-2": 4, "s0-l1-3": 4}, gang.Request{Members: 2, GPUsPerMember: 8, Required: 1, Preferred: gang.NoLevel}, "s0/l0", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := leafCluster(t)
			for n, k := range tc.busy {
				take(t, ix, n, k)
			}
			pl, out := gang.Place(ix, tc.req, nil)
			require.Equal(t, gang.Placed, out)
			require.Equal(t, tc.level, pl.Level)
			require.Equal(t, tc.want, ix.DomainName(pl.Level, pl.Domain))
		})
	}
}

func TestPreferredRelaxation(t *testing.T) {
	cases := []struct {
		name    string
		busy    []string // nodes taken whole
		req     gang.Request
		out     gang.Outcome
		level   int
		domains []string // leaf paths the gang lands in
	}{
		{"fits the preferred leaf", nil, gang.Request{Members: 4, GPUsPerMember: 8, Required: 0, Preferred: 1}, gang.Placed, 1, []string{"s0/l0"}},
		{"relaxes to the spine", []string{"s0-l0-0", "s0-l1-0"}, gang.Request{Members: 6, GPUsPerMember: 8, Required: 0, Preferred: 1}, gang.Placed, 0, []string{"s0/l0", "s0/l1"}},
		{"relaxes to the cluster when nothing is required", []string{"s0-l0-0", "s0-l0-1", "s0-l1-0", "s0-l1-1"}, gang.Request{Members: 5, GPUsPerMember: 8, Required: gang.NoLevel, Preferred: 1}, gang.Placed, topology.ClusterLevel, nil},
		{"never past the required level", []string{"s0-l0-0", "s0-l1-0", "s1-l0-0"}, gang.Request{Members: 4, GPUsPerMember: 8, Required: 1, Preferred: 1}, gang.NoDomain, 0, nil},
		{"preferred spine, required nothing", nil, gang.Request{Members: 9, GPUsPerMember: 8, Required: gang.NoLevel, Preferred: 0}, gang.Placed, topology.ClusterLevel, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := leafCluster(t)
			for _, n := range tc.busy {
				take(t, ix, n, 8)
			}
			before := held(ix)
			pl, out := gang.Place(ix, tc.req, nil)
			require.Equal(t, tc.out, out)
			if out != gang.Placed {
				require.Equal(t, before, held(ix))
				return
			}
			require.Equal(t, tc.level, pl.Level)
			if tc.domains == nil {
				return
			}
			var leaves []string
			for _, s := range pl.Slots {
				if l := ix.DomainName(1, ix.DomainOf(1, s.Node)); !slices.Contains(leaves, l) {
					leaves = append(leaves, l)
				}
			}
			slices.Sort(leaves)
			require.Equal(t, tc.domains, leaves)
		})
	}
}

// TestAllocationIsCanonical: a placement's allocation is the canonical
// form of its slots, one node at a time, whatever order the slots come
// in and however often a node repeats.
func TestAllocationIsCanonical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := topology.Uniform(rapid.IntRange(1, 6).Draw(t, "nodes"), 8, "H100")
		ix, err := topology.NewIndex(&c)
		require.NoError(t, err)
		var pl gang.Placement
		var want topology.Allocation
		for range rapid.IntRange(0, 8).Draw(t, "slots") {
			n := topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, "node"))
			s := topology.GPUSet(rapid.Uint64Range(1, 255).Draw(t, "gpus"))
			pl.Slots = append(pl.Slots, gang.Slot{Node: n, GPUs: s})
			want = append(want, topology.NodeGPUs{Node: ix.Name(n), GPUs: s.Indices()})
		}
		got := pl.Allocation(ix)
		want = want.Canonical()
		// Canonical keeps a GPU twice when two slots of a node repeat it;
		// a placement never does, and Allocation keeps it once.
		for i := range want {
			want[i].GPUs = slices.Compact(want[i].GPUs)
		}
		require.Equal(t, want, got)
		// The entries share one array of GPU indices; growing one must
		// not write into the next.
		for i := range got {
			got[i].GPUs = append(got[i].GPUs, -1)
		}
		for i := range got {
			require.Equal(t, want[i].GPUs, got[i].GPUs[:len(got[i].GPUs)-1])
		}
	})
}

// consolidating is a scorer whose scores say the opposite of Pack's but
// which asks for the fewest-nodes rule.
type consolidating struct{}

func (consolidating) Score(c binpack.Candidate) int64 { return int64(c.Free) }
func (consolidating) Consolidate() bool               { return true }

// TestScorerFuncSplitsWhatPackKeepsWhole pins the binpack.Consolidator
// doc: a function with Pack's scores places member by member and puts
// two members of 4 GPUs on the node with 4 free and on an empty one,
// where Pack puts both on the empty node; a Consolidator places as Pack
// does whatever its scores.
func TestScorerFuncSplitsWhatPackKeepsWhole(t *testing.T) {
	c := topology.Uniform(2, 8, "H100")
	for _, tc := range []struct {
		s    binpack.Scorer
		want string
	}{
		{binpack.Pack{}, "n01[0-7]"},
		{consolidating{}, "n01[0-7]"},
		{binpack.ScorerFunc(binpack.Pack{}.Score), "n00[4-7] n01[0-3]"},
	} {
		ix, err := topology.NewIndex(&c)
		require.NoError(t, err)
		require.NoError(t, ix.TakeSet(0, topology.FirstN(4)))
		pl, out := gang.Place(ix, gang.NewRequest(2, 4), tc.s)
		require.Equal(t, gang.Placed, out)
		require.Equal(t, tc.want, pl.Allocation(ix).String(), "%T", tc.s)
	}
}
