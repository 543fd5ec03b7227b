//go:build !race

package sim_test

// raceEnabled is true when the race detector is on; the long trace
// replays are skipped then.
const raceEnabled = false
