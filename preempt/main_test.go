package preempt

import (
	"flag"
	"os"
	"testing"
)

// TestMain raises the number of rapid checks to 1000 unless the flag is
// given: victims are needed in only a fraction of random worlds, and each
// check is cheap.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		if err := flag.Set("rapid.checks", "1000"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
