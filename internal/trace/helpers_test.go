package trace

import (
	"reflect"
	"testing"
)

// The module's go.mod does not list the dependencies of the assertion
// library, so these tests use small local helpers instead.

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func equal[T any](t *testing.T, want, got T, what string) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s:\n want %#v\n  got %#v", what, want, got)
	}
}

// checkJobs asserts the invariants every reader guarantees.
func checkJobs(t *testing.T, tr *Trace) {
	t.Helper()
	for i, j := range tr.Jobs {
		if j.Procs < 1 || j.ReqProcs < 1 || j.Run < 1 || j.Limit < 1 {
			t.Fatalf("job %d (%+v): Procs, ReqProcs, Run and Limit must be >= 1", i, j)
		}
		if j.Kind != KindTraining && j.Kind != KindInference {
			t.Fatalf("job %d: kind %q", i, j.Kind)
		}
		if j.Tier < 0 {
			t.Fatalf("job %d: tier %d", i, j.Tier)
		}
		if i > 0 {
			p := tr.Jobs[i-1]
			if p.Submit > j.Submit || (p.Submit == j.Submit && p.Line >= j.Line) {
				t.Fatalf("jobs %d and %d out of (submit, line) order", i-1, i)
			}
		}
	}
	for i := 1; i < len(tr.Skipped); i++ {
		if tr.Skipped[i-1].Cause >= tr.Skipped[i].Cause {
			t.Fatalf("skips not sorted by cause: %v", tr.Skipped)
		}
	}
}
