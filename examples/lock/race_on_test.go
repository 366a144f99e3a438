//go:build race

package main

// raceEnabled: the external module is built with -race too, which reuses
// the packages the test build compiled.
const raceEnabled = true
