// Package shape keeps the library's code in a shape a reader can follow.
// Its test walks every non-test Go file of the module outside examples/,
// testdata/, nested modules and directories the go tool ignores (names
// starting with "." or "_"), and fails on:
//
//   - a file of more than [MaxFileLines] lines;
//   - a function or method of more than [MaxFuncLines] lines, counted from
//     the line of its func keyword to the line of its closing brace, that
//     does not say why it is long.
//
// A long function says why in a line of its doc comment, or in a comment
// on the first line of its body (the line after its opening brace), that
// starts with "Long:" followed by the reason. Splitting is the first
// answer; the reason is for the few functions that read better whole:
//
//	// validateJobs checks every job of the snapshot.
//	//
//	// Long: one pass over the jobs checks each field in the order the
//	// JSON contract lists them, so that the first error named is stable.
//	func validateJobs(...) error {
//
// or
//
//	func validateJobs(...) error {
//		// Long: one pass over the jobs checks each field in order.
//
// A bare "Long:" with nothing after it is not a reason. Function literals
// count towards the function that contains them. The check reads the
// source with go/parser and needs no build: `go test ./internal/shape/`
// runs it and prints every file and function over a limit, one a line.
package shape
