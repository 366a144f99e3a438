//go:build long

package consequence_test

import "testing"

// TestKeyedSleepSetsSameAsPositionsSix is TestKeyedSleepSetsSameAsPositions
// on the complete search of two-phase commit with 6 resource managers
// (about 1.7 s of CPU under the race detector, half the quick test's cost
// before it moved here).
func TestKeyedSleepSetsSameAsPositionsSix(t *testing.T) {
	checkKeyedSleepSets(t, []keyedCase{{6, 0, false}})
}
