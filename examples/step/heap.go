package main

import (
	"bytes"
	"io"
	"os"
	"strings"
)

// A Step through this command is a short-lived process: nearly all the
// heap it uses is fresh from the operating system, and each page of it
// is faulted in on first touch, which on virtual machines can cost as
// much as the Step itself (BENCHMARKS.md, "The command", has the
// figures). Where the kernel offers transparent huge pages on request
// (Linux, "madvise" mode, the common default), one fault maps 2 MiB
// instead of 4 KiB. prepareHeap asks for them before a large input is
// decoded; hugeHeap (per platform) does it.

// largeInput is how many bytes of snapshot make the preparation worth its
// own cost: one garbage collection.
const largeInput = 256 << 10

// heapPerByte is how many bytes of heap a Step through the command
// allocates per byte of snapshot, a bound rounded up from the peer
// workloads.
const heapPerByte = 8

// prepareHeap readies the heap for the snapshot on stdin and returns the
// reader run should read it from (stdin itself, or what it peeked of a
// pipe followed by the rest). A regular file tells its size; a pipe is
// peeked up to largeInput bytes. Small inputs, and a GODEBUG that sets
// disablethp=1 (the runtime's own switch against huge pages for the
// heap), leave the heap as it is; otherwise grow (see main; a stand-in
// for tests) is called once with the bytes of heap to prepare, and exact
// true when the size of the input is known rather than guessed. Errors
// are left for run to meet when it reads.
func prepareHeap(stdin *os.File, grow func(bytes int, exact bool)) io.Reader {
	if strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") {
		return stdin
	}
	var in io.Reader = stdin
	size, exact := 0, false
	if fi, err := stdin.Stat(); err == nil && fi.Mode().IsRegular() {
		size, exact = int(min(fi.Size(), 1<<30)), true
	} else {
		head := make([]byte, largeInput)
		n, _ := io.ReadFull(stdin, head)
		in = io.MultiReader(bytes.NewReader(head[:n]), stdin)
		if n == largeInput {
			size = 4 * largeInput // the rest is unknown: a guess
		}
	}
	if size >= largeInput {
		grow(min(max(heapPerByte*size, 32<<20), 1<<30), exact)
	}
	return in
}
