//go:build long

package emulation_test

import "testing"

// TestAdaptiveWeightsFindMaceTransportDeadEnd2000 is
// TestAdaptiveWeightsFindMaceTransportDeadEnd with docs/RESULTS.md's 2,000
// walks: the adaptive weights find the dead end in 192, the default
// weights' 2,000 walks all live, the unweighted ones stop after 630 with
// 10 suspects, all C2 (about 2.5 s of CPU under the race detector).
func TestAdaptiveWeightsFindMaceTransportDeadEnd2000(t *testing.T) {
	checkAdaptiveWeights(t, 2000, [3]int{192, 2000, 630})
}
