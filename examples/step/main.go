// Command step runs one scheduling step: it reads a snapshot in JSON on
// standard input and writes the decision in JSON on standard output.
//
//	step [-config policy.json] < snapshot.json > decision.json
//
// It exits 0 on success. On invalid input (bad JSON, an unknown field, a
// bad policy file, a snapshot that fails validation) or a usage error it
// exits 2, writes nothing on standard output and one line on standard
// error naming the offending field.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gpusched/gpusched/scheduler"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = "usage: step [-config policy.json] < snapshot.json > decision.json"

// run is the whole command; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("step", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	config := fs.String("config", "", "policy file (JSON)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, usage)
			return 0
		}
		return fail(stderr, fmt.Errorf("%v; %s", err, usage))
	}
	if fs.NArg() > 0 {
		return fail(stderr, fmt.Errorf("unexpected argument %q; %s", fs.Arg(0), usage))
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
	snap, err := scheduler.DecodeSnapshot(stdin)
	if err != nil {
		return fail(stderr, err)
	}
	d, err := scheduler.New(cfg).Step(snap)
	if err != nil {
		return fail(stderr, err)
	}
	var buf bytes.Buffer
	if err := scheduler.EncodeDecision(&buf, d); err != nil {
		return fail(stderr, err)
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
