// Package measure counts what a piece of code costs in heap allocations,
// for the tests that hold an input's cost to its size: they count work
// rather than time, so a regression fails the same way on a fast machine
// and a loaded one.
package measure

import "runtime"

// Allocated returns the bytes and the number of heap allocations made
// while f ran. It reads the whole process's counters, so f should be all
// that runs (not under t.Parallel).
func Allocated(f func()) (bytes, mallocs uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}
