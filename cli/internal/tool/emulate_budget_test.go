package tool

import (
	"strings"
	"testing"
)

// TestEmulateHonoursItsBudgets: emulate stops at --budget and at
// --max-memory, prints what it emulated and exits with an error naming
// the budget; main had neither flag (a million nodes: 1.44 GB and 100 s
// without a word). A budget of 1 byte is spent at the first reading, and
// one of 1ns before the first event, so this does not depend on the
// machine's speed.
func TestEmulateHonoursItsBudgets(t *testing.T) {
	for _, tc := range []struct{ flag, value, want string }{
		{"--budget", "1ns", "time budget"},
		{"--max-memory", "1", "memory budget"},
	} {
		code, stdout, stderr := runCLI("emulate", "--service", "randtree", "--nodes", "50", "--duration", "10h", "--churn", "0", tc.flag, tc.value)
		if code != exitFailure || !strings.Contains(stderr, tc.want) || !strings.Contains(stdout, "randtree emulation: 50 nodes") {
			t.Errorf("%s %s: exit %d, stderr %q, stdout %.200q", tc.flag, tc.value, code, stderr, stdout)
		}
	}
	if code, _, stderr := runCLI("emulate", "--budget", "-1s"); code != exitUsage {
		t.Errorf("--budget -1s: exit %d: %s", code, stderr)
	}
}
