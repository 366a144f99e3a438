//go:build long

package lease_test

import (
	"testing"
	"time"
)

// This file is long: the scoreboard's seed 1 of the lease case, whose
// grantor reset comes at 2:08, costs about 51 s of CPU under the race
// detector (a run of 2:30 and one to 2:09), 3.3 s without it;
// TestRestoredFilterPreventsTheGrantAfterAReset asserts the same on
// seed 14, whose reset comes at 31 s.

// TestRestoredFilterAfterTheScoreboardsReset is the lease test on the
// scoreboard's run (seed 1): the case without CrystalBall violates
// OneHolder at 2:09.47, a grant 1.2 s after the grantor came back up at
// 2:08.25; steered, the restored filter drops the requests after that
// restart and nothing violates within 2:30.
func TestRestoredFilterAfterTheScoreboardsReset(t *testing.T) {
	checkRestored(t, 1, 2*time.Minute+8*time.Second, 2*time.Minute+30*time.Second, nil)
}
