// Command step runs one scheduling step: it reads a snapshot in JSON on
// standard input and writes the decision in JSON on standard output.
//
//	step [-config policy.json] < snapshot.json > decision.json
//	step [-config policy.json] -explain JOB < snapshot.json
//	step [-config policy.json] -forecast < snapshot.json > forecast.json
//
// With -explain it prints, instead of the decision, an account of why one
// job is where it is: its outcome and reason, its place in the queue and
// priority factors, how many nodes pass each of its constraints, its
// best topology domain, its team's quota and the reservations it would
// delay (JSON, or text with -text).
//
// With -forecast it prints, instead of the decision, the estimated start
// of every pending job (scheduler.Scheduler.Forecast), sorted by job ID:
// {"forecast": [{"job": "C", "start": "2026-12-02T12:00:00Z"}, {"job":
// "F", "start": null, "reason": "..."}]}, start null with a reason when
// no start can be bounded (scheduler.EncodeForecast).
//
// The formats are documented where they are read and written:
// scheduler.DecodeSnapshot (the snapshot, with its defaults),
// scheduler.DecodeConfig (the policy file) and
// scheduler.EncodeDecision (the decision); testdata holds samples of each.
//
// It exits 0 on success, and after -h, which prints the usage on standard
// error. On invalid input (bad JSON, an unknown or repeated field, a null,
// a bad policy file, a snapshot that fails validation, input longer than
// scheduler.MaxDocumentBytes) or a usage error it exits 2, writes nothing
// on standard output and one line on standard error naming the offending
// field. Input that cannot be JSON is refused after its first 64 KiB, so
// `step < /dev/zero` ends at once.
//
// On Linux, before it decodes a snapshot of 256 KiB or more, the command
// asks the kernel to back its heap with transparent huge pages, which
// spares it most first-touch page faults (heap.go says why);
// GODEBUG=disablethp=1 turns that off.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/gpusched/gpusched/scheduler"
)

func main() {
	// The command lives for one Step and allocates mostly what it keeps
	// to the end, so collecting garbage each time the heap doubles (the
	// default, GOGC=100) is work for nothing: at 400 the heap may grow to
	// five times what is live, which on the peer workloads of
	// BenchmarkCLIPeers saves about a tenth of the command's CPU time. A
	// GOGC or GOMEMLIMIT in the environment is obeyed instead.
	gcDefault := os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == ""
	if gcDefault {
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args[1:], prepareHeap(os.Stdin, func(heap int, exact bool) {
		if gcDefault && exact {
			gcAtLimit(heap) // first, so that growing the heap starts no collection
		}
		hugeHeap(heap)
	}), os.Stdout, os.Stderr))
}

// gcAtLimit leaves garbage collection to a memory limit of four times
// heap, what a Step of the input's known size is expected to allocate
// (see prepareHeap): below it, no collection runs at all. A large Step
// (the Slurm workload of 1,000 nodes in BenchmarkCLIPeers) otherwise
// collects once or twice halfway, with write barriers on while it marks.
// The limit bounds the heap as GOGC would, in proportion to the input;
// the size must be known, not guessed, since a Step that outgrows the
// limit collects again and again.
func gcAtLimit(heap int) {
	debug.SetMemoryLimit(int64(4 * heap))
	debug.SetGCPercent(-1)
}

// writeErr is a writer that remembers the error of its last write.
type writeErr struct {
	w   io.Writer
	err error
}

func (w *writeErr) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

const usage = "usage: step [-config policy.json] [-explain JOB [-text] | -forecast] < snapshot.json > decision.json"

// run is the whole command; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("step", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	config := fs.String("config", "", "policy file (JSON)")
	explain := fs.String("explain", "", "explain why this job is where it is")
	text := fs.Bool("text", false, "with -explain, print text instead of JSON")
	forecast := fs.Bool("forecast", false, "print every pending job's estimated start instead of the decision")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, usage)
			return 0
		}
		return fail(stderr, fmt.Errorf("%v; %s", err, usage))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return fail(stderr, fmt.Errorf("unexpected argument %q; %s", fs.Arg(0), usage))
	case given["config"] && *config == "":
		// Not the default policy: an empty name is a caller's mistake.
		return fail(stderr, fmt.Errorf("-config: empty file name; %s", usage))
	case given["explain"] && *explain == "":
		return fail(stderr, fmt.Errorf("-explain: empty job ID; %s", usage))
	case *text && *explain == "":
		return fail(stderr, fmt.Errorf("-text needs -explain JOB; %s", usage))
	case *forecast && given["explain"]:
		return fail(stderr, fmt.Errorf("-forecast and -explain exclude each other; %s", usage))
	}
	var cfg scheduler.Config
	if *config != "" {
		f, err := os.Open(*config)
		if err != nil {
			return fail(stderr, fmt.Errorf("config: %w", err))
		}
		cfg, err = scheduler.DecodeConfig(f)
		f.Close()
		if err != nil {
			return fail(stderr, err)
		}
	}
	sched := scheduler.New(cfg)
	snap, err := sched.DecodeSnapshot(stdin) // with the policy's tiers
	if err != nil {
		return fail(stderr, err)
	}
	var buf bytes.Buffer
	if *forecast {
		f, err := sched.Forecast(snap)
		if err != nil {
			return fail(stderr, err)
		}
		if err := scheduler.EncodeForecast(&buf, f); err != nil {
			return fail(stderr, err)
		}
	} else if *explain != "" {
		e, err := sched.Explain(snap, *explain)
		if err != nil {
			return fail(stderr, err)
		}
		if *text {
			buf.WriteString(e.String())
		} else {
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false) // as the decision output
			enc.SetIndent("", "  ")
			if err := enc.Encode(e); err != nil {
				return fail(stderr, err)
			}
		}
	} else {
		d, err := sched.Step(snap)
		if err != nil {
			return fail(stderr, err)
		}
		// EncodeDecision writes once, when the whole decision is encoded:
		// straight to stdout, without a copy.
		out := &writeErr{w: stdout}
		if err := scheduler.EncodeDecision(out, d); err != nil {
			if out.err == nil {
				return fail(stderr, err)
			}
			fmt.Fprintln(stderr, oneLine("write: "+out.err.Error()))
			return 1
		}
		return 0
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		fmt.Fprintln(stderr, oneLine("write: "+err.Error()))
		return 1
	}
	return 0
}

// fail prints err on one line and returns exit code 2.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, oneLine(err.Error()))
	return 2
}

// oneLine escapes line breaks so that a message always fits one line.
func oneLine(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}
