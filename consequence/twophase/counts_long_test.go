//go:build long

package twophase_test

import "testing"

// This file is long: 2PC-7's exhaustive searches took about 4.8 s of CPU
// under the race detector (3.3 s in TestPartialOrderCounts, 1.6 s in
// TestStateCounts; 0.7 s without it), more than half of the package.
// TestPartialOrderCounts and TestStateCounts cover the same behaviour in
// `make test` with 2PC-3 and 2PC-5, their counts pinned the same way.

// TestPartialOrderCounts7 is TestPartialOrderCounts on 2PC-7.
func TestPartialOrderCounts7(t *testing.T) {
	checkPartialOrderCounts(t, []partialOrderCase{{7, false, 2744706, 642510}})
}

// TestStateCounts7 is TestStateCounts on 2PC-7: 296,448 states (4^7 + 2^7
// + 6^7).
func TestStateCounts7(t *testing.T) {
	checkStateCounts(t, []stateCountCase{{7, 296448, 2744706, nil}})
}
