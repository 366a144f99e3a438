//go:build long

package pastry

import "testing"

// maceMCWalks are MaceMC-sized walks: 1,000 steps, 20 per probe (the
// default K).
var maceMCWalks = walkBudget{dmax: 1000, k: 20}

// This file is long: with MaceMC-sized walks (1,000 steps, 20 per probe)
// TestPrefixWalksFindTheRapidRejoinBugMaceMCWalks took about 11 s of CPU
// under the race detector (about 1.2 s without), nearly all of it in the
// critical-transition search's dead probes.
// TestPrefixWalksFindTheRapidRejoinBug and
// TestPrefixWalksFindNothingWithTheCorrection cover the same behaviour in
// `make test` with walks of 400 steps, 8 per probe.

// TestPrefixWalksFindTheRapidRejoinBugMaceMCWalks is
// TestPrefixWalksFindTheRapidRejoinBug with MaceMC-sized walks.
func TestPrefixWalksFindTheRapidRejoinBugMaceMCWalks(t *testing.T) {
	checkPrefixWalksFindTheRapidRejoinBug(t, maceMCWalks)
}

// TestPrefixWalksFindNothingWithTheCorrectionMaceMCWalks is
// TestPrefixWalksFindNothingWithTheCorrection with MaceMC-sized walks.
func TestPrefixWalksFindNothingWithTheCorrectionMaceMCWalks(t *testing.T) {
	checkPrefixWalksFindNothingWithTheCorrection(t, maceMCWalks)
}
