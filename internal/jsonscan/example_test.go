package jsonscan_test

import (
	"fmt"

	"github.com/gpusched/gpusched/internal/jsonscan"
)

// Reading an object member by member, values whole.
func Example() {
	d := jsonscan.NewDecoder([]byte(`{"name": "n0", "gpus": 8, "unhealthy": [3]}`))
	if err := d.ReadToken(); err != nil { // {
		panic(err)
	}
	for k := d.PeekKind(); k != '}' && k != 0; k = d.PeekKind() {
		name, _ := d.ReadValue()
		value, _ := d.ReadValue()
		fmt.Printf("%s = %s (%c)\n", name, value, value.Kind())
	}
	fmt.Println(d.ReadToken(), d.StackDepth(), d.InputOffset())
	// A name must be a string: PeekKind tells a number comes, and reading
	// it fails.
	d.Reset([]byte(`{1: 2}`))
	fmt.Println(d.ReadToken(), d.PeekKind())
	_, err := d.ReadValue()
	fmt.Println(err)
	// Output:
	// "name" = "n0" (")
	// "gpus" = 8 (0)
	// "unhealthy" = [3] ([)
	// <nil> 0 43
	// <nil> number
	// jsonscan: syntax error
}
