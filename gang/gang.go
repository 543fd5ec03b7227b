package gang

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/gpusched/gpusched/binpack"
	"github.com/gpusched/gpusched/topology"
)

// NoLevel marks an unset topology level in a [Request].
const NoLevel = -2

// Request is the shape of one gang: Members members of GPUsPerMember GPUs
// each, every member on one node, all of class Class.
type Request struct {
	// Members is the number of members of the gang; it must be >= 1.
	Members int
	// GPUsPerMember is the number of GPUs each member takes on its node,
	// 1 up to the GPU count of the index's largest node.
	GPUsPerMember int
	// Class restricts the gang to nodes of one GPU type (topology.AnyType:
	// no restriction).
	Class topology.Class
	// Required, when not NoLevel, is a declared level of the index: the
	// whole gang must sit inside one domain of it. Zero is the outermost
	// declared level, so an unset Request must say NoLevel explicitly:
	// build requests with [NewRequest].
	Required int
	// Preferred, when not NoLevel, is a level tried first; the placer then
	// relaxes outward level by level, down to Required (or to the whole
	// cluster when nothing is required).
	Preferred int
	// Avoid, when set, excludes nodes (for anti-affinity). Avoided nodes
	// are skipped one by one, so placement costs grow with their number.
	Avoid func(topology.NodeID) bool
	// Distinct puts the members of a scored (non-consolidating) gang on
	// different nodes, or different domains of SpreadLevel when that is
	// not NoLevel, and off Occupied ones; a member goes to an Occupied
	// place only when no other place without a member of the gang has
	// room, and doubles up only when no place without one has room.
	// Without it, each member goes to the best-scoring node, which may be
	// the one the previous member took.
	Distinct bool
	// SpreadLevel, when not NoLevel, is the declared level whose domains
	// Distinct spreads the members over instead of nodes. Zero is the
	// outermost level, as for Required.
	SpreadLevel int
	// Occupied, when set with Distinct, reports the nodes whose place
	// (the node, or its SpreadLevel domain) already holds a member of
	// the same service, such as another replica: members go first to
	// places neither occupied nor holding a member of the gang. It must
	// answer alike for every node of one SpreadLevel domain.
	Occupied func(topology.NodeID) bool
	// Chooser, when set, picks the domain of each level tried instead of
	// the best-fit rule. Place then visits every domain of the level with
	// enough free GPUs, so it costs O(D) per level.
	Chooser DomainChooser
	// CPUMillis and MemoryMiB are what each member needs on its node
	// besides its GPUs (zero: nothing). A member fits a node only where
	// its GPUs, CPU and memory all fit ([topology.Index.Members]).
	CPUMillis, MemoryMiB int64
}

// DomainChooser picks the domain a gang goes to at one level. fits lists,
// in best-fit order (fewest free GPUs, then most used, then name), the
// domains of level that can hold the whole gang r now, counting the free
// GPUs of every node (Avoid is applied after the choice: a domain whose
// room lies on avoided nodes is then passed over for the next); Choose returns one
// of them (an answer outside the list counts as fits[0]). It must not
// change ix, should cost O(len(fits)), and must answer alike for alike
// arguments, keeping no state that changes an answer: callers such as
// the scheduler's Step skip the calls for requests that look alike to an
// earlier one.
type DomainChooser interface {
	// Choose returns the domain of level, one of fits, that gang r goes
	// to.
	Choose(ix *topology.Index, level int, r Request, fits []topology.DomainID) topology.DomainID
}

// ChooserFunc adapts a function to [DomainChooser].
type ChooserFunc func(ix *topology.Index, level int, r Request, fits []topology.DomainID) topology.DomainID

// Choose calls f.
func (f ChooserFunc) Choose(ix *topology.Index, level int, r Request, fits []topology.DomainID) topology.DomainID {
	return f(ix, level, r, fits)
}

// NewRequest returns a request for members × gpus with no GPU-type or
// topology constraint.
func NewRequest(members, gpus int) Request {
	return Request{Members: members, GPUsPerMember: gpus, Required: NoLevel, Preferred: NoLevel, SpreadLevel: NoLevel}
}

// GPUs returns Members × GPUsPerMember.
func (r Request) GPUs() int { return r.Members * r.GPUsPerMember }

// limited reports whether CPU or memory can decide where r fits on ix:
// r asks for some and some node of ix limits them.
func (r Request) limited(ix *topology.Index) bool {
	return (r.CPUMillis > 0 || r.MemoryMiB > 0) && ix.Limited()
}

// capacity returns how many members of r fit domain d of level l now.
func capacity(ix *topology.Index, r Request, l int, d topology.DomainID) int {
	return ix.CapacityFor(l, d, r.Class, r.GPUsPerMember, r.CPUMillis, r.MemoryMiB)
}

// Slot is a part of a placement on one node: the members taken there in
// one go. A scorer that does not consolidate may come back to a node for
// a later member, so a node can appear in more than one slot (not
// necessarily next to each other); [Placement.Allocation] merges them.
type Slot struct {
	// Node is the node of the slot.
	Node topology.NodeID
	// GPUs are the GPUs taken on it.
	GPUs topology.GPUSet
	// Members is how many members sit on it: GPUs holds Members ×
	// GPUsPerMember GPUs.
	Members int
	// CPUMillis and MemoryMiB are what the slot uses on its node besides
	// the GPUs: Members times the request's, held in the index with the
	// GPUs ([topology.Index.AddUse]) and given back with them.
	CPUMillis, MemoryMiB int64
}

// Placement is where a gang landed: the level and domain it was fitted
// into, and its slots in the order they were taken.
type Placement struct {
	Level int // topology.ClusterLevel when no level constrained it
	// Domain is the domain of Level the gang sits in (0 for
	// topology.ClusterLevel, whose one domain is the whole cluster).
	Domain topology.DomainID
	// Slots are the gang's nodes and GPUs, in the order they were taken;
	// the zero Placement has none.
	Slots []Slot
}

// Outcome says why a gang could not be placed.
type Outcome uint8

const (
	// Placed means the gang was placed.
	Placed Outcome = iota
	// NoCapacity means the free GPUs of its class (on nodes it does not
	// avoid) cannot host the gang even ignoring topology.
	NoCapacity
	// NoDomain means the gang fits the cluster's free GPUs (on nodes it
	// does not avoid) but no single domain of its required level.
	NoDomain
	// Invalid means the request itself is malformed.
	Invalid
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case Placed:
		return "placed"
	case NoCapacity:
		return "no-capacity"
	case NoDomain:
		return "no-domain"
	}
	return "invalid"
}

// Place puts the whole gang r onto the free GPUs of ix and holds them, or
// changes nothing and says why. The scorer chooses among nodes; nil means
// [binpack.Pack]. A scorer that is a [binpack.Consolidator] gets the
// fewest-nodes rule: members go to the node that fits the most of them
// (fullest among equals) until the rest fit on one node, which is then
// the fullest that fits them. Otherwise each member goes to the best
// scoring node class.
//
// The domain is chosen as [topology.Index.BestDomains] orders them: among domains
// of the level with room for the gang, the one with the fewest free GPUs,
// then the most used, then by name. When Avoid leaves a domain's room on
// avoided nodes, the next domain of the level is tried, then the next
// level; a Chooser's domain is tried first, then the others in order.
//
// Cost: O(levels tried × (log D + domains skipped) × G) to choose a domain
// and O(nodes touched × (G + L)) to take GPUs, for G GPUs per node and L
// levels; never a scan of all nodes unless Avoid excludes them, or a
// Distinct gang does (it excludes the places its members, and with
// Occupied other replicas, took, node by node: O(N) per member while
// places without a member last, and once more when they run out, so
// O(N·P + M·G) for N nodes, P places and M members). With Avoid or a Chooser,
// every domain of a level tried is listed: O(D) more.
// A gang with Avoid and a required level that fits no domain of it costs
// one more trial on the whole cluster, to tell NoDomain from NoCapacity.
func Place(ix *topology.Index, r Request, s binpack.Scorer) (Placement, Outcome) {
	if !r.wellFormed(ix) {
		return Placement{}, Invalid
	}
	start, stop, ok := levelsToTry(r, ix.NumLevels())
	if !ok {
		return Placement{}, Invalid
	}
	for l := start; l >= stop; l-- {
		// The domains with room, best fit first: only the first when
		// nothing is avoided (it then holds the gang, and nothing is
		// allocated), all of them when Avoid may leave a domain's room on
		// avoided nodes or a Chooser picks. Those are listed before any is
		// filled: filling moves domains in the order being walked.
		if r.Avoid == nil && (r.Chooser == nil || l == topology.ClusterLevel) {
			for d := range ix.BestDomains(l, r.Class, r.GPUs()) {
				if capacity(ix, r, l, d) >= r.Members {
					if p, ok := fill(ix, r, l, d, s); ok {
						return p, Placed
					}
					break
				}
			}
			continue
		}
		var fits []topology.DomainID
		for d := range ix.BestDomains(l, r.Class, r.GPUs()) {
			if capacity(ix, r, l, d) >= r.Members {
				fits = append(fits, d)
			}
		}
		if len(fits) > 0 && r.Chooser != nil && l != topology.ClusterLevel {
			dom := r.Chooser.Choose(ix, l, r, fits)
			i := slices.Index(fits, dom)
			if i < 0 {
				i = 0 // an answer outside the list: best fit
			}
			if i > 0 { // the chosen first, then the rest in order, in a copy: the chooser may keep fits
				fits = append(append([]topology.DomainID{fits[i]}, fits[:i]...), fits[i+1:]...)
			}
		}
		for _, dom := range fits {
			if p, ok := fill(ix, r, l, dom, s); ok {
				return p, Placed
			}
		}
	}
	if r.Required != NoLevel && capacity(ix, r, topology.ClusterLevel, 0) >= r.Members {
		if r.Avoid == nil {
			return Placement{}, NoDomain
		}
		// Whether the nodes not avoided hold it, ignoring topology, takes
		// a trial placement on the whole cluster.
		loose := r
		loose.Required, loose.Preferred = NoLevel, NoLevel
		if p, ok := fill(ix, loose, topology.ClusterLevel, 0, s); ok {
			p.Release(ix)
			return Placement{}, NoDomain
		}
	}
	return Placement{}, NoCapacity
}

// levelsToTry returns the levels to try, from start outward down to
// stop: from the preferred (or required) one to the required one (or the
// cluster). It reports false when either level is not one of the index's.
func levelsToTry(r Request, nl int) (start, stop int, ok bool) {
	if !validLevel(r.Required, nl) || !validLevel(r.Preferred, nl) {
		return 0, 0, false
	}
	start, stop = r.Preferred, r.Required
	if start == NoLevel || (stop != NoLevel && start < stop) {
		start = stop
	}
	if stop == NoLevel {
		stop = topology.ClusterLevel
	}
	if start == NoLevel {
		start = topology.ClusterLevel
	}
	return start, stop, true
}

// fill places r inside domain d of level l, which has the capacity for it
// unless Avoid excludes nodes. On failure it releases what it took.
// A gang takes at most a slot per member, so the slots are allocated once.
func fill(ix *topology.Index, r Request, l int, d topology.DomainID, s binpack.Scorer) (Placement, bool) {
	p := Placement{Level: l, Domain: d, Slots: make([]Slot, 0, r.Members)}
	g := r.GPUsPerMember
	left := r.Members
	consolidate := s == nil
	if c, ok := s.(binpack.Consolidator); ok && c.Consolidate() {
		consolidate = true
	}
	var spread spreadState
	for left > 0 {
		var n topology.NodeID
		var k int
		var ok bool
		if consolidate && r.limited(ix) {
			n, k, ok = pickConsolidatedLimited(ix, r, l, d, left)
		} else if consolidate {
			n, k, ok = pickConsolidated(ix, r, l, d, left)
		} else {
			if r.Distinct {
				n, ok = spread.pick(ix, r, l, d, s)
				spread.add(ix, r, n)
			} else {
				n, ok = pickScored(ix, r, l, d, s)
			}
			k = 1
		}
		if !ok {
			undo(ix, p)
			return Placement{}, false
		}
		set, _ := ix.Take(n, k*g)
		cpu, mem := int64(k)*r.CPUMillis, int64(k)*r.MemoryMiB
		ix.AddUse(n, cpu, mem)
		if len(p.Slots) > 0 && p.Slots[len(p.Slots)-1].Node == n {
			last := &p.Slots[len(p.Slots)-1]
			last.GPUs |= set
			last.Members += k
			last.CPUMillis += cpu
			last.MemoryMiB += mem
		} else {
			p.Slots = append(p.Slots, Slot{Node: n, GPUs: set, Members: k, CPUMillis: cpu, MemoryMiB: mem})
		}
		left -= k
	}
	return p, true
}

func undo(ix *topology.Index, p Placement) {
	for _, s := range p.Slots {
		ix.AddUse(s.Node, -s.CPUMillis, -s.MemoryMiB)
		ix.Release(s.Node, s.GPUs)
	}
}

// pickConsolidated returns the node and member count for the next step of
// the fewest-nodes rule.
func pickConsolidated(ix *topology.Index, r Request, l int, d topology.DomainID, left int) (topology.NodeID, int, bool) {
	g := r.GPUsPerMember
	G := ix.MaxGPUs()
	if left*g <= G {
		if n, ok := firstUsable(ix, r, l, d, left*g, +1); ok {
			return n, left, true
		}
	}
	// No node hosts all that is left: take the node that hosts the most
	// members, the fullest among those.
	n, ok := firstUsable(ix, r, l, d, g, -1)
	if !ok {
		return -1, 0, false
	}
	k := min(ix.Free(n)/g, left)
	if m, ok := firstUsable(ix, r, l, d, k*g, +1); ok && ix.Free(m)/g == k {
		n = m
	}
	return n, k, true
}

// pickConsolidatedLimited is pickConsolidated for a request whose CPU
// or memory may decide where members fit: the fullest node that hosts
// all that is left, else the node that hosts the most members (fullest
// among equals, as by GPUs), counting by [topology.Index.Members].
func pickConsolidatedLimited(ix *topology.Index, r Request, l int, d topology.DomainID, left int) (topology.NodeID, int, bool) {
	g := r.GPUsPerMember
	G := ix.MaxGPUs()
	first := func(f, k int) (topology.NodeID, bool) {
		return ix.FirstFit(l, d, r.Class, f, k, g, r.CPUMillis, r.MemoryMiB, r.Avoid)
	}
	for f := left * g; f <= G; f++ {
		if n, ok := first(f, left); ok {
			return n, left, true
		}
	}
	// The most members any node hosts: a bucket of f free GPUs hosts at
	// most f/g, so the walk down stops once that is no more than found.
	best, bestN := 0, topology.NodeID(-1)
	for f := G; f >= g && f/g > best; f-- {
		for k := min(f/g, left); k > best; k-- {
			if n, ok := first(f, k); ok {
				best, bestN = k, n
				break
			}
		}
	}
	if best == 0 {
		return -1, 0, false
	}
	// The fullest node that hosts that many (it hosts no more: best is
	// the most, or all that is left).
	for f := best * g; f <= G; f++ {
		if m, ok := first(f, best); ok {
			return m, best, true
		}
	}
	return bestN, best, true
}

// firstUsable scans buckets from f = need upward (dir +1, fullest first)
// or from the top down to need (dir -1, emptiest first) and returns the
// first node not avoided.
func firstUsable(ix *topology.Index, r Request, l int, d topology.DomainID, need, dir int) (topology.NodeID, bool) {
	G := ix.MaxGPUs()
	f, end := need, G+1
	if dir < 0 {
		f, end = G, need-1
	}
	for ; f != end; f += dir {
		if ix.NodesWithFree(l, d, r.Class, f) == 0 {
			continue
		}
		if r.Avoid == nil {
			n, _ := ix.First(l, d, r.Class, f)
			return n, true
		}
		for n := range ix.Bucket(l, d, r.Class, f) {
			if !r.Avoid(n) {
				return n, true
			}
		}
	}
	return -1, false
}

// spreadState is what the fill of a Distinct gang knows of the places
// (nodes, or domains of SpreadLevel) its members took: which they are,
// and whether a try found no fresh place (neither taken nor Occupied) or
// no untaken place left. Those stay true for the rest of the fill, which
// only takes GPUs and places, so each is looked for until it fails once:
// O(N) per member while such places last, O(G·T) per member after.
type spreadState struct {
	places             map[int32]struct{}
	noFresh, noUntaken bool
}

// place is the place of node n for r: its SpreadLevel domain, or itself.
func place(ix *topology.Index, r Request, n topology.NodeID) int32 {
	if r.SpreadLevel >= 0 {
		return int32(ix.DomainOf(r.SpreadLevel, n))
	}
	return int32(n)
}

// add records that a member took node n (nothing when n is -1).
func (sp *spreadState) add(ix *topology.Index, r Request, n topology.NodeID) {
	if n < 0 {
		return
	}
	if sp.places == nil {
		sp.places = map[int32]struct{}{}
	}
	sp.places[place(ix, r, n)] = struct{}{}
}

// pick picks a node for the next member of a scored Distinct gang, first
// among nodes (or SpreadLevel domains) that hold no member of it yet and
// are not Occupied, then among those that hold no member of it, then
// among all.
func (sp *spreadState) pick(ix *topology.Index, r Request, l int, d topology.DomainID, s binpack.Scorer) (topology.NodeID, bool) {
	taken := len(sp.places) > 0
	used := func(n topology.NodeID) bool {
		_, ok := sp.places[place(ix, r, n)]
		return ok
	}
	occupied := func(n topology.NodeID) bool { return r.Occupied != nil && r.Occupied(n) }
	// try picks among the nodes r may use that skip leaves out.
	try := func(skip func(topology.NodeID) bool) (topology.NodeID, bool) {
		fresh := r
		fresh.Avoid = func(n topology.NodeID) bool { return r.Avoid != nil && r.Avoid(n) || skip(n) }
		return pickScored(ix, fresh, l, d, s)
	}
	if (taken || r.Occupied != nil) && !sp.noFresh {
		if n, ok := try(func(n topology.NodeID) bool { return occupied(n) || used(n) }); ok {
			return n, true
		}
		sp.noFresh = true
	}
	if taken && r.Occupied != nil && !sp.noUntaken {
		if n, ok := try(used); ok {
			return n, true
		}
		sp.noUntaken = true
	}
	return pickScored(ix, r, l, d, s)
}

// pickScored returns the first usable node of the best-scoring class.
func pickScored(ix *topology.Index, r Request, l int, d topology.DomainID, s binpack.Scorer) (topology.NodeID, bool) {
	g := r.GPUsPerMember
	// Candidate classes: the job's own class, or every GPU type for a job
	// that takes any, so the scorer sees the type.
	type cand struct {
		c   topology.Class
		typ string
	}
	var buf [4]cand
	cands := buf[:0]
	for i := range ix.NumTypes() {
		c, typ := ix.TypeClass(i)
		if r.Class == topology.AnyType || c == r.Class {
			cands = append(cands, cand{c, typ})
		}
	}
	best, bestScore, found := topology.NodeID(-1), int64(0), false
	// Fewer free GPUs first, then type order: a later candidate wins only
	// with a strictly higher score.
	for f := g; f <= ix.MaxGPUs(); f++ {
		for _, k := range cands {
			if ix.NodesWithFree(l, d, k.c, f) == 0 {
				continue
			}
			sc := s.Score(binpack.Candidate{Free: f, Request: g, GPUType: k.typ})
			if found && sc <= bestScore {
				continue
			}
			if n, ok := firstNotAvoided(ix, r, l, d, k.c, f); ok {
				best, bestScore, found = n, sc, true
			}
		}
	}
	return best, found
}

func firstNotAvoided(ix *topology.Index, r Request, l int, d topology.DomainID, c topology.Class, f int) (topology.NodeID, bool) {
	if r.limited(ix) {
		return ix.FirstFit(l, d, c, f, 1, r.GPUsPerMember, r.CPUMillis, r.MemoryMiB, r.Avoid)
	}
	if r.Avoid == nil {
		return ix.First(l, d, c, f)
	}
	for m := range ix.Bucket(l, d, c, f) {
		if !r.Avoid(m) {
			return m, true
		}
	}
	return -1, false
}

// Allocation converts a placement to node names and GPU indices, in node
// name order (NodeID order), GPUs ascending, one entry per node: the
// canonical form ([topology.Allocation.Canonical]). It allocates the
// result and one array for all its GPU indices.
func (p Placement) Allocation(ix *topology.Index) topology.Allocation {
	if len(p.Slots) == 0 {
		return nil
	}
	slots := p.Slots
	byNode := func(a, b Slot) int { return int(a.Node) - int(b.Node) }
	if !slices.IsSortedFunc(slots, byNode) {
		slots = slices.Clone(slots)
		slices.SortStableFunc(slots, byNode)
	}
	total := 0
	for _, s := range slots {
		total += s.GPUs.Len()
	}
	gpus := make([]int, 0, total)
	out := make(topology.Allocation, 0, len(slots))
	for i := 0; i < len(slots); {
		n, set := slots[i].Node, slots[i].GPUs
		for i++; i < len(slots) && slots[i].Node == n; i++ {
			set |= slots[i].GPUs
		}
		from := len(gpus)
		for g := set; g != 0; g &= g - 1 {
			gpus = append(gpus, bits.TrailingZeros64(uint64(g)))
		}
		out = append(out, topology.NodeGPUs{Node: ix.Name(n), GPUs: gpus[from:len(gpus):len(gpus)]})
	}
	return out
}

// Release frees the GPUs of p in ix. O(slots × L) for L levels.
func (p Placement) Release(ix *topology.Index) { undo(ix, p) }

// String describes a placement for messages and tests.
func (p Placement) String() string {
	return fmt.Sprintf("%d slots at level %d domain %d", len(p.Slots), p.Level, p.Domain)
}

// Fill places the whole gang r inside domain d of level l, ignoring r's
// topology levels, or changes nothing and reports false. It is the second
// half of [Place], for callers that choose the domain themselves, and
// costs what that half does: O(nodes touched × (G + L)).
func Fill(ix *topology.Index, r Request, l int, d topology.DomainID, s binpack.Scorer) (Placement, bool) {
	if !r.wellFormed(ix) || l < topology.ClusterLevel || l >= ix.NumLevels() || d < 0 || int(d) >= ix.NumDomains(l) {
		return Placement{}, false
	}
	// Capacity ignores Avoid, so it is a necessary condition either way.
	if capacity(ix, r, l, d) < r.Members {
		return Placement{}, false
	}
	return fill(ix, r, l, d, s)
}

// Valid reports whether r can be asked of ix: at least one member, GPUs
// per member from 1 to the most GPUs of a node, a GPU class of ix, a
// spread level of ix (or NoLevel), and required and preferred levels of
// ix (or NoLevel). Place reports Invalid for a request that is not.
func (r Request) Valid(ix *topology.Index) bool {
	nl := ix.NumLevels()
	return r.wellFormed(ix) && validLevel(r.Required, nl) && validLevel(r.Preferred, nl)
}

// wellFormed is Valid but for the required and preferred levels.
func (r Request) wellFormed(ix *topology.Index) bool {
	return r.Members >= 1 && r.GPUsPerMember >= 1 && r.GPUsPerMember <= ix.MaxGPUs() &&
		r.CPUMillis >= 0 && r.MemoryMiB >= 0 &&
		r.Class >= 0 && int(r.Class) < ix.NumClasses() &&
		validLevel(r.SpreadLevel, ix.NumLevels())
}

// validLevel reports whether l is NoLevel or one of nl declared levels.
func validLevel(l, nl int) bool { return l == NoLevel || (l >= 0 && l < nl) }
