package livenode_test

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
)

// TestMain checks that no test or example of the package (the examples
// start nodes without a *testing.T to check with) leaves a goroutine
// behind, allowing for memberlist's probes in flight (package livetest).
func TestMain(m *testing.M) { livetest.VerifyTestMain(m) }
