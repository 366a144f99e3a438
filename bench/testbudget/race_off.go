//go:build !race

package main

// raceEnabled is whether this binary runs under the race detector, which
// the calibration records: it must run under the instrumentation of the
// tests it calibrates.
const raceEnabled = false
