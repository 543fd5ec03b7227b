package backfill_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/backfill"
	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/topology"
)

// resOracle is oracle with CPU: each hold (a running job's GPUs on a
// node) and each reservation uses some CPU while it holds its GPUs, and
// a member fits a node only where its CPU fits too at every moment of its
// run, counted from plain lists.
type resOracle struct {
	*oracle
	capacity []int64 // per node; 0: not limited
	holds    []resHold
	resv     []resEvent
}

type resHold struct {
	n       topology.NodeID
	cpu     int64
	release time.Duration // Forever: never; <= 0: released now
}

type resEvent struct {
	n          topology.NodeID
	cpu        int64
	start, end time.Duration
}

// usedAt is the CPU node n uses at moment m: holds not yet released (a
// hold released at or before now still counts at 0 for a start now) and
// reservations holding m.
func (o *resOracle) usedAt(n topology.NodeID, m time.Duration, placing bool) int64 {
	var u int64
	for _, h := range o.holds {
		gone := h.release != backfill.Forever && max(h.release, 0) <= m && !(placing && m == 0)
		if h.n == n && !gone {
			u += h.cpu
		}
	}
	for _, e := range o.resv {
		if e.n == n && e.start <= m && m < e.end {
			u += e.cpu
		}
	}
	return u
}

// peak is the most CPU node n uses at any moment of [t, t+d): at t and
// at every event inside.
func (o *resOracle) peak(n topology.NodeID, t, d time.Duration, placing bool) int64 {
	end := plus(t, max(d, 1))
	ms := []time.Duration{t}
	for _, h := range o.holds {
		if h.release > t && h.release < end {
			ms = append(ms, h.release)
		}
	}
	for _, e := range o.resv {
		for _, m := range []time.Duration{e.start, e.end} {
			if m > t && m < end {
				ms = append(ms, m)
			}
		}
	}
	var most int64
	for _, m := range ms {
		most = max(most, o.usedAt(n, m, placing))
	}
	return most
}

// members is how many members of r node n holds for a run [t, t+d).
func (o *resOracle) members(r gang.Request, n topology.NodeID, t, d time.Duration) int {
	k := o.usable(n, t, d).Len() / r.GPUsPerMember
	if c := o.capacity[n]; c > 0 && r.CPUMillis > 0 {
		k = min(k, int(max(c-o.peak(n, t, d, o.placing), 0)/r.CPUMillis))
	}
	return k
}

func (o *resOracle) fits(r gang.Request, t, d time.Duration) bool {
	level := topology.ClusterLevel
	if r.Required != gang.NoLevel {
		level = r.Required
	}
	for dom := range topology.DomainID(o.ix.NumDomains(level)) {
		m := 0
		for n := range topology.NodeID(o.ix.NumNodes()) {
			if o.ix.InClass(n, r.Class) && (level == topology.ClusterLevel || o.ix.DomainOf(level, n) == dom) && (r.Avoid == nil || !r.Avoid(n)) {
				m += o.members(r, n, t, d)
			}
		}
		if m >= r.Members {
			return true
		}
	}
	return false
}

func (o *resOracle) earliest(r gang.Request, d, notBefore time.Duration) (time.Duration, bool) {
	var ends []time.Duration
	for _, h := range o.holds {
		ends = append(ends, h.release)
	}
	for _, e := range o.resv {
		ends = append(ends, e.end)
	}
	return firstFitting(notBefore, ends, func(t time.Duration) bool { return o.fits(r, t, d) })
}

// checkCPU fails unless the slots of pl fit their nodes' CPU at every
// moment of [at, at+d).
func (o *resOracle) checkCPU(t *rapid.T, r gang.Request, pl gang.Placement, at, d time.Duration) {
	per := map[topology.NodeID]int64{}
	for _, s := range pl.Slots {
		if s.CPUMillis != int64(s.Members)*r.CPUMillis {
			t.Fatalf("slot %+v: CPU not its members'", s)
		}
		per[s.Node] += s.CPUMillis
	}
	for n, cpu := range per {
		if c := o.capacity[n]; c > 0 && cpu > 0 && o.peak(n, at, d, o.placing)+cpu > c {
			t.Fatalf("%s at %s: %d CPU more on %d of %d used", o.ix.Name(n), at, cpu, o.peak(n, at, d, o.placing), c)
		}
	}
}

// TestProfileWithCPUAgreesWithOracle: on nodes that limit CPU, with
// holds that use some and release it with their GPUs, a random sequence
// of PlaceNow and Earliest+Reserve for requests that ask for CPU gives
// the oracle's answers (the same earliest start; a start now exactly when
// the oracle finds one), and every placement fits its nodes' CPU at
// every moment of its run. Planted once each, the oracle failed both:
// releases freeing no CPU (shares not set), and a cursor moved to an
// earlier start skipping a release whose GPUs it showed unusable (rule
// 3), which left the release's CPU free.
func TestProfileWithCPUAgreesWithOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := gen.Cluster(t)
		for i := range c.Nodes {
			if rapid.IntRange(0, 3).Draw(t, "limited") > 0 {
				c.Nodes[i].CPUMillis = rapid.IntRange(1, 16).Draw(t, "cpuCap") * 1000
			}
		}
		ix, p, base := newWorld(t, &c)
		o := &resOracle{oracle: base, capacity: make([]int64, ix.NumNodes())}
		for n := range topology.NodeID(ix.NumNodes()) {
			o.capacity[n] = int64(c.Nodes[slices.IndexFunc(c.Nodes, func(x topology.Node) bool { return x.Name == ix.Name(n) })].CPUMillis)
			busy := topology.GPUSet(rapid.Uint64Range(0, uint64(topology.FirstN(ix.GPUs(n)))).Draw(t, "held"))
			if rapid.Bool().Draw(t, "idle") {
				busy = 0
			}
			if err := ix.TakeSet(n, busy); err != nil {
				t.Fatal(err)
			}
			first := busy.Lowest(rapid.IntRange(0, busy.Len()).Draw(t, "split"))
			for _, s := range []topology.GPUSet{first, busy &^ first} {
				if s == 0 {
					continue
				}
				at := drawDuration(t, "release")
				if rapid.IntRange(0, 5).Draw(t, "releasedNow") == 0 {
					at = 0
				}
				cpu := int64(rapid.IntRange(0, 8).Draw(t, "holdCPU")) * 1000
				ix.AddUse(n, cpu, 0)
				p.AddReleaseUse(n, s, at, cpu, 0)
				o.holds = append(o.holds, resHold{n: n, cpu: cpu, release: at})
				if at != backfill.Forever {
					o.releases = append(o.releases, event{n: n, set: s, start: at, end: at})
				}
			}
			o.freeNow[n] = ix.FreeSet(n)
		}
		if !ix.Limited() {
			return
		}
		for range rapid.IntRange(1, 8).Draw(t, "calls") {
			r := drawRequest(t, ix)
			r.Avoid = nil // the oracle's domains count every node
			r.CPUMillis = int64(rapid.IntRange(0, 6).Draw(t, "cpu")) * 1000
			d := drawDuration(t, "limit")
			if rapid.Bool().Draw(t, "now") {
				o.placing = true
				want := o.fits(r, 0, d)
				pl, out := p.PlaceNow(r, d, nil)
				if (out == gang.Placed) != want {
					t.Fatalf("PlaceNow(%+v, %s) = %s, oracle says fits %v", r, d, out, want)
				}
				if out == gang.Placed {
					o.checkPlacement(t, r, pl, 0, d)
					o.checkCPU(t, r, pl, 0, d)
					for _, s := range pl.Slots {
						o.freeNow[s.Node] &^= s.GPUs
						o.moveRelease(s.Node, s.GPUs, d)
						o.holds = append(o.holds, resHold{n: s.Node, cpu: s.CPUMillis, release: d})
					}
				}
				o.placing = false
				continue
			}
			st, ok := p.Earliest(r, d, nil, 0)
			at, want := o.earliest(r, d, 0)
			if ok != want || ok && st.At != at {
				t.Fatalf("Earliest(%+v, %s) = %s (ok %v), oracle %s (ok %v)", r, d, st.At, ok, at, want)
			}
			if !ok {
				continue
			}
			o.checkPlacement(t, r, st.Placement, st.At, d)
			o.checkCPU(t, r, st.Placement, st.At, d)
			p.Reserve(st.Placement, st.At, d)
			for _, s := range st.Placement.Slots {
				o.reserved = append(o.reserved, event{n: s.Node, set: s.GPUs, start: st.At, end: plus(st.At, d)})
				o.resv = append(o.resv, resEvent{n: s.Node, cpu: s.CPUMillis, start: st.At, end: plus(st.At, max(d, 1))})
			}
		}
	})
}

// TestCPUFreedWithoutUsableGPUs: a release frees its job's CPU for runs
// from its moment on even when it frees no GPU such a run can use, so a
// request held back by CPU alone may start there. One node of four GPUs
// limits CPU to 2000 millicores; a request asks for one GPU and 1000.
//   - GPU 0 is unhealthy, held by a job using 2000 that ends at 30m:
//     GPUs 1-3 are free all along, the CPU from 30m, so the request
//     starts at 30m (and would never, were the release passed over).
//   - GPU 0 is held by a job using 1000 that ends at 30m and reserved
//     again over [1h, 2h) without CPU; GPU 1 is held for good by a job
//     using 1000. A run of 2h from 30m cannot use GPU 0, but has 1000
//     free on GPUs 2-3: it starts at 30m, not at the reservation's end.
func TestCPUFreedWithoutUsableGPUs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		unhealthy []int
		cpu       int64 // of the job on GPU 0
		again     bool  // GPU 0 reserved again at 1h
	}{
		{"released GPU unhealthy", []int{0}, 2000, false},
		{"released GPU reserved again", nil, 1000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := topology.Cluster{Nodes: []topology.Node{{Name: "n0", GPUs: 4, GPUType: "H100", CPUMillis: 2000, Unhealthy: tc.unhealthy}}}
			ix, err := topology.NewIndex(&c)
			require.NoError(t, err)
			p := backfill.NewProfile(ix)
			require.NoError(t, ix.TakeSet(0, topology.SetOf(0)))
			ix.AddUse(0, tc.cpu, 0)
			p.AddReleaseUse(0, topology.SetOf(0), 30*time.Minute, tc.cpu, 0)
			if tc.again {
				require.NoError(t, ix.TakeSet(0, topology.SetOf(1)))
				ix.AddUse(0, 1000, 0)
				p.Reserve(gang.Placement{Slots: []gang.Slot{{Node: 0, GPUs: topology.SetOf(0), Members: 1}}}, time.Hour, time.Hour)
			}
			r := gang.NewRequest(1, 1)
			r.CPUMillis = 1000
			st, ok := p.Earliest(r, 2*time.Hour, nil, 0)
			require.True(t, ok)
			require.Equal(t, 30*time.Minute, st.At)
			require.NoError(t, backfill.CheckInvariants(p))
		})
	}
}
