//go:build !race

package tool

// raceEnabled: see race_on_test.go.
const raceEnabled = false
