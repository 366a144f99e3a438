package live_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test or example of the package (the examples
// start runtimes without a *testing.T to check with) leaves a goroutine
// behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
