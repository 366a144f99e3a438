package live_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain checks that no test or example of the package (the examples
// start runtimes without a *testing.T to check with) leaves a goroutine
// behind. Like live.VerifyNoLeaks it gives memberlist's failure-detector
// probes in flight time to end (memberlist does not join them at
// shutdown) before it calls a goroutine a leak.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if err = goleak.Find(); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
