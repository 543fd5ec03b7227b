package scheduler

import (
	"errors"
	"hash/maphash"
	"math"
)

// ErrPolicyModifiedSnapshot is returned by Step when a policy (an
// Orderer, Admitter, scorer, victim selector, reservation policy or
// domain chooser: Config.Order, Admit, Pack, Spread, Victims, Reserve or
// Domains) changed the snapshot it was shown. Policies must treat the
// snapshot as read-only; Step checks this instead of copying the snapshot
// for every call.
var ErrPolicyModifiedSnapshot = errors.New("scheduler: a policy modified the snapshot")

// ErrPolicyOrder is returned by Step when an Orderer did not leave a
// permutation of the jobs it was given (it dropped, added or repeated
// one).
var ErrPolicyOrder = errors.New("scheduler: the Orderer did not return a permutation of the pending jobs")

// snapshotGuard checks, when a custom policy is configured, that the
// policies leave the snapshot as they found it. The built-in policies are
// known not to change it, so without a custom one the guard does nothing.
type snapshotGuard struct {
	snap   *Snapshot
	custom bool
	seed   maphash.Seed
	before uint64 // the snapshot's fingerprint before any policy ran
}

func newSnapshotGuard(cfg *Config, snap *Snapshot) snapshotGuard {
	g := snapshotGuard{snap: snap, custom: !builtinOrder(cfg.Order) || cfg.Admit != nil || cfg.Victims != nil ||
		cfg.Pack != nil || cfg.Spread != nil || cfg.Reserve != nil || cfg.Domains != nil}
	if g.custom {
		g.seed = maphash.MakeSeed()
		g.before = fingerprint(g.seed, snap)
	}
	return g
}

// builtinOrder reports whether o is nil or one of the package's own
// orders, which are known not to modify the snapshot.
func builtinOrder(o Orderer) bool {
	switch o.(type) {
	case nil, TierOrder, Multifactor, *Multifactor:
		return true
	}
	return false
}

// run runs f, which calls the policies, and returns its error, or
// ErrPolicyModifiedSnapshot when a custom policy changed the snapshot. A
// policy that changes the snapshot can leave it in a state Step does not
// expect and make it panic: that is the policy's broken contract, not a
// crash, and is reported as such; a panic with the snapshot unchanged
// goes on.
func (g snapshotGuard) run(f func() error) (err error) {
	if !g.custom {
		return f()
	}
	defer func() {
		if p := recover(); p != nil {
			if fingerprint(g.seed, g.snap) == g.before {
				panic(p)
			}
			err = ErrPolicyModifiedSnapshot
		}
	}()
	if err := f(); err != nil {
		return err
	}
	if fingerprint(g.seed, g.snap) != g.before {
		return ErrPolicyModifiedSnapshot
	}
	return nil
}

// fingerprint hashes every field of the snapshot that Step reads, so that
// Step can tell whether a policy changed it. O(size of the snapshot).
func fingerprint(seed maphash.Seed, s *Snapshot) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	i64 := func(v int64) {
		var b [8]byte
		for k := range b {
			b[k] = byte(v >> (8 * k))
		}
		h.Write(b[:])
	}
	str := func(v string) {
		i64(int64(len(v)))
		h.WriteString(v)
	}
	i64(s.Now.UnixNano())
	for _, l := range s.Cluster.Levels {
		str(l)
	}
	for i := range s.Cluster.Nodes {
		n := &s.Cluster.Nodes[i]
		str(n.Name)
		str(n.GPUType)
		i64(int64(n.GPUs))
		i64(int64(n.State))
		i64(int64(len(n.Domains)))
		for _, l := range s.Cluster.Levels {
			str(n.Domains[l])
		}
		for _, g := range n.Unhealthy {
			i64(int64(g))
		}
	}
	for i := range s.Teams {
		t := &s.Teams[i]
		str(t.Name)
		str(t.Parent)
		i64(int64(math.Float64bits(t.Share)))
		i64(int64(math.Float64bits(t.Usage)))
		if t.Quota != nil {
			i64(int64(t.Quota.GPUs))
			i64(int64(t.Quota.BorrowLimit))
		}
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		str(j.ID)
		str(j.Team)
		str(j.GPUType)
		str(j.Topology.Required)
		str(j.Topology.Preferred)
		str(j.Group)
		str(j.SpreadLevel)
		mix := int64(0)
		if j.MixGPUTypes {
			mix = 1
		}
		i64(int64(j.Tier.n) | int64(j.Kind)<<16 | int64(j.State)<<24 | int64(j.Placement)<<32 | mix<<40)
		i64(int64(j.Members)<<32 | int64(j.GPUsPerMember))
		i64(int64(j.TimeLimit))
		i64(int64(j.CheckpointGrace))
		i64(j.Submitted.UnixNano())
		i64(j.Started.UnixNano())
		i64(j.EvictedAt.UnixNano())
		for _, a := range j.Allocation {
			str(a.Node)
			for _, g := range a.GPUs {
				i64(int64(g))
			}
		}
	}
	return h.Sum64()
}
