//go:build !linux

package main

// hugeHeap does nothing where the runtime's heap cannot be advised to use
// huge pages (see heap.go).
func hugeHeap(int) {}
