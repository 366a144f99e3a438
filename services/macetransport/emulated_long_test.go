//go:build long

package macetransport_test

import (
	"testing"
	"time"
)

// This file is long: TestEmulatedFigure4DebugAtLength's 15 virtual seconds
// with a steering round at both nodes every second took about 22 s of CPU
// under the race detector (about 2 s without), most of it in the rounds'
// safety searches (20,000 states each, predicting nothing).
// TestEmulatedFigure4Debug covers the same behaviour in `make test` with
// n2's rounds only, until 8 s, and searches of 1,000 states.

// TestEmulatedFigure4DebugAtLength is TestEmulatedFigure4Debug at its
// original length: seed 12 for 15 s, every node running a round on each of
// its snapshots; a round finds AllAcked dead at the start.
func TestEmulatedFigure4DebugAtLength(t *testing.T) {
	figure4Debug(t, 15*time.Second, nil, 0)
}
