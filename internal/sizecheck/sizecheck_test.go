package sizecheck

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps its errors.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheck: a function over the limit is reported, one whose body starts
// with the reason is not.
func TestCheck(t *testing.T) {
	r := &recorder{TB: t}
	Check(r, "testdata/long")
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "tooLong") {
		t.Fatalf("errors = %q; want one, for tooLong", r.errs)
	}
}
