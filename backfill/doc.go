// Package backfill is the availability profile behind reservations and
// backfill: which GPUs are free now, which become free when, and which are
// promised to whom from when on.
//
// A [Profile] is layered over a live [topology.Index]. Times are offsets
// from now (0 is now). The host (or the scheduler) records when each held
// GPU is released ([Profile.AddRelease]: a running job at started + time
// limit - now (the scheduler adds the grace its eviction at the limit
// gets), an evicting job once its checkpoint grace is over; jobs without
// a limit never release). Then, job by job in priority order:
//
//	if pl, out := prof.PlaceNow(req, limit, nil); out == gang.Placed {
//		start(pl.Allocation(prof.Index())) // now: it delays no reservation
//	} else if st, ok := prof.Earliest(req, limit, nil, 0); ok && reserveMore {
//		prof.Reserve(st.Placement, st.At, limit) // EASY: first K; conservative: all
//	}
//
// The rule everything follows: a job that runs during [t, t+d) may use a
// GPU that is free now or released by t and that no reservation holds at
// any moment of [t, t+d). So a job may start now only if it ends before
// every reservation on the GPUs it takes, or takes GPUs nobody reserved:
// on a flat pool of one-GPU nodes that is exactly the EASY rule (it ends
// before the shadow time, or uses no more than the extra nodes), because
// [Profile.Earliest] gives a reservation the GPUs that are busy now and
// free by its start before any GPU that is free now, and
// [Profile.PlaceNow] gives a job that ends before a reservation starts
// that reservation's free GPUs before any GPU nobody reserved. Replaying
// the KTH-SP2 log this way matches a count-based textbook EASY job for
// job.
//
// Releases and reservation ends live in a B-tree keyed by time
// (github.com/google/btree, holding sorted runs of up to 128 entries, so
// that walking consecutive entries is a loop over a slice; releases
// enter it at the next query), reservation starts in another, and each
// node keeps its own short event list; see [Profile] for the cost of a
// query. A gang whose members each take a whole node of the largest
// size, and that avoids no node, finds its start, and usually its
// nodes, from each node's whole-node free windows, kept beside the
// events, instead of sweeping a copy of the index.
package backfill
