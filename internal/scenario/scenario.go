package scenario

import (
	"fmt"
	"io"
	"os"
)

// Main runs the scenario command name: run writes its story to standard
// output. It exits with the code [Run] returns.
func Main(name string, run func(io.Writer) error) {
	os.Exit(Run(name, os.Args[1:], os.Stdout, os.Stderr, run))
}

// Run is [Main] for the given arguments and outputs. With no arguments
// it calls run on stdout and returns 0, or 1 with run's error on stderr.
// -h or -help (with one dash or two) prints the usage on stderr and
// returns 0; any other argument prints it too, naming the argument, and
// returns 2.
func Run(name string, args []string, stdout, stderr io.Writer, run func(io.Writer) error) int {
	usage := fmt.Sprintf("usage: %s (it takes no arguments: it runs one fixed scenario and prints it)", name)
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--h", "--help":
			fmt.Fprintln(stderr, usage)
			return 0
		}
		fmt.Fprintf(stderr, "%s: unexpected argument %q; %s\n", name, args[0], usage)
		return 2
	}
	if err := run(stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}
