package scenario_test

import (
	"fmt"
	"io"
	"os"

	"github.com/gpusched/gpusched/internal/scenario"
)

// A scenario program's main is scenario.Main(name, run); Run is the same
// with its arguments and outputs passed in. Arguments are refused with
// exit code 2, -h prints the usage with exit code 0.
func ExampleRun() {
	story := func(w io.Writer) error {
		_, err := fmt.Fprintln(w, "A starts at 08:00")
		return err
	}
	fmt.Println("exit", scenario.Run("demo", nil, os.Stdout, os.Stdout, story))
	fmt.Println("exit", scenario.Run("demo", []string{"-nodes", "4"}, os.Stdout, os.Stdout, story))
	fmt.Println("exit", scenario.Run("demo", []string{"-h"}, os.Stdout, os.Stdout, story))
	// Output:
	// A starts at 08:00
	// exit 0
	// demo: unexpected argument "-nodes"; usage: demo (it takes no arguments: it runs one fixed scenario and prints it)
	// exit 2
	// usage: demo (it takes no arguments: it runs one fixed scenario and prints it)
	// exit 0
}
