package gen_test

import (
	"bytes"
	"fmt"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
)

// A property test draws snapshots with gen inside rapid.Check; here one
// draw is made from a fixed seed. The snapshot is valid, and Step decides
// the same for it and for a shuffled copy, the determinism invariant
// that gen.Shuffle exists to check.
func Example() {
	type pair struct{ snap, shuffled *scheduler.Snapshot }
	p := rapid.Custom(func(t *rapid.T) pair {
		s := gen.Snapshot(t)
		return pair{s, gen.Shuffle(t, s)}
	}).Example(1)

	fmt.Println("valid:", scheduler.Validate(p.snap) == nil)
	encode := func(s *scheduler.Snapshot) []byte {
		d, err := scheduler.New(scheduler.Config{}).Step(s)
		if err != nil {
			return []byte(err.Error())
		}
		var b bytes.Buffer
		if err := scheduler.EncodeDecision(&b, d); err != nil {
			return []byte(err.Error())
		}
		return b.Bytes()
	}
	fmt.Println("same decision:", bytes.Equal(encode(p.snap), encode(p.shuffled)))
	// Output:
	// valid: true
	// same decision: true
}
