// Package scenario is the entry point that the scenario examples share.
// Each of them tells one fixed story on standard output and takes no
// arguments; this package refuses arguments instead of ignoring them,
// with the exit codes of the step command (0 for -h, 2 for a usage
// error, 1 for a failure).
package scenario
