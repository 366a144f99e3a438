package macetransport

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestScenarios runs the scripts in testdata (see package nodetest for the
// commands, harnessConfig for MaceTransport's). figure4.txt replays
// MaceMC's Figure 4 step by step, figure4-fixed.txt the same run with the
// correction; run with -rewrite to regenerate the expected output after a
// deliberate change, then review the diff.
func TestScenarios(t *testing.T) {
	nodetest.Walk(t, "testdata", harnessConfig)
}
