package paxos

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestScenarios runs the scripts in testdata (see package nodetest for the
// commands, harnessConfig for Paxos's). Each replays a scenario step by
// step, the paper's Figure 13 among them; run with -rewrite to regenerate
// the expected output after a deliberate change, then review the diff.
func TestScenarios(t *testing.T) {
	nodetest.Walk(t, "testdata", harnessConfig)
}
