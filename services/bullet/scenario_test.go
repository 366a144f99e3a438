package bullet

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestScenarios runs the scripts in testdata (see package nodetest for the
// commands, harnessConfig for Bullet′'s). refused-diff.txt replays the
// paper's bug (§5.2.3) step by step, refused-diff-fixed.txt the same
// steps with the correction; run with -rewrite to regenerate the expected
// output after a deliberate change, then review the diff.
func TestScenarios(t *testing.T) {
	nodetest.Walk(t, "testdata", harnessConfig)
}
