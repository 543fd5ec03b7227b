package measure

import "testing"

var sink []byte

func TestAllocatedCountsWhatFAllocates(t *testing.T) {
	bytes, mallocs := Allocated(func() { sink = make([]byte, 1<<20) })
	if bytes < 1<<20 || mallocs < 1 {
		t.Fatalf("a 1 MiB allocation counted as %d bytes in %d allocations", bytes, mallocs)
	}
	bytes, _ = Allocated(func() {})
	if bytes >= 1<<20 {
		t.Fatalf("nothing allocated counted as %d bytes", bytes)
	}
}
