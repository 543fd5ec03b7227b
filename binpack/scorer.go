package binpack

// Candidate describes a class of nodes that could host one member of a
// job: every ready node of one GPU type with the same number of free GPUs.
// Placers evaluate a scorer once per class, not once per node, so a scorer
// sees only what a class has in common. CPU and memory are not part of a
// class: the placer takes, in the best class, the first node that has the
// member's CPU and memory free.
type Candidate struct {
	// Free is the number of free GPUs on the node before the member lands.
	Free int
	// Request is the number of GPUs the member needs (Free >= Request).
	Request int
	// GPUType is the node's GPU type.
	GPUType string
}

// A Scorer rates a candidate for one member; the placer picks the highest
// score, breaking ties by fewer free GPUs, then by GPU type, and takes the
// node of the winning class with the lowest name. Score must
// be a pure function of its argument: it is called many times per Step and
// may be called in any order.
type Scorer interface {
	// Score rates c; higher is better.
	Score(c Candidate) int64
}

// ScorerFunc adapts a function to [Scorer].
type ScorerFunc func(c Candidate) int64

// Score calls f(c).
func (f ScorerFunc) Score(c Candidate) int64 { return f(c) }

// Consolidator is implemented by scorers that want the members of one gang
// on as few nodes as possible. The gang placer then uses its fewest-nodes
// rule instead of scoring member by member: it does not call Score at all,
// so every consolidating scorer places as [Pack] does. A scorer that is
// not a Consolidator (a [ScorerFunc], for one) is asked for each member in
// turn and may split a gang that Pack keeps whole: with Pack's scores, two
// members of 4 GPUs go to a node with 4 free GPUs and then to another
// node, where Pack puts both on one node with 8 free.
type Consolidator interface {
	// Consolidate reports whether the fewest-nodes rule applies; a scorer
	// that returns false is used member by member.
	Consolidate() bool
}

// Pack is the most-allocated scorer: the fullest node that fits wins, and
// the members of one gang go to as few nodes as possible. It leaves whole
// nodes free for large jobs. It is the default.
//
// When members ask for CPU or memory besides GPUs, Pack counts the
// scarcest resource: the members a node hosts are the fewest of its free
// GPUs, free CPU and free memory over what one member asks, so the
// fewest-nodes rule goes first to the node that hosts the most members by
// all three, and then to the fullest node (by GPUs) that hosts the rest.
// A node whose CPU is used up hosts none, however many GPUs it has free.
type Pack struct{}

// Score prefers the fewest free GPUs left after the member lands.
func (Pack) Score(c Candidate) int64 { return -int64(c.Free - c.Request) }

// Consolidate reports true: gangs go to as few nodes as possible.
func (Pack) Consolidate() bool { return true }

// Spread is the least-allocated scorer: the emptiest node wins, so load
// spreads over nodes. Members land on different nodes only as far as the
// emptiest node changes; to keep a gang's members or a group's replicas
// apart, set gang.Request.Distinct (the scheduler does for Spread
// placement).
type Spread struct{}

// Score prefers the most free GPUs.
func (Spread) Score(c Candidate) int64 { return int64(c.Free) }
