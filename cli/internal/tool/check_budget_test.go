package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckWalksHonourBudget: 'check --strategy walk' stops at --budget
// like the other strategies, reporting the walks taken and the stop
// reason (it used to ignore the budget and take all 2·10^9 walks). A 1ns
// budget has run out before the first walk, so this does not depend on the
// machine's speed.
func TestCheckWalksHonourBudget(t *testing.T) {
	for _, extra := range [][]string{nil, {"--max-depth", "3"}} {
		args := append([]string{"check", "--service", "randtree", "--nodes", "3", "--strategy", "walk",
			"--walks", "2000000000", "--budget", "1ns", "--json"}, extra...)
		code, stdout, stderr := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		var out checkOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%v: %v: %s", extra, err, stdout)
		}
		if out.Stop != "time budget" || out.Liveness == nil || out.Liveness.Walks >= 2_000_000_000 {
			t.Fatalf("%v: stop %q, liveness %+v, want a time budget stop", extra, out.Stop, out.Liveness)
		}
	}
	code, stdout, stderr := runCLI("check", "--service", "randtree", "--nodes", "3", "--strategy", "walk", "--walks", "2000000000", "--budget", "1ns")
	if code != exitOK || !strings.Contains(stdout, "stopped: time budget") {
		t.Fatalf("exit %d, summary %q (%s)", code, stdout, stderr)
	}
}
