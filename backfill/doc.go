// Package backfill is the availability profile behind reservations and
// backfill: which GPUs are free now, which become free when, and which are
// promised to whom from when on.
//
// # The rule
//
// Times are offsets from now (0 is now). A job that runs during [t, t+d)
// may use a GPU that is free now or released by t and that no reservation
// holds at any moment of [t, t+d). Every query answers by this rule and
// nothing else. On one node whose GPUs 0-1 are free, whose GPUs 2-3 are
// released at 2h, and with a reservation of GPUs 0-3 over [3h, 5h):
//
//	run        usable GPUs   why
//	[0, 1h)    0 1           2 3 are held until 2h
//	[0, 4h)    none          0 1 are reserved from 3h; 2 3 are held
//	[2h, 3h)   0 1 2 3       released by 2h, reserved only from 3h
//	[2h, 4h)   none          the reservation overlaps the run
//	[5h, 6h)   0 1 2 3       the reservation is over
//
// # Use
//
// A [Profile] is layered over a live [topology.Index]. The host (or the
// scheduler) records when each held GPU is released ([Profile.AddRelease]:
// a running job at started + time limit - now, an evicting job when its
// checkpoint grace is over; a job without a limit never releases;
// [Profile.MoveRelease] when an eviction changes that). Then, job by job
// in priority order:
//
//	if pl, out := prof.PlaceNow(req, limit, nil); out == gang.Placed {
//		start(pl.Allocation(prof.Index())) // now: it delays no reservation
//	} else if st, ok := prof.Earliest(req, limit, nil, 0); ok && reserveMore {
//		prof.Reserve(st.Placement, st.At, limit) // EASY: first K; conservative: all
//	}
//
// So a job starts now only if it ends before every reservation on the
// GPUs it takes, or takes GPUs nobody reserved. On a flat pool of one-GPU
// nodes that is exactly the EASY rule (a backfilled job ends before the
// shadow time, or uses no more than the extra nodes), because
// [Profile.Earliest] gives a reservation the GPUs that are busy now and
// free by its start before any GPU free now, and [Profile.PlaceNow] gives
// a job that ends before a reservation starts that reservation's free GPUs
// before any GPU nobody reserved.
//
// # Operations and their cost
//
// For e events of a node, E events in all, g GPUs per node and L levels:
//
//	AddRelease          O(e + log E)
//	MoveRelease         O(e·(e + log E))
//	Reserve             O(e·(1+g) + log E) per node of the placement
//	PlaceNow, FitsNow   O(min(F, R)·e·L) plus one gang.Place, for F nodes
//	                    with free GPUs and R reservations that start
//	                    before the run ends
//	Earliest(By)        a sweep: see Profile
//	Reserved            O(1) when no reservation of the node starts in
//	                    the window, else O(e)
//
// # How it is built
//
// Releases and reservation ends are kept in a B-tree of time-ordered runs
// of entries (github.com/google/btree), reservation starts in another, and
// each node keeps its own short list of events. [Profile.Earliest] sweeps a
// cursor, a copy of the index that shows the GPUs usable for one run,
// forward over the moments at which capacity can grow; it starts where a
// count of the free GPUs over time first allows the run, or where an
// earlier answer for a weaker request proves nothing fits before. A gang
// whose members each take a whole node of the largest size finds its start
// from each node's whole-node free windows instead. A Profile is not safe
// for concurrent use, and an index serves one profile at a time.
//
// # CPU and memory
//
// Where nodes of the index limit CPU or memory, the profile applies the
// same rule to them: a run may use what no job holds at any moment of it.
// A held GPU carries a share of its job's CPU and memory, free at its
// release ([Profile.AddReleaseUse]); a reservation holds its slots' CPU and
// memory over its run. A request that asks for some is placed where its
// GPUs, CPU and memory all fit for the whole run (see resources.go).
package backfill
