//go:build !race

package main

// raceEnabled: the crash test builds its binary without -race, as the test
// binary was built.
const raceEnabled = false
