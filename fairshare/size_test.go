package fairshare

import (
	"testing"

	"github.com/gpusched/gpusched/internal/sizecheck"
)

// TestSizes keeps the package's files and functions short (see sizecheck).
func TestSizes(t *testing.T) { sizecheck.Check(t, ".") }
