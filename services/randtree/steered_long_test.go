//go:build long

package randtree_test

import (
	"testing"
	"time"
)

// This file is long: three 25-node, 20-virtual-minute emulations with churn
// and a steering controller beside every node took about 71 s of CPU under
// the race detector (about 5 s without). TestSteeredChurnStaysLive covers
// the same behaviour in `make test` with 8 nodes and 5 minutes.

// TestSteeredChurnStaysLiveAtScale is TestSteeredChurnStaysLive at the
// size of `crystalball emulate`: 25 nodes, 20 virtual minutes, churn until
// 15 minutes. Seed 3 leaves three orphans behind without the intervention
// budget.
func TestSteeredChurnStaysLiveAtScale(t *testing.T) {
	checkSteeredChurnStaysLive(t, steeredRun{nodes: 25, duration: 20 * time.Minute, churnUntil: 15 * time.Minute}, 3)
}
