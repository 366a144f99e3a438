//go:build long

package pastry_test

import (
	"testing"
	"time"
)

// tenMinutes is `crystalball emulate --duration 10m`'s run: 7 minutes of
// churn, 2.5 of healing.
var tenMinutes = churnRun{duration: 10 * time.Minute, churnUntil: 450 * time.Second}

// This file is long: the ten-minute emulations (`crystalball emulate
// --service pastry --nodes 10 --churn 2/m --duration 10m`) took about 4 s
// (rapid rejoin, 6 runs) and 3 s (slow rejoin, 4 runs) of CPU under the
// race detector. TestEmulatedRapidRejoin and TestEmulatedSlowRejoinHeals
// cover the same behaviour in `make test` with four-minute runs (seeds 1-2
// and 1).

// TestEmulatedRapidRejoinTenMinutes is TestEmulatedRapidRejoin in
// ten-minute runs (seeds 1-10 give the same contrast; 1-3 are run).
func TestEmulatedRapidRejoinTenMinutes(t *testing.T) {
	checkRapidRejoin(t, tenMinutes, 3)
}

// TestEmulatedSlowRejoinHealsTenMinutes is TestEmulatedSlowRejoinHeals in
// ten-minute runs.
func TestEmulatedSlowRejoinHealsTenMinutes(t *testing.T) {
	checkSlowRejoinHeals(t, tenMinutes, 2)
}
