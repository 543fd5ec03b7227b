package topology_test

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

func flat(gpus ...int) *topology.Cluster {
	c := &topology.Cluster{}
	for i, g := range gpus {
		c.Nodes = append(c.Nodes, topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: g})
	}
	return c
}

func TestIndexQueries(t *testing.T) {
	c := flat(8, 8, 4, 4)
	c.Nodes[3].Unhealthy = []int{0}
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	n0, _ := ix.Lookup("n0")
	n2, _ := ix.Lookup("n2")
	n3, _ := ix.Lookup("n3")
	_, ok := ix.Take(n0, 5)
	require.True(t, ok)
	// Free: n0 3, n1 8, n2 4, n3 3 (one unhealthy).
	cases := []struct {
		g                  int
		capacity           int
		fullest, emptiest  string
		fullestOK, emptyOK bool
	}{
		{1, 18, "n0", "n1", true, true},
		{2, 8, "n0", "n1", true, true},
		{4, 3, "n2", "n1", true, true},
		{5, 1, "n1", "n1", true, true},
		{8, 1, "n1", "n1", true, true},
		{9, 0, "", "", false, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.g), func(t *testing.T) {
			require.Equal(t, tc.capacity, ix.Capacity(topology.ClusterLevel, 0, topology.AnyType, tc.g))
			n, ok := ix.Fullest(topology.ClusterLevel, 0, topology.AnyType, tc.g)
			require.Equal(t, tc.fullestOK, ok)
			if ok {
				require.Equal(t, ix.Free(n), ix.Free(mustLookup(t, ix, tc.fullest)))
			}
			n, ok = ix.Emptiest(topology.ClusterLevel, 0, topology.AnyType, tc.g)
			require.Equal(t, tc.emptyOK, ok)
			if ok {
				require.Equal(t, tc.emptiest, ix.Name(n))
			}
		})
	}
	require.Equal(t, 18, ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType))
	require.Equal(t, 5, ix.UsedGPUs(topology.ClusterLevel, 0, topology.AnyType))
	require.Equal(t, 2, ix.NodesWithFree(topology.ClusterLevel, 0, topology.AnyType, 3))
	require.False(t, ix.Healthy(n3).Has(0))

	// TakeSet refuses held and out-of-range GPUs and changes nothing.
	require.Error(t, ix.TakeSet(n0, topology.SetOf(4, 5)))
	require.Error(t, ix.TakeSet(n2, topology.SetOf(4)))
	require.Equal(t, topology.FirstN(5), ix.Held(n0))
	// An unhealthy GPU may be held, and holding it frees nothing less.
	require.NoError(t, ix.TakeSet(n3, topology.SetOf(0)))
	require.Equal(t, 3, ix.Free(n3))
	ix.Release(n0, topology.SetOf(0, 7))
	require.Equal(t, topology.SetOf(1, 2, 3, 4), ix.Held(n0))
}

func TestIndexNodeStates(t *testing.T) {
	c := flat(4, 4, 4)
	c.Nodes[1].State = topology.Draining
	c.Nodes[2].State = topology.Down
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	require.Equal(t, 4, ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType))
	require.Equal(t, 1, ix.Capacity(topology.ClusterLevel, 0, topology.AnyType, 4))
	n1 := mustLookup(t, ix, "n1")
	_, ok := ix.Take(n1, 1)
	require.False(t, ok, "a draining node takes no new work")
	require.NoError(t, ix.TakeSet(n1, topology.SetOf(0, 1)), "a draining node's GPUs can be held")
	require.Equal(t, 0, ix.UsedGPUs(topology.ClusterLevel, 0, topology.AnyType))
}

func TestIndexDomainsAndClasses(t *testing.T) {
	c := &topology.Cluster{Levels: []string{"spine", "leaf"}}
	add := func(name, spine, leaf, typ string) {
		c.Nodes = append(c.Nodes, topology.Node{Name: name, GPUs: 8, GPUType: typ, Domains: map[string]string{"spine": spine, "leaf": leaf}})
	}
	add("a", "s0", "l0", "H100")
	add("b", "s0", "l1", "H100")
	add("c", "s1", "l0", "A100")
	add("d", "s1", "l0", "H100")
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	require.Equal(t, 3, ix.NumDomains(1), "leaf names repeat across spines: s0/l0, s0/l1, s1/l0")
	require.Equal(t, "s1/l0", ix.DomainName(1, ix.DomainOf(1, mustLookup(t, ix, "c"))))
	h, ok := ix.Class("H100")
	require.True(t, ok)
	_, ok = ix.Class("V100")
	require.False(t, ok)
	s1 := ix.DomainOf(0, mustLookup(t, ix, "c"))
	require.Equal(t, 16, ix.FreeGPUs(0, s1, topology.AnyType))
	require.Equal(t, 8, ix.FreeGPUs(0, s1, h))
	_, _ = ix.Take(mustLookup(t, ix, "a"), 6)
	// Leaves by best fit: s0/l0 (2 free), then s0/l1 and s1/l0 (16), by name.
	var got []string
	for d := range ix.BestDomains(1, topology.AnyType, 1) {
		got = append(got, ix.DomainName(1, d))
	}
	require.Equal(t, []string{"s0/l0", "s0/l1", "s1/l0"}, got)
	got = got[:0]
	for d := range ix.BestDomains(1, topology.AnyType, 3) {
		got = append(got, ix.DomainName(1, d))
	}
	require.Equal(t, []string{"s0/l1", "s1/l0"}, got)
}

// TestDomainsWithSlashesInNames: a domain is the sequence of names down
// to it, not its "/"-joined name. Spine "x/y" with leaf "z" and spine "x"
// with leaf "y/z" are two leaves, though both are named "x/y/z".
func TestDomainsWithSlashesInNames(t *testing.T) {
	c := &topology.Cluster{Levels: []string{"spine", "leaf"}, Nodes: []topology.Node{
		{Name: "a", GPUs: 8, Domains: map[string]string{"spine": "x/y", "leaf": "z"}},
		{Name: "b", GPUs: 8, Domains: map[string]string{"spine": "x", "leaf": "y/z"}},
		{Name: "c", GPUs: 8, Domains: map[string]string{"spine": "x", "leaf": "y/z"}},
	}}
	ix, err := topology.NewIndex(c)
	require.NoError(t, err)
	a, b, cn := mustLookup(t, ix, "a"), mustLookup(t, ix, "b"), mustLookup(t, ix, "c")
	require.Equal(t, 2, ix.NumDomains(1))
	require.NotEqual(t, ix.DomainOf(1, a), ix.DomainOf(1, b), "two leaves named x/y/z")
	require.Equal(t, ix.DomainOf(1, b), ix.DomainOf(1, cn))
	require.Equal(t, "x/y/z", ix.DomainName(1, ix.DomainOf(1, a)))
	require.Equal(t, "x/y/z", ix.DomainName(1, ix.DomainOf(1, b)))
	require.Equal(t, 8, ix.FreeGPUs(1, ix.DomainOf(1, a), topology.AnyType))
	require.Equal(t, 16, ix.FreeGPUs(1, ix.DomainOf(1, b), topology.AnyType))
	// A gang that must stay in one leaf cannot use a's GPUs with b's.
	require.Equal(t, 16, ix.Capacity(1, ix.DomainOf(1, b), topology.AnyType, 1))

	// Leaves that share a name are ordered by their sequences of names:
	// spine "s" comes before spine "s/b", whatever the names' lengths.
	for _, s := range []string{"s", "sssssssss", "ssssssssssss"} {
		c := &topology.Cluster{Levels: []string{"spine", "leaf"}, Nodes: []topology.Node{
			{Name: "a", GPUs: 1, Domains: map[string]string{"spine": s + "/b", "leaf": "c"}},
			{Name: "b", GPUs: 1, Domains: map[string]string{"spine": s, "leaf": "b/c"}},
		}}
		ix, err := topology.NewIndex(c)
		require.NoError(t, err)
		require.Equal(t, topology.DomainID(0), ix.DomainOf(1, mustLookup(t, ix, "b")), "spine %q", s)
		require.Equal(t, topology.DomainID(1), ix.DomainOf(1, mustLookup(t, ix, "a")), "spine %q", s)
	}
}

func mustLookup(t require.TestingT, ix *topology.Index, name string) topology.NodeID {
	n, ok := ix.Lookup(name)
	require.True(t, ok, name)
	return n
}

// model is the brute-force view of an index: per node name, its healthy
// and held GPUs.
type model struct {
	c       *topology.Cluster
	healthy map[string]topology.GPUSet
	held    map[string]topology.GPUSet
}

func newModel(c *topology.Cluster) *model {
	m := &model{c: c, healthy: map[string]topology.GPUSet{}, held: map[string]topology.GPUSet{}}
	for _, n := range c.Nodes {
		m.healthy[n.Name] = topology.FirstN(n.GPUs) &^ topology.SetOf(n.Unhealthy...)
	}
	return m
}

func (m *model) free(n *topology.Node) topology.GPUSet {
	if n.State != topology.Ready {
		return 0
	}
	return m.healthy[n.Name] &^ m.held[n.Name]
}

func path(c *topology.Cluster, n *topology.Node, level int) string {
	var p []string
	for l := 0; l <= level; l++ {
		p = append(p, n.Domains[c.Levels[l]])
	}
	return strings.Join(p, "/")
}

// in lists the ready nodes of class c in domain d of level.
func (m *model) in(ix *topology.Index, level int, d topology.DomainID, c topology.Class) []*topology.Node {
	var out []*topology.Node
	for i := range m.c.Nodes {
		n := &m.c.Nodes[i]
		if n.State != topology.Ready {
			continue
		}
		if level >= 0 && path(m.c, n, level) != ix.DomainName(level, d) {
			continue
		}
		if cls, _ := ix.Class(n.GPUType); c != topology.AnyType && cls != c {
			continue
		}
		out = append(out, n)
	}
	return out
}

// check compares every query of ix with a scan of the model.
func (m *model) check(t *rapid.T, ix *topology.Index) {
	G := ix.MaxGPUs()
	classes := []topology.Class{topology.AnyType}
	if ts := ix.Types(); len(ts) > 1 {
		for _, ty := range ts {
			c, _ := ix.Class(ty)
			classes = append(classes, c)
		}
	}
	for i := range m.c.Nodes {
		n := &m.c.Nodes[i]
		id := mustLookup(t, ix, n.Name)
		if got, want := ix.FreeSet(id), m.free(n); got != want {
			t.Fatalf("%s: FreeSet %v, want %v", n.Name, got.Indices(), want.Indices())
		}
		for l := range ix.NumLevels() {
			if got, want := ix.DomainName(l, ix.DomainOf(l, id)), path(m.c, n, l); got != want {
				t.Fatalf("%s: domain %q at level %d, want %q", n.Name, got, l, want)
			}
		}
	}
	for level := topology.ClusterLevel; level < ix.NumLevels(); level++ {
		for _, c := range classes {
			type dom struct {
				id         topology.DomainID
				free, used int
			}
			var doms []dom
			for d := range topology.DomainID(ix.NumDomains(level)) {
				nodes := m.in(ix, level, d, c)
				free, used := 0, 0
				counts := make([]int, G+1)
				for _, n := range nodes {
					f := m.free(n).Len()
					free += f
					used += (m.healthy[n.Name] & m.held[n.Name]).Len()
					counts[f]++
				}
				doms = append(doms, dom{d, free, used})
				where := fmt.Sprintf("level %d domain %q class %d", level, ix.DomainName(level, d), c)
				if got := ix.FreeGPUs(level, d, c); got != free {
					t.Fatalf("%s: FreeGPUs %d, want %d", where, got, free)
				}
				if got := ix.UsedGPUs(level, d, c); got != used {
					t.Fatalf("%s: UsedGPUs %d, want %d", where, got, used)
				}
				for f := 0; f <= G; f++ {
					if got := ix.NodesWithFree(level, d, c, f); got != counts[f] {
						t.Fatalf("%s: NodesWithFree(%d) %d, want %d", where, f, got, counts[f])
					}
				}
				for g := 1; g <= G; g++ {
					capacity, lo, hi := 0, -1, -1
					for _, n := range nodes {
						f := m.free(n).Len()
						capacity += f / g
						if f >= g && (lo < 0 || f < lo) {
							lo = f
						}
						if f >= g && f > hi {
							hi = f
						}
					}
					if got := ix.Capacity(level, d, c, g); got != capacity {
						t.Fatalf("%s: Capacity(%d) %d, want %d", where, g, got, capacity)
					}
					n, ok := ix.Fullest(level, d, c, g)
					if ok != (lo >= 0) || ok && ix.Free(n) != lo {
						t.Fatalf("%s: Fullest(%d) = %d free (ok %v), want %d", where, g, ix.Free(n), ok, lo)
					}
					if ok && !slices.ContainsFunc(nodes, func(x *topology.Node) bool { return x.Name == ix.Name(n) }) {
						t.Fatalf("%s: Fullest(%d) = %s, outside the domain or class", where, g, ix.Name(n))
					}
					n, ok = ix.Emptiest(level, d, c, g)
					if ok != (hi >= 0) || ok && ix.Free(n) != hi {
						t.Fatalf("%s: Emptiest(%d) = %d free (ok %v), want %d", where, g, ix.Free(n), ok, hi)
					}
				}
			}
			if level == topology.ClusterLevel {
				continue
			}
			slices.SortFunc(doms, func(a, b dom) int {
				return cmp.Or(cmp.Compare(a.free, b.free), cmp.Compare(b.used, a.used), cmp.Compare(a.id, b.id))
			})
			for _, need := range []int{0, 1, 4, 8, 20} {
				var want, got []topology.DomainID
				for _, d := range doms {
					if d.free >= need {
						want = append(want, d.id)
					}
				}
				for d := range ix.BestDomains(level, c, need) {
					got = append(got, d)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("level %d class %d: BestDomains(%d) = %v, want %v", level, c, need, got, want)
				}
			}
		}
	}
}

// op is one random change, applied alike to an index and the model.
type op struct {
	kind string
	node string
	k    int
	set  topology.GPUSet
}

func drawOp(t *rapid.T, c *topology.Cluster) op {
	n := rapid.SampledFrom(c.Nodes).Draw(t, "node")
	o := op{kind: rapid.SampledFrom([]string{"take", "takeSet", "release"}).Draw(t, "op"), node: n.Name}
	o.k = rapid.IntRange(0, n.GPUs+1).Draw(t, "k")
	o.set = topology.GPUSet(rapid.Uint64Range(0, uint64(topology.FirstN(n.GPUs+1))).Draw(t, "set"))
	return o
}

func (m *model) apply(t *rapid.T, ix *topology.Index, o op) {
	id := mustLookup(t, ix, o.node)
	var node *topology.Node
	for i := range m.c.Nodes {
		if m.c.Nodes[i].Name == o.node {
			node = &m.c.Nodes[i]
		}
	}
	switch o.kind {
	case "take":
		free := m.free(node)
		got, ok := ix.Take(id, o.k)
		if want := o.k >= 1 && free.Len() >= o.k; ok != want {
			t.Fatalf("Take(%s, %d) ok %v, want %v (free %v)", o.node, o.k, ok, want, free.Indices())
		}
		if ok {
			if want := free.Lowest(o.k); got != want {
				t.Fatalf("Take(%s, %d) = %v, want %v", o.node, o.k, got.Indices(), want.Indices())
			}
			m.held[o.node] |= got
		}
	case "takeSet":
		err := ix.TakeSet(id, o.set)
		bad := o.set&^topology.FirstN(node.GPUs) != 0 || o.set&m.held[o.node] != 0
		if (err != nil) != bad {
			t.Fatalf("TakeSet(%s, %v): error %v, want failure %v", o.node, o.set.Indices(), err, bad)
		}
		if err == nil {
			m.held[o.node] |= o.set
		}
	case "release":
		ix.Release(id, o.set)
		m.held[o.node] &^= o.set
	}
}

// TestIndexAgreesWithScan checks every query against a brute-force scan
// after random changes, on an index built from the cluster's nodes in
// their order and on one built from them shuffled: the two agree on IDs
// by name and on every answer.
func TestIndexAgreesWithScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := gen.Cluster(t)
		ix, err := topology.NewIndex(&c)
		if err != nil {
			t.Fatal(err)
		}
		sh := c
		sh.Nodes = rapid.Permutation(c.Nodes).Draw(t, "shuffled")
		ix2, err := topology.NewIndex(&sh)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range c.Nodes {
			if a, b := mustLookup(t, ix, n.Name), mustLookup(t, ix2, n.Name); a != b {
				t.Fatalf("node %s: ID %d, %d when shuffled", n.Name, a, b)
			}
		}
		m, m2 := newModel(&c), newModel(&sh)
		m.check(t, ix)
		for range rapid.IntRange(1, 40).Draw(t, "ops") {
			o := drawOp(t, &c)
			m.apply(t, ix, o)
			m2.apply(t, ix2, o)
			if rapid.IntRange(0, 4).Draw(t, "checkNow") == 0 {
				m.check(t, ix)
			}
		}
		m.check(t, ix)
		m2.check(t, ix2)
		G := ix.MaxGPUs()
		for level := topology.ClusterLevel; level < ix.NumLevels(); level++ {
			for d := range topology.DomainID(ix.NumDomains(level)) {
				for g := 1; g <= G; g++ {
					a, _ := ix.Fullest(level, d, topology.AnyType, g)
					b, _ := ix2.Fullest(level, d, topology.AnyType, g)
					if a != b {
						t.Fatalf("Fullest(%d, %d, %d): %d, %d when shuffled", level, d, g, a, b)
					}
				}
			}
		}
	})
}

// TestBestDomainsHugeNeed: a need beyond any domain's count yields no
// domain (it was cut to 32 bits and yielded empty domains), and a need
// of zero or less yields every domain, however far below zero (it wrapped
// around to a positive need).
func TestBestDomainsHugeNeed(t *testing.T) {
	c := topology.Uniform(4, 8, "H100")
	c.Levels = []string{"rack"}
	for i := range c.Nodes {
		c.Nodes[i].Domains = map[string]string{"rack": fmt.Sprintf("r%d", i)}
	}
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	require.NoError(t, ix.TakeSet(0, topology.FirstN(8)))
	for _, need := range []int{1 << 32, 1<<31 + 4} {
		n := 0
		for range ix.BestDomains(0, topology.AnyType, need) {
			n++
		}
		require.Zero(t, n, "need %d", need)
	}
	for _, need := range []int{0, -1, -(1 << 32) + 5, -(1 << 32) + 9, math.MinInt} {
		n := 0
		for range ix.BestDomains(0, topology.AnyType, need) {
			n++
		}
		require.Equal(t, 4, n, "need %d", need)
	}
}

// TestTakeSetNodeOutOfRange: TakeSet refuses a node the index does not
// have, as its doc says, instead of panicking.
func TestTakeSetNodeOutOfRange(t *testing.T) {
	c := topology.Uniform(2, 8, "H100")
	ix, err := topology.NewIndex(&c)
	require.NoError(t, err)
	require.Error(t, ix.TakeSet(5, 1))
	require.Error(t, ix.TakeSet(-1, 1))
	require.Equal(t, 16, ix.FreeGPUs(topology.ClusterLevel, 0, topology.AnyType))
}
