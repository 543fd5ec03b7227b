package topology

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/btree"

	"github.com/gpusched/gpusched/internal/changelog"
)

// NodeID is a node's position in an [Index]: nodes are numbered in name
// order, so IDs do not depend on the order of Cluster.Nodes. Methods of
// an Index that take a NodeID expect one of its nodes (0 to NumNodes()-1)
// and panic on another, as an index out of range does; [Index.TakeSet],
// which checks its arguments, reports an error instead.
type NodeID int32

// DomainID is a domain's position among the domains of one level, in order
// of their path names (and, for two that share one because names contain
// "/", of their sequences of names).
type DomainID int32

// Class selects nodes by GPU type. [AnyType] matches every node; the class
// of a named type comes from [Index.Class].
type Class int32

// AnyType is the class of all nodes, whatever their GPU type.
const AnyType Class = 0

// ClusterLevel is the level whose single domain (DomainID 0) is the whole
// cluster. Declared levels are numbered 0..NumLevels()-1, outermost first.
const ClusterLevel = -1

// Index is the free-capacity index of a cluster: which GPUs of which nodes
// are free now, with per-domain counts of ready nodes by free-GPU count.
//
// For every level (the whole cluster and each declared level), every
// domain of it and every GPU-type class that some node of the domain has,
// the index keeps a bucket of nodes for each free-GPU count 0..G, where G
// is the largest node in the cluster. Such a (domain, class) pair is a
// group; a level has at most one group per domain and one per node, so
// the index holds O(N·L·G) counts and bits for N nodes and L levels,
// however many GPU types there are. A bucket is a count and, for a group
// of more than one node, a two-level bitset over the group's nodes in
// NodeID order, so it answers its lowest-ID node without a scan.
// Queries read those buckets and never scan nodes:
//
//   - [Index.Capacity]: how many members of g GPUs fit in a domain, O(G).
//   - [Index.Fullest] and [Index.Emptiest]: the fullest or emptiest node
//     that still has g free GPUs, O(G + n/4096) for n nodes in the domain.
//   - [Index.BestDomains]: domains of a level in best-fit order, O(log D)
//     to the first, then O(1) amortized each, after O(k log D) to refresh
//     the k domains changed since the last call.
//
// Changes ([Index.Take], [Index.TakeSet], [Index.Release]) cost
// O(L) for L levels, plus O(log D) per level deferred to the next
// BestDomains call on that level.
//
// Ties are broken by name: among nodes with equal free GPUs, every query
// ([Index.First], [Index.Fullest], [Index.Emptiest], and so the placements
// built on them) answers the one with the lowest name, that is the lowest
// NodeID, and [Index.Bucket] yields nodes in ascending NodeID order. So
// answers depend only on which GPUs are held now, never on the order of
// the changes that led there.
//
// Only ready nodes are placeable: draining and down nodes appear in no
// bucket and contribute no free GPUs, but their GPUs can still be held and
// released. Unhealthy GPUs are never free.
//
// An Index is not safe for concurrent use. Its methods do not retain the
// Cluster given to [NewIndex] beyond what they copy.
type Index struct {
	levelNames []string
	// nodes holds what never changes after NewIndex, shared by clones;
	// held, the held GPUs per node, is each index's own. A clone that
	// copies only the held GPUs stays small, so the copies that look
	// ahead in time (see the backfill package) keep more of their
	// buckets in the cache.
	nodes      []inode
	held       []GPUSet
	types      []string // distinct GPU types, sorted
	classes    int      // number of classes: 1, or 1+len(types) when types differ
	freeCounts int      // free-GPU counts a node can have, 0..max GPUs of a node: buckets per (domain, class)
	levels     []level  // levels[0] is the cluster; levels[i+1] is levelNames[i]
	// The record of changes to held, for the backfill package (see
	// internal/changelog): embedded, so that changelog.Of finds it, under
	// an unexported name, so that it adds nothing to the API.
	heldLog
	// res is the CPU and memory of the nodes, nil when no node limits
	// them (see resources.go).
	res *resources
}

// heldLog names the embedded change log of an Index.
type heldLog = changelog.Log[NodeID]

type inode struct {
	name    string
	gpus    int32
	class   Class // specific class (0 when the cluster has one type)
	state   NodeState
	healthy GPUSet
}

type domainKey struct {
	free, used int32
	id         DomainID
}

func domainKeyLess(a, b domainKey) bool {
	if a.free != b.free {
		return a.free < b.free
	}
	if a.used != b.used {
		return a.used > b.used
	}
	return a.id < b.id
}

// bitsetsAt places a group's bitsets in its level's words and sum: one
// per free count, each of n words and (n+63)/64 summary words, from word
// w and summary word s on. n is 0 for a group of one node, which has
// none.
type bitsetsAt struct{ w, s, n int32 }

// level is the index of one level. Its groups are its (domain, class)
// pairs that have nodes: group d (d < number of domains) is domain d with
// class AnyType; when the cluster has several classes, the groups of the
// specific classes follow, those of domain d being
// classStart[d]..classStart[d+1]-1 in class order.
type level struct {
	names []string
	// Per node: its domain (nil at the cluster level, where every node is
	// in domain 0), its position among the members of its domain's group
	// and, with several classes, its class group and its position there.
	dom        []DomainID
	loc        []int32
	cgrp, cloc []int32
	// Per domain, plus one: the first of its class groups (nil with one
	// class).
	classStart []int32
	// Per group: its class, its domain, the free and used GPUs of its
	// ready nodes, and its members (members[memberStart[g]:memberStart[g+1]],
	// in NodeID order).
	groupClass  []Class
	groupDom    []DomainID
	free, used  []int32
	memberStart []int32
	members     []NodeID
	// Per (group, free count): how many ready nodes of the group have that
	// many free GPUs. A group of more than one node also has a bitset of
	// them per free count (see bitset.go), at bitsets[g].
	counts     []int32
	bitsets    []bitsetsAt
	words, sum []uint64
	// Best-fit order of the groups of each class, refreshed lazily
	// (declared levels only).
	trees   []*btree.BTreeG[domainKey]
	inTree  []domainKey // per group: the key now in its tree
	dirty   []bool      // per group
	pending []int32
}

// NewIndex validates c and builds an index in which every healthy GPU is
// free. Hold running allocations with [Index.TakeSet] afterwards.
// It costs O(N·L·(log N + L + G)) time and memory for N nodes, L levels
// (a domain's name joins the names of the levels above it) and G GPUs on
// the largest node, whatever the number of GPU types.
func NewIndex(c *Cluster) (*Index, error) {
	order := c.nameOrder()
	types, err := c.validate(order)
	if err != nil {
		return nil, err
	}
	ix := &Index{levelNames: slices.Clone(c.Levels), types: types}
	ix.addNodes(c, order)
	ix.levels = make([]level, len(c.Levels)+1)
	ix.levels[0].names = []string{""}
	for li := 1; li < len(ix.levels); li++ {
		ix.levels[li].names, ix.levels[li].dom = levelDomains(c, order, li)
	}
	for li := range ix.levels {
		ix.layOut(li)
	}
	ix.addResources(c, order)
	ix.freeHealthyGPUs()
	return ix, nil
}

// addNodes fills in the nodes of c in NodeID order (order lists c's
// nodes by name), the GPU classes and the bucket count; every GPU is
// free. ix.types holds the distinct GPU types.
func (ix *Index) addNodes(c *Cluster, order []int) {
	maxG := 1
	for _, n := range c.Nodes {
		maxG = max(maxG, n.GPUs)
	}
	slices.Sort(ix.types)
	ix.classes = 1
	if len(ix.types) > 1 {
		ix.classes = 1 + len(ix.types)
	}
	ix.freeCounts = maxG + 1
	ix.nodes = make([]inode, len(c.Nodes))
	ix.held = make([]GPUSet, len(c.Nodes))
	for id, oi := range order {
		n := &c.Nodes[oi]
		in := &ix.nodes[id]
		in.name, in.gpus, in.state = n.Name, int32(n.GPUs), n.State
		in.healthy = FirstN(n.GPUs) &^ SetOf(n.Unhealthy...)
		if ix.classes > 1 {
			t, _ := slices.BinarySearch(ix.types, n.GPUType)
			in.class = Class(1 + t)
		}
	}
}

// levelDomains returns the domains of declared level li (1 for the
// outermost; 0 is the cluster): their names, sorted, and per node in
// NodeID order its domain. O(N·li) for N nodes, plus the sort.
//
// A domain is the sequence of its nodes' domain names at the levels down
// to it. Its name joins them with "/", which is ambiguous when a name
// holds "/" itself:
//
//	levels a, b   node's names   domain name   sequence
//	              x/y, z         x/y/z         [x/y z]
//	              x, y/z         x/y/z         [x y/z]
//
// so domains are told apart by a key that prefixes each name with its
// length, and ordered by name first, then by their sequences of names.
func levelDomains(c *Cluster, order []int, li int) (names []string, domOf []DomainID) {
	type dom struct {
		name, key string
		seq       []string
		first     DomainID // in order of first appearance
	}
	var path, key []byte
	seen := map[string]DomainID{}
	var doms []dom
	domOf = make([]DomainID, len(order))
	for id, oi := range order {
		path, key = path[:0], key[:0]
		for k := 0; k < li; k++ {
			name := c.Nodes[oi].Domains[c.Levels[k]]
			if k > 0 {
				path = append(path, '/')
			}
			path = append(path, name...)
			key = strconv.AppendInt(key, int64(len(name)), 10)
			key = append(append(key, ':'), name...)
		}
		d, ok := seen[string(key)]
		if !ok {
			d = DomainID(len(doms))
			seq := make([]string, li)
			for k := range seq {
				seq[k] = c.Nodes[oi].Domains[c.Levels[k]]
			}
			doms = append(doms, dom{string(path), string(key), seq, d})
			seen[doms[d].key] = d
		}
		domOf[id] = d
	}
	slices.SortFunc(doms, func(a, b dom) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return slices.Compare(a.seq, b.seq)
	})
	rank := make([]DomainID, len(doms))
	names = make([]string, len(doms))
	for i, d := range doms {
		names[i] = d.name
		rank[d.first] = DomainID(i)
	}
	for id, d := range domOf {
		domOf[id] = rank[d]
	}
	return names, domOf
}

// layOut builds level li's groups, member lists, empty buckets and (for a
// declared level) best-fit trees, once its domains are known.
// O(N log N + groups·G).
func (ix *Index) layOut(li int) {
	lv := &ix.levels[li]
	nd := len(lv.names)
	// Nodes come in NodeID order, so members follow it within a group.
	lv.memberStart = make([]int32, nd+1)
	for id := range ix.nodes {
		lv.memberStart[lv.domOf(NodeID(id))+1]++
	}
	for d := range nd {
		lv.memberStart[d+1] += lv.memberStart[d]
	}
	lv.members = make([]NodeID, len(ix.nodes), 2*len(ix.nodes))
	lv.loc = make([]int32, len(ix.nodes))
	next := slices.Clone(lv.memberStart[:nd])
	for id := range ix.nodes {
		d := lv.domOf(NodeID(id))
		lv.loc[id] = next[d] - lv.memberStart[d]
		lv.members[next[d]] = NodeID(id)
		next[d]++
	}
	lv.groupClass = make([]Class, nd, nd+len(ix.nodes))
	lv.groupDom = make([]DomainID, nd, nd+len(ix.nodes))
	for d := range nd {
		lv.groupDom[d] = DomainID(d)
	}
	if ix.classes > 1 {
		ix.classGroups(lv)
	}
	groups := len(lv.groupClass)
	lv.free, lv.used = make([]int32, groups), make([]int32, groups)
	lv.counts = make([]int32, groups*ix.freeCounts)
	lv.bitsets = make([]bitsetsAt, groups)
	wo, so := 0, 0
	for g := range groups {
		if n := int(lv.memberStart[g+1] - lv.memberStart[g]); n > 1 {
			nw, ns := bitsetWords(n)
			lv.bitsets[g] = bitsetsAt{w: int32(wo), s: int32(so), n: int32(nw)}
			wo += nw * ix.freeCounts
			so += ns * ix.freeCounts
		}
	}
	lv.words, lv.sum = make([]uint64, wo), make([]uint64, so)
	if li > 0 {
		lv.trees = make([]*btree.BTreeG[domainKey], ix.classes)
		for c := range lv.trees {
			lv.trees[c] = btree.NewG(16, domainKeyLess)
		}
		lv.inTree = make([]domainKey, groups)
		lv.dirty = make([]bool, groups)
	}
}

// classGroups adds to lv, whose domain groups are laid out, a group per
// class present in each domain, with their members, and each node's
// class group and position in it. O(N log N).
func (ix *Index) classGroups(lv *level) {
	nd := len(lv.names)
	n := len(ix.nodes)
	byClass := lv.members[n : 2*n]
	copy(byClass, lv.members[:n])
	lv.members = lv.members[:2*n]
	for d := range nd {
		slices.SortStableFunc(byClass[lv.memberStart[d]:lv.memberStart[d+1]], func(a, b NodeID) int {
			return int(ix.nodes[a].class) - int(ix.nodes[b].class)
		})
	}
	lv.classStart = make([]int32, nd+1)
	lv.cgrp, lv.cloc = make([]int32, n), make([]int32, n)
	for d := range nd {
		lv.classStart[d] = int32(len(lv.groupClass))
		for i := lv.memberStart[d]; i < lv.memberStart[d+1]; i++ {
			id := byClass[i]
			c := ix.nodes[id].class
			g := len(lv.groupClass) - 1
			if int32(g) < lv.classStart[d] || lv.groupClass[g] != c {
				lv.groupClass = append(lv.groupClass, c)
				lv.groupDom = append(lv.groupDom, DomainID(d))
				lv.memberStart = append(lv.memberStart, int32(n)+i+1)
				g++
			} else {
				lv.memberStart[g+1]++
			}
			lv.cgrp[id] = int32(g)
			lv.cloc[id] = int32(n) + i - lv.memberStart[g]
		}
	}
	lv.classStart[nd] = int32(len(lv.groupClass))
}

// freeHealthyGPUs puts every ready node in the buckets of its free count
// (all its healthy GPUs) at every level, and every group in its level's
// best-fit trees.
func (ix *Index) freeHealthyGPUs() {
	for id := range ix.nodes {
		in := &ix.nodes[id]
		if in.state != Ready {
			continue
		}
		f := int32(in.healthy.Len())
		for li := range ix.levels {
			ix.link(li, NodeID(id), f)
			ix.account(li, NodeID(id), f, 0)
		}
	}
	for li := 1; li < len(ix.levels); li++ {
		lv := &ix.levels[li]
		for g := range lv.inTree {
			lv.inTree[g] = domainKey{free: lv.free[g], used: lv.used[g], id: lv.groupDom[g]}
			lv.trees[lv.groupClass[g]].ReplaceOrInsert(lv.inTree[g])
		}
	}
}

// group returns the group of class c in domain d, or -1 when no node of
// the domain has class c.
func (lv *level) group(d DomainID, c Class) int {
	if c == AnyType {
		return int(d)
	}
	if lv.classStart == nil || c < 0 {
		return -1
	}
	lo, hi := lv.classStart[d], lv.classStart[d+1]
	i, ok := slices.BinarySearch(lv.groupClass[lo:hi], c)
	if !ok {
		return -1
	}
	return int(lo) + i
}

// domOf returns the domain of node n at this level.
func (lv *level) domOf(n NodeID) DomainID {
	if lv.dom == nil {
		return 0
	}
	return lv.dom[n]
}

// bits returns the offsets of the bitset of group g's bucket for free
// count f and its number of summary words; nw is 0 for a group of one
// node, which has no bitsets.
func (lv *level) bits(g int, f int32) (w, s, ns int32) {
	b := lv.bitsets[g]
	ns = (b.n + 63) >> 6
	return b.w + f*b.n, b.s + f*ns, ns
}

// link puts node n into the buckets for free count f at level li.
func (ix *Index) link(li int, n NodeID, f int32) {
	lv := &ix.levels[li]
	lv.linkIn(int(lv.domOf(n)), lv.loc[n], ix.freeCounts, f)
	if lv.cgrp != nil {
		lv.linkIn(int(lv.cgrp[n]), lv.cloc[n], ix.freeCounts, f)
	}
	if ix.res != nil {
		ix.widen(li, n, f)
	}
}

// linkIn puts the node at loc of group g into its bucket for free count f.
func (lv *level) linkIn(g int, loc int32, freeCounts int, f int32) {
	lv.counts[g*freeCounts+int(f)]++
	if lv.bitsets[g].n != 0 {
		w, s, _ := lv.bits(g, f)
		bitAdd(lv.words, lv.sum, w, s, loc)
	}
}

// move moves node n from the buckets for free count from to those for
// free count to at level li.
func (ix *Index) move(li int, n NodeID, from, to int32) {
	lv := &ix.levels[li]
	lv.moveIn(int(lv.domOf(n)), lv.loc[n], ix.freeCounts, from, to)
	if lv.cgrp != nil {
		lv.moveIn(int(lv.cgrp[n]), lv.cloc[n], ix.freeCounts, from, to)
	}
	if ix.res != nil {
		ix.widen(li, n, to)
	}
}

// moveIn moves the node at loc of group g from its bucket for free count
// from to the one for free count to.
func (lv *level) moveIn(g int, loc int32, freeCounts int, from, to int32) {
	base := g * freeCounts
	lv.counts[base+int(from)]--
	lv.counts[base+int(to)]++
	if b := lv.bitsets[g]; b.n != 0 {
		ns := (b.n + 63) >> 6
		bitRemove(lv.words, lv.sum, b.w+from*b.n, b.s+from*ns, loc)
		bitAdd(lv.words, lv.sum, b.w+to*b.n, b.s+to*ns, loc)
	}
}

// account adds df free and du used GPUs of node n to its groups at li.
func (ix *Index) account(li int, n NodeID, df, du int32) {
	lv := &ix.levels[li]
	lv.accountIn(li, int(lv.domOf(n)), df, du)
	if lv.cgrp != nil {
		lv.accountIn(li, int(lv.cgrp[n]), df, du)
	}
}

// accountIn adds df free and du used GPUs to group g of level li.
func (lv *level) accountIn(li, g int, df, du int32) {
	lv.free[g] += df
	lv.used[g] += du
	if li > 0 && !lv.dirty[g] && (df != 0 || du != 0) {
		lv.dirty[g] = true
		lv.pending = append(lv.pending, int32(g))
	}
}

// setHeld changes the held GPUs of n and keeps buckets and counts current.
func (ix *Index) setHeld(n NodeID, held GPUSet) {
	in := &ix.nodes[n]
	ix.note(n)
	old := ix.held[n]
	ix.held[n] = held
	if in.state != Ready {
		return
	}
	of := int32((in.healthy &^ old).Len())
	ou := int32((in.healthy & old).Len())
	nf := int32((in.healthy &^ held).Len())
	nu := int32((in.healthy & held).Len())
	if of == nf && ou == nu {
		return
	}
	for li := range ix.levels {
		if of != nf {
			ix.move(li, n, of, nf)
		}
		ix.account(li, n, nf-of, nu-ou)
	}
}

// NumNodes returns the number of nodes. NodeIDs run from 0 to NumNodes()-1.
func (ix *Index) NumNodes() int { return len(ix.nodes) }

// Lookup returns the ID of the node with the given name, or 0 and false
// when there is none. NodeIDs follow the nodes' names in order, so it is
// a binary search: O(log N).
func (ix *Index) Lookup(name string) (NodeID, bool) {
	i, ok := slices.BinarySearchFunc(ix.nodes, name, func(n inode, name string) int { return strings.Compare(n.name, name) })
	if !ok {
		return 0, false
	}
	return NodeID(i), true
}

// Name returns the name of node n.
func (ix *Index) Name(n NodeID) string { return ix.nodes[n].name }

// GPUs returns the number of GPUs of node n (healthy or not).
func (ix *Index) GPUs(n NodeID) int { return int(ix.nodes[n].gpus) }

// State returns the state of node n.
func (ix *Index) State(n NodeID) NodeState { return ix.nodes[n].state }

// NodeClass returns the GPU-type class of node n (AnyType when the
// cluster has a single type).
func (ix *Index) NodeClass(n NodeID) Class { return ix.nodes[n].class }

// Healthy returns the healthy GPUs of node n.
func (ix *Index) Healthy(n NodeID) GPUSet { return ix.nodes[n].healthy }

// Held returns the held GPUs of node n.
func (ix *Index) Held(n NodeID) GPUSet { return ix.held[n] }

// FreeSet returns the GPUs of node n that can be allocated now: healthy,
// not held, on a ready node.
func (ix *Index) FreeSet(n NodeID) GPUSet {
	in := &ix.nodes[n]
	if in.state != Ready {
		return 0
	}
	return in.healthy &^ ix.held[n]
}

// Free returns the number of GPUs of node n that can be allocated now.
func (ix *Index) Free(n NodeID) int { return ix.FreeSet(n).Len() }

// MaxGPUs returns the largest GPU count of any node (at least 1).
func (ix *Index) MaxGPUs() int { return ix.freeCounts - 1 }

// Levels returns the declared level names, outermost first.
func (ix *Index) Levels() []string { return slices.Clone(ix.levelNames) }

// NumLevels returns the number of declared levels.
func (ix *Index) NumLevels() int { return len(ix.levelNames) }

// NumClasses returns the number of GPU classes: [AnyType] alone when the
// nodes all have one GPU type, else AnyType and one class per type.
// Valid classes are 0..NumClasses()-1.
func (ix *Index) NumClasses() int { return ix.classes }

// LevelOf returns the number of the named level. O(L).
func (ix *Index) LevelOf(name string) (int, bool) {
	i := slices.Index(ix.levelNames, name)
	return i, i >= 0
}

// NumDomains returns the number of domains at level (1 for ClusterLevel).
func (ix *Index) NumDomains(level int) int { return len(ix.levels[level+1].names) }

// DomainName returns the path name of domain d at level: the domain names
// of the levels down to it, joined by "/" ("s0/l3"). The cluster's one
// domain is named "". Domains are the sequences of names, so two domains
// share a path name only when names hold "/" themselves (spine "x/y" with
// leaf "z", spine "x" with leaf "y/z").
func (ix *Index) DomainName(level int, d DomainID) string { return ix.levels[level+1].names[d] }

// DomainOf returns the domain of node n at level.
func (ix *Index) DomainOf(level int, n NodeID) DomainID { return ix.levels[level+1].domOf(n) }

// Types returns the distinct GPU types of the cluster, sorted.
func (ix *Index) Types() []string { return slices.Clone(ix.types) }

// Class returns the class of nodes with the given GPU type; the empty type
// means any. It reports false for a type no node has. O(log T).
func (ix *Index) Class(gpuType string) (Class, bool) {
	if gpuType == "" {
		return AnyType, true
	}
	t, ok := slices.BinarySearch(ix.types, gpuType)
	if !ok {
		return 0, false
	}
	if ix.classes == 1 {
		return AnyType, true
	}
	return Class(1 + t), true
}

// InClass reports whether node n belongs to class c.
func (ix *Index) InClass(n NodeID, c Class) bool { return c == AnyType || ix.nodes[n].class == c }

// FreeGPUs returns the free GPUs of class c in domain d of level.
// O(log T) for T GPU types.
func (ix *Index) FreeGPUs(level int, d DomainID, c Class) int {
	lv := &ix.levels[level+1]
	if g := lv.group(d, c); g >= 0 {
		return int(lv.free[g])
	}
	return 0
}

// UsedGPUs returns the held healthy GPUs of class c on ready nodes in
// domain d of level. O(log T) for T GPU types.
func (ix *Index) UsedGPUs(level int, d DomainID, c Class) int {
	lv := &ix.levels[level+1]
	if g := lv.group(d, c); g >= 0 {
		return int(lv.used[g])
	}
	return 0
}

// NodesWithFree returns how many ready nodes of class c in domain d of
// level have exactly f free GPUs. O(log T) for T GPU types.
func (ix *Index) NodesWithFree(level int, d DomainID, c Class, f int) int {
	lv := &ix.levels[level+1]
	g := lv.group(d, c)
	if f < 0 || f >= ix.freeCounts || g < 0 {
		return 0
	}
	return int(lv.counts[g*ix.freeCounts+f])
}

// Capacity returns how many members of g GPUs each fit on the free GPUs
// of class c in domain d of level, each member on one node:
// the sum over nodes of floor(free/g). O(G + log T).
func (ix *Index) Capacity(level int, d DomainID, c Class, g int) int {
	lv := &ix.levels[level+1]
	grp := lv.group(d, c)
	if g < 1 || g >= ix.freeCounts || grp < 0 {
		return 0
	}
	counts := lv.counts[grp*ix.freeCounts : (grp+1)*ix.freeCounts]
	total := 0
	for f := g; f < ix.freeCounts; f++ {
		total += int(counts[f]) * (f / g)
	}
	return total
}

// First returns the lowest-ID (lowest-named) ready node of class c in
// domain d of level with exactly f free GPUs. O(log T) for domains of up
// to 4096 nodes, O(n/4096) more for n nodes in the domain.
func (ix *Index) First(level int, d DomainID, c Class, f int) (NodeID, bool) {
	lv := &ix.levels[level+1]
	g := lv.group(d, c)
	if f < 0 || f >= ix.freeCounts || g < 0 {
		return -1, false
	}
	return ix.first(lv, g, int32(f))
}

// first returns the lowest-ID node of group g with f free GPUs.
func (ix *Index) first(lv *level, g int, f int32) (NodeID, bool) {
	if lv.counts[g*ix.freeCounts+int(f)] == 0 {
		return -1, false
	}
	if lv.bitsets[g].n == 0 {
		return lv.members[lv.memberStart[g]], true
	}
	w, s, ns := lv.bits(g, f)
	return lv.members[lv.memberStart[g]+bitFirst(lv.words, lv.sum, w, s, ns)], true
}

// Bucket yields the ready nodes of class c in domain d of level with
// exactly f free GPUs, in ascending NodeID (name) order. The index must
// not be changed while the sequence is being iterated. O(1) amortized per
// node, plus O(n/4096 + log T) for n nodes in the domain.
func (ix *Index) Bucket(level int, d DomainID, c Class, f int) iter.Seq[NodeID] {
	return func(yield func(NodeID) bool) {
		lv := &ix.levels[level+1]
		g := lv.group(d, c)
		if f < 0 || f >= ix.freeCounts || g < 0 || lv.counts[g*ix.freeCounts+f] == 0 {
			return
		}
		members := lv.members[lv.memberStart[g]:lv.memberStart[g+1]]
		if len(members) == 1 {
			yield(members[0])
			return
		}
		w, s, ns := lv.bits(g, int32(f))
		bitAll(lv.words, lv.sum, w, s, ns, func(i int32) bool {
			return yield(members[i])
		})
	}
}

// Fullest returns the ready node of class c in domain d of level with the
// fewest free GPUs that are still at least g (best fit), the lowest-named
// among equals. A g below 1 counts as 1: a node with no free GPU is never
// returned. O(G + log T + n/4096) for n nodes in the domain.
func (ix *Index) Fullest(level int, d DomainID, c Class, g int) (NodeID, bool) {
	lv := &ix.levels[level+1]
	grp := lv.group(d, c)
	if grp < 0 {
		return -1, false
	}
	counts := lv.counts[grp*ix.freeCounts : (grp+1)*ix.freeCounts]
	for f := max(g, 1); f < ix.freeCounts; f++ {
		if counts[f] != 0 {
			return ix.first(lv, grp, int32(f))
		}
	}
	return -1, false
}

// Emptiest returns the ready node of class c in domain d of level with the
// most free GPUs, if that is at least g (worst fit), the lowest-named
// among equals. A g below 1 counts as 1, as for [Index.Fullest].
// O(G + log T + n/4096) for n nodes in the domain.
func (ix *Index) Emptiest(level int, d DomainID, c Class, g int) (NodeID, bool) {
	lv := &ix.levels[level+1]
	grp := lv.group(d, c)
	if grp < 0 {
		return -1, false
	}
	counts := lv.counts[grp*ix.freeCounts : (grp+1)*ix.freeCounts]
	for f := ix.freeCounts - 1; f >= max(g, 1); f-- {
		if counts[f] != 0 {
			return ix.first(lv, grp, int32(f))
		}
	}
	return -1, false
}

// BestDomains yields the domains of a declared level in best-fit order
// for class c, skipping those with fewer than need free GPUs: fewest free
// GPUs first, then most used GPUs, then name. The caller decides, for
// example with [Index.Capacity], whether a domain fits the shape it needs,
// and stops at the first that does. The index must not be changed during
// the iteration. O(k log D) to refresh the k domains changed since the
// last call, then O(log D) to the first domain and O(1) amortized each;
// with need < 1 and a class that some domain lacks, O(D) more.
func (ix *Index) BestDomains(level int, c Class, need int) iter.Seq[DomainID] {
	return func(yield func(DomainID) bool) {
		if level == ClusterLevel {
			if ix.FreeGPUs(level, 0, c) >= need {
				yield(0)
			}
			return
		}
		if need > math.MaxInt32 || c < 0 || int(c) >= ix.classes {
			return // more than any domain's count holds, or no such class
		}
		lv := &ix.levels[level+1]
		for _, g := range lv.pending {
			t := lv.trees[lv.groupClass[g]]
			t.Delete(lv.inTree[g])
			lv.inTree[g] = domainKey{free: lv.free[g], used: lv.used[g], id: lv.inTree[g].id}
			t.ReplaceOrInsert(lv.inTree[g])
			lv.dirty[g] = false
		}
		lv.pending = lv.pending[:0]
		t := lv.trees[c]
		if need < 1 && t.Len() < len(lv.names) {
			ix.allDomains(lv, c, yield)
			return
		}
		t.AscendGreaterOrEqual(domainKey{free: int32(max(need, 0)), used: 1 << 30, id: -1}, func(k domainKey) bool {
			return yield(k.id)
		})
	}
}

// allDomains yields every domain of lv in best-fit order for class c,
// counting a domain without nodes of class c as having none free and
// none used. O(D) for D domains.
func (ix *Index) allDomains(lv *level, c Class, yield func(DomainID) bool) {
	t := lv.trees[c]
	stopped := false
	// First those with none free and some used, most used first.
	t.AscendLessThan(domainKey{id: math.MaxInt32}, func(k domainKey) bool {
		if k.used == 0 {
			return false
		}
		stopped = !yield(k.id)
		return !stopped
	})
	if stopped {
		return
	}
	for d := range DomainID(len(lv.names)) {
		g := lv.group(d, c)
		if (g < 0 || lv.free[g] == 0 && lv.used[g] == 0) && !yield(d) {
			return
		}
	}
	t.AscendGreaterOrEqual(domainKey{free: 1, used: 1 << 30, id: -1}, func(k domainKey) bool {
		return yield(k.id)
	})
}

// TakeSet marks the GPUs s of node n held. It fails, changing nothing, if
// the node or a GPU index is out of range or a GPU is already held.
// Unhealthy GPUs may be held (a running job keeps a GPU that failed under
// it). O(L).
func (ix *Index) TakeSet(n NodeID, s GPUSet) error {
	if n < 0 || int(n) >= len(ix.nodes) {
		return fmt.Errorf("node %d out of range 0..%d", n, len(ix.nodes)-1)
	}
	in := &ix.nodes[n]
	if s&^FirstN(int(in.gpus)) != 0 {
		return fmt.Errorf("node %q: GPU index out of range 0..%d", in.name, in.gpus-1)
	}
	if dup := s & ix.held[n]; dup != 0 {
		return fmt.Errorf("node %q: GPU %d is already held", in.name, dup.Indices()[0])
	}
	ix.setHeld(n, ix.held[n]|s)
	return nil
}

// Take holds the k lowest-numbered free GPUs of node n and returns them.
// It reports false, changing nothing, when fewer than k are free. O(L).
func (ix *Index) Take(n NodeID, k int) (GPUSet, bool) {
	free := ix.FreeSet(n)
	if k < 1 || free.Len() < k {
		return 0, false
	}
	s := free.Lowest(k)
	ix.setHeld(n, ix.held[n]|s)
	return s, true
}

// Release frees the GPUs s of node n; GPUs of s not held are ignored.
// O(L).
func (ix *Index) Release(n NodeID, s GPUSet) {
	ix.setHeld(n, ix.held[n]&^s)
}

// SetHeld replaces the held GPUs of node n with s (indices beyond the
// node's GPUs are dropped). It is the primitive behind Take and Release,
// for callers that overlay their own view, such as an availability
// profile looking ahead in time. O(L).
func (ix *Index) SetHeld(n NodeID, s GPUSet) {
	ix.setHeld(n, s&FirstN(int(ix.nodes[n].gpus)))
}

// NumTypes returns the number of distinct GPU types.
func (ix *Index) NumTypes() int { return len(ix.types) }

// TypeClass returns the class of the i-th GPU type of [Index.Types] and
// its name. With a single type its class is AnyType.
func (ix *Index) TypeClass(i int) (Class, string) {
	if ix.classes == 1 {
		return AnyType, ix.types[i]
	}
	return Class(1 + i), ix.types[i]
}
