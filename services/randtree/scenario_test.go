package randtree

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScenarios runs the scripts in testdata (see harness for the
// commands). Each script replays one of the paper's scenarios step by step;
// run with -rewrite to regenerate the expected output after a deliberate
// change, then review the diff.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := newHarness()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return h.run(t, d)
		})
	})
}
