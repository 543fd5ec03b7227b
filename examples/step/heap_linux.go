package main

import (
	"runtime"
	"syscall"
	"unsafe"
)

// madvHugePage is MADV_HUGEPAGE of Linux's madvise(2).
const madvHugePage = 14

// hugeHeap grows the heap by about n bytes and asks the kernel to back it
// with transparent huge pages. The runtime maps heap memory as it grows,
// each growth a mapping of its own, so the advice must follow a growth:
// one large allocation maps n bytes, the advice covers them (and the heap
// before them in the same 64 MiB arena), and a collection frees them for
// the decode and the Step that follow. Nothing is touched here: pages are
// faulted in, 2 MiB at a time, only where the Step writes. Where the
// kernel refuses the advice (huge pages off), nothing changes but the
// cost of the collection.
func hugeHeap(n int) {
	b := make([]byte, n)
	end := uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(n)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b))) &^ (64<<20 - 1)
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvHugePage) // where refused, nothing changes
	b = nil
	runtime.GC()
}
