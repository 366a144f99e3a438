package papers

import (
	"encoding/json"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"strings"
	"testing"
)

// TestBulletEmulateAndCheck: `emulate --service bullet` downloads the
// paper's 20 MB file (1280 blocks) to all of 5 nodes within two minutes
// (no bandwidth: nothing is refused), and `check
// --service bullet` explores it without a violation.
func TestBulletEmulateAndCheck(t *testing.T) {
	code, stdout, stderr := runCLI("emulate", "--service", "bullet", "--nodes", "5", "--churn", "0", "--duration", "2m", "--json")
	if code != 0 {
		t.Fatalf("emulate: exit %d: %s", code, stderr)
	}
	var out struct {
		Summary []tool.Figure `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	figures := map[string]int{}
	for _, f := range out.Summary {
		figures[f.Name] = f.Value
	}
	if figures["complete"] != 5 || figures["blocks_held"] != 5*1280 {
		t.Errorf("emulate summary %v, want 5 complete nodes holding 1280 blocks each", out.Summary)
	}
	code, stdout, stderr = runCLI("check", "--service", "bullet", "--nodes", "3", "--budget", "0", "--max-states", "2000")
	if code != 0 || !strings.Contains(stdout, "no violation found") {
		t.Errorf("check: exit %d: %s%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI("emulate", "--service", "bullet", "--fix", "nope")
	if code != exitUsage || !strings.Contains(stderr, `bullet: unknown fix "nope"`) {
		t.Errorf("--fix nope: exit %d: %s", code, stderr)
	}
}

// TestBulletCheckRefusedDiff: with one refusal explored, BFS from the
// initial state finds §5.2.3 at depth 10 — n1 accepts n2 as a receiver and
// the transport refuses n1's first diff to it — and with keep-shadow finds
// nothing to depth 12. docs/your-service.md ("Back-pressure") shows both
// commands.
func TestBulletCheckRefusedDiff(t *testing.T) {
	args := []string{"check", "--service", "bullet", "--nodes", "2", "--refusals", "1", "--max-depth", "10", "--budget", "0"}
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("check: exit %d: %s%s", code, stdout, stderr)
	}
	for _, want := range []string{"VIOLATION FileMapViewConsistent (safety) at depth 10", "9. n1 timer diff", "10. n1 refuse-send bullet.Diff to n2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = runCLI(append(args[:len(args)-4], "--max-depth", "12", "--budget", "0", "--fix", "keep-shadow")...)
	if code != 0 || !strings.Contains(stdout, "no violation found") {
		t.Errorf("check --fix keep-shadow: exit %d: %s%s", code, stdout, stderr)
	}
}
