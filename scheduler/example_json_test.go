package scheduler_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// The JSON contract of the step command, from Go: DecodeSnapshot reads and
// validates a snapshot (keys left out take their defaults: one member,
// tier 3, pending), Step decides and EncodeDecision writes the decision.
// Job "small" packs onto the free half of n1; "wide" asks for more
// whole nodes than the cluster has.
func ExampleDecodeSnapshot() {
	in := `{
	  "now": "2026-12-02T00:00:00Z",
	  "cluster": {"nodes": [{"name": "n0", "gpus": 8}, {"name": "n1", "gpus": 8}]},
	  "jobs": [
	    {"id": "run", "gpusPerMember": 4, "timeLimit": "12h", "state": "running",
	     "started": "2026-12-01T18:00:00Z", "allocation": [{"node": "n1", "gpus": [0, 1, 2, 3]}]},
	    {"id": "wide", "members": 3, "gpusPerMember": 8, "timeLimit": "1h", "submitted": "2026-12-01T23:00:00Z"},
	    {"id": "small", "gpusPerMember": 4, "timeLimit": "2h", "submitted": "2026-12-01T23:30:00Z"}
	  ]
	}`
	s := scheduler.New(scheduler.Config{})
	snap, err := s.DecodeSnapshot(strings.NewReader(in))
	if err != nil {
		fmt.Println(err) // a *ValidationError naming the field
		return
	}
	d, err := s.Step(snap)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := scheduler.EncodeDecision(os.Stdout, d); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	//   "placements": [
	//     {
	//       "job": "small",
	//       "allocation": [
	//         {
	//           "node": "n1",
	//           "gpus": [
	//             4,
	//             5,
	//             6,
	//             7
	//           ]
	//         }
	//       ]
	//     }
	//   ],
	//   "evictions": [],
	//   "reservations": [],
	//   "pending": [
	//     {
	//       "job": "wide",
	//       "reason": "unsatisfiable",
	//       "message": "needs 3×8 GPUs; this cluster holds at most 2 such members"
	//     }
	//   ],
	//   "nextWake": "2026-12-02T04:00:00Z"
	// }
}

// Validate checks a snapshot built in Go before Step does; every error it
// returns is a *ValidationError with the path of the offending field.
// Here the second job leaves Members at Go's zero value.
func ExampleValidate() {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	snap := &scheduler.Snapshot{Now: now, Cluster: topology.Uniform(2, 8, "H100"), Jobs: []scheduler.Job{
		{ID: "ok", Tier: scheduler.P1, Members: 1, GPUsPerMember: 8, Submitted: now},
		{ID: "no-members", Tier: scheduler.P1, GPUsPerMember: 8, Submitted: now},
	}}
	err := scheduler.Validate(snap)
	fmt.Println(err)
	var ve *scheduler.ValidationError
	if errors.As(err, &ve) {
		fmt.Printf("field %s; %s\n", ve.Field, ve.Msg)
	}
	// Output:
	// snapshot: jobs[1] "no-members": members must be >= 1, got 0
	// field jobs[1] "no-members": members; must be >= 1, got 0
}
