//go:build !race

package scheduler

// raceEnabled is true when the race detector is on; the slow digest
// checks are skipped then.
const raceEnabled = false
