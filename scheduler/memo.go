package scheduler

import (
	"github.com/gpusched/gpusched/topology"
)

// shapeKey identifies jobs that fit or fail alike. blocks and resv pin
// down the reservations a job must respect: with resv reservations made
// so far, the blocks of them that start within its run are the blocks
// earliest-starting ones, the same set for every job with equal counts.
//
// The keys of the Step's memos have no padding between or after their
// fields: a map then hashes a key as one block of memory, where padding
// makes it hash each run of fields apart, which several lookups per
// pending job come to feel.
type shapeKey struct {
	class  topology.Class
	mode   int32 // the job's PlacementMode: the GPUs of a start, so whether preempt claims it, depend on it
	g      int
	req    int
	pre    int
	spread int // the request's SpreadLevel: it too chooses a start's GPUs (for the preemption memos; whether a job fits does not depend on it)
	blocks int
	resv   int
}
