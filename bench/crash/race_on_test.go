//go:build race

package main

// raceEnabled: the crash test builds its binary with -race too, which
// reuses the packages the test build compiled (a cold build of the plain
// binary costs a minute of CPU) and checks the node processes for races.
const raceEnabled = true
