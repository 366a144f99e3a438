package pastry

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestScenarios runs the scripts in testdata (see package nodetest for the
// commands, harnessConfig for Pastry's). Each script replays a plain join
// or MaceMC's rapid-rejoin bug (with and without its correction) step by
// step; run with -rewrite to regenerate the expected output after a
// deliberate change, then review the diff.
func TestScenarios(t *testing.T) {
	nodetest.Walk(t, "testdata", harnessConfig)
}
