package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheck2PCSymmetry: --symmetry keeps one state per orbit of the RMs,
// C(n+3,3) + (n+1) + C(n+5,5) = 3,300 for 10 RMs (61,515,776 without).
func TestCheck2PCSymmetry(t *testing.T) {
	code, stdout, stderr := runCLI("check", "--model", "2pc", "--rms", "10", "--symmetry", "--max-states", "0", "--budget", "0", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Unique != 3300 || out.Stop != "completed" || len(out.Violations) != 0 || out.Options != "rms=10,symmetry" {
		t.Fatalf("2pc with 10 RMs and symmetry: %d unique, stop %s, %d violations, options %q", out.Unique, out.Stop, len(out.Violations), out.Options)
	}
}

// TestCheckServiceSymmetryNeedsGroups: a service that declares no
// interchangeable nodes (Paxos as the CLI configures it: every member
// proposes) is a usage error with --symmetry, naming the reason.
func TestCheckServiceSymmetryNeedsGroups(t *testing.T) {
	for _, svc := range []string{"paxos", "randtree"} {
		code, _, stderr := runCLI("check", "--service", svc, "--nodes", "3", "--symmetry", "--max-states", "100")
		if code != exitUsage || !strings.Contains(stderr, "no symmetry groups") {
			t.Fatalf("%s: exit %d: %s", svc, code, stderr)
		}
	}
}
