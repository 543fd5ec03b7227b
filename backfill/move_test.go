package backfill

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/gang"
	"github.com/gpusched/gpusched/topology"
)

// quarter is the grid the move tests draw times on; a fifth of the draws
// land a nanosecond off it, on either side.
const quarter = 15 * time.Minute

func drawAt(t *rapid.T, label string) time.Duration {
	v := time.Duration(rapid.IntRange(0, 16).Draw(t, label)) * quarter
	if rapid.IntRange(0, 4).Draw(t, label+"Odd") == 0 {
		v += time.Duration(rapid.IntRange(-1, 1).Draw(t, label+"Ns"))
	}
	return max(v, 0)
}

func drawRun(t *rapid.T, label string) time.Duration {
	if rapid.IntRange(0, 7).Draw(t, label+"Forever") == 0 {
		return Forever
	}
	v := time.Duration(rapid.IntRange(0, 12).Draw(t, label)) * quarter
	if rapid.IntRange(0, 4).Draw(t, label+"Odd") == 0 {
		v += time.Duration(rapid.IntRange(-1, 1).Draw(t, label+"Ns"))
	}
	return max(v, 1)
}

// drawMoveWorld draws one to maxNodes nodes of 2, 4 or 8 GPUs, one in
// states of them draining and one in states with an unhealthy GPU, and
// returns their index and a profile over it.
func drawMoveWorld(t *rapid.T, maxNodes, states int) (*topology.Index, *Profile) {
	var c topology.Cluster
	for i := range rapid.IntRange(1, maxNodes).Draw(t, "nodes") {
		nd := topology.Node{Name: fmt.Sprintf("n%d", i), GPUs: rapid.SampledFrom([]int{2, 4, 8}).Draw(t, "gpus"), GPUType: "H100"}
		switch rapid.IntRange(0, states-1).Draw(t, "state") {
		case 0:
			nd.State = topology.Draining
		case 1:
			nd.Unhealthy = []int{rapid.IntRange(0, nd.GPUs-1).Draw(t, "sick")}
		}
		c.Nodes = append(c.Nodes, nd)
	}
	ix, err := topology.NewIndex(&c)
	if err != nil {
		t.Fatal(err)
	}
	return ix, NewProfile(ix)
}

// moveReservation is a reservation a move test made.
type moveReservation struct {
	n          topology.NodeID
	s          topology.GPUSet
	start, end time.Duration
}

// firstReservedIn returns the earliest start of a reservation in rs of a
// GPU of s on node n (Forever: none). A release may not move past it.
func firstReservedIn(rs []moveReservation, n topology.NodeID, s topology.GPUSet) time.Duration {
	f := Forever
	for _, r := range rs {
		if r.n == n && r.s&s != 0 {
			f = min(f, r.start)
		}
	}
	return f
}

// TestMovesKeepCursorsExact drives cursors through random moves among
// random releases (moved earlier and later), reservations (some stacked
// on the previous one), GPUs taken and freed in the live index, draining
// nodes and unhealthy GPUs, and checks after every step that every cursor
// shows, node by node, what the usability rule gives for its run. It
// fails within a few hundred cases when any of move's rules for leaving
// a node alone is loosened.
func TestMovesKeepCursorsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkMoves(t, false) })
}

// TestMovesKeepCursorsExactAmongQueries is TestMovesKeepCursorsExact on
// a busier profile: up to eight nodes, so that moves pass entries one by
// one more often than the budget sends them to recompute every node;
// timeline runs of a few entries, so that whole runs are skipped; GPUs
// released now; and real queries (which bring cursors to their own runs
// and sweep them) between the moves. After every step every cursor must
// show, node by node, what the usability rule gives for its run.
func TestMovesKeepCursorsExactAmongQueries(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkMoves(t, true) })
}

// checkMoves draws a profile and drives its cursors and the live index
// through random operations, checking the profile's invariants (every
// cursor exact among them) after each; busier, as
// TestMovesKeepCursorsExactAmongQueries says.
func checkMoves(t *rapid.T, busier bool) {
	nodes, states, ops, opMax := 3, 8, 80, 9
	if busier {
		nodes, states, ops, opMax = 8, 10, 120, 11
	}
	ix, p := drawMoveWorld(t, nodes, states)
	if k := rapid.IntRange(1, 9).Draw(t, "runs"); busier && k <= 8 {
		ShortRuns(p, k)
	}
	// relAt draws a release up to lim, now and then now when busier.
	relAt := func(label string, lim time.Duration) time.Duration {
		if busier && rapid.IntRange(0, 5).Draw(t, label+"Zero") == 0 {
			return 0
		}
		return time.Duration(rapid.Int64Range(1, int64(lim)).Draw(t, label))
	}
	var reserved []moveReservation
	for n := range topology.NodeID(ix.NumNodes()) {
		busy := topology.GPUSet(rapid.Uint64Range(0, uint64(topology.FirstN(ix.GPUs(n)))).Draw(t, "held"))
		if err := ix.TakeSet(n, busy); err != nil {
			t.Fatal(err)
		}
		for g := busy; g != 0; g &= g - 1 {
			if rapid.IntRange(0, 4).Draw(t, "never") > 0 {
				p.AddRelease(n, g&-g, relAt("release", 16*quarter))
			}
		}
	}
	// A release may not move past a reservation of its GPUs.
	firstReserved := func(n topology.NodeID, s topology.GPUSet) time.Duration { return firstReservedIn(reserved, n, s) }
	node := func(label string) topology.NodeID {
		return topology.NodeID(rapid.IntRange(0, ix.NumNodes()-1).Draw(t, label))
	}
	for range rapid.IntRange(1, ops).Draw(t, "ops") {
		switch op := rapid.IntRange(0, opMax).Draw(t, "op"); {
		case op == 0: // move a release, earlier or later
			n := node("moveNode")
			s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "moveSet"))
			if lim := min(firstReserved(n, s), 20*quarter); s != 0 && lim >= 1 {
				p.MoveRelease(n, s, relAt("moveAt", lim))
			}
		case op <= 2: // reserve usable GPUs, sometimes right after the last reservation
			d := drawRun(t, "reserveRun")
			var n topology.NodeID
			var s topology.GPUSet
			var start time.Duration
			if k := len(reserved) - 1; k >= 0 && reserved[k].end != Forever && rapid.Bool().Draw(t, "stack") {
				n, s, start = reserved[k].n, reserved[k].s, reserved[k].end
			} else {
				n, s, start = node("reserveNode"), topology.GPUSet(rapid.Uint64().Draw(t, "reserveSet")), drawAt(t, "reserveAt")
			}
			if ix.State(n) != topology.Ready {
				continue
			}
			if s &= p.usable(n, ix.FreeSet(n), start, run(d)) & ix.Healthy(n); s == 0 {
				continue
			}
			p.Reserve(gang.Placement{Slots: []gang.Slot{{Node: n, GPUs: s, Members: 1}}}, start, d)
			reserved = append(reserved, moveReservation{n, s, start, add(start, run(d))})
		case op == 3: // a job ends early, or one is placed now (until its release, if any)
			n := node("liveNode")
			if rapid.Bool().Draw(t, "end") {
				ix.Release(n, ix.Held(n)&topology.GPUSet(rapid.Uint64().Draw(t, "endSet")))
				continue
			}
			s := ix.FreeSet(n) & topology.GPUSet(rapid.Uint64().Draw(t, "takeSet"))
			lim := firstReserved(n, s)
			if s == 0 || lim < 1 {
				continue
			}
			if err := ix.TakeSet(n, s); err != nil {
				t.Fatal(err)
			}
			if lim != Forever || rapid.Bool().Draw(t, "limited") {
				p.AddRelease(n, s, time.Duration(rapid.Int64Range(1, int64(min(lim, 20*quarter))).Draw(t, "takeUntil")))
			}
		case op == 4: // another release of held GPUs
			n := node("addNode")
			s := ix.Held(n) & topology.GPUSet(rapid.Uint64().Draw(t, "addSet"))
			if lim := min(firstReserved(n, s), 20*quarter); s != 0 && lim >= 1 {
				p.AddRelease(n, s, relAt("addAt", lim))
			}
		case op == 5 && busier: // a real query, which brings a cursor to its run and sweeps it
			r := gang.NewRequest(rapid.IntRange(1, 3).Draw(t, "m"), rapid.SampledFrom([]int{1, 2, 4}).Draw(t, "g"))
			if r.Valid(ix) {
				p.Earliest(r, drawRun(t, "qrun"), nil, drawAt(t, "qat"))
			}
		default: // take a cursor (perhaps a new copy) and move it around
			cur := p.cursorFor(drawAt(t, "cursorAt"), drawRun(t, "cursorRun"))
			if err := CheckInvariants(p); err != nil {
				t.Fatalf("after cursorFor: %v", err)
			}
			for range rapid.IntRange(1, 6).Draw(t, "moves") {
				from := fmt.Sprintf("[%s, +%s)", cur.at, cur.d)
				at, d := drawAt(t, "at"), drawRun(t, "run")
				if busier && cur.at >= 0 && rapid.IntRange(0, 3).Draw(t, "sameAt") == 0 {
					at = cur.at // only the run's length changes
				}
				p.move(cur, at, d)
				if err := CheckInvariants(p); err != nil {
					t.Fatalf("move %s -> [%s, +%s): %v", from, at, d, err)
				}
			}
		}
		if err := CheckInvariants(p); err != nil {
			t.Fatal(err)
		}
	}
}
