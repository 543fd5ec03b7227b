// Package gen holds the random generators shared by the property tests of
// the scheduler, backfill, gang and topology packages; only test files
// import it. Everything is drawn from a [rapid.T], so a failing case
// shrinks and replays from its seed.
//
// [Snapshot] draws a whole valid snapshot at the fixed time [Now]: a
// [Cluster] of up to 64 nodes, [Running] jobs on non-overlapping
// allocations, [Pending] jobs of varied shapes and constraints, and the
// [Teams] with shares, usage and, rarely, quotas. [Clone] deep-copies a
// snapshot; [Shuffle] and [ShuffleAllocations] reorder one, for tests that
// check an answer does not depend on input order.
package gen
