//go:build race

package tool

// raceEnabled reports whether the tests run under the race detector; the
// multi-process test then builds the binary with -race too, which reuses
// the test build's compiled packages and checks the processes for races.
const raceEnabled = true
