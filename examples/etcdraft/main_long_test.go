//go:build long

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckFindsTheBugAndTheFixIsClean runs the README's commands: check
// from the three-node start of the production configuration finds
// StateMachineSafety violated at depth 10 (16,255 states), trace show
// replays the report, and the corrected store is clean to the same depth.
func TestCheckFindsTheBugAndTheFixIsClean(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := program(t, ctx, "check", "--nodes", "3", "--max-depth", "10", "--json")
	var bug checkDoc
	if err := json.Unmarshal(out, &bug); err != nil || len(bug.Violations) == 0 ||
		bug.Violations[0].Property != "StateMachineSafety" || bug.Violations[0].Depth != 10 || bug.Unique != 16255 {
		t.Fatalf("check: %v\n%s", err, out)
	}
	report := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(report, out, 0o644); err != nil {
		t.Fatal(err)
	}
	shown := string(program(t, ctx, "trace", "show", report))
	if !strings.Contains(shown, "violation of StateMachineSafety (safety) at depth 10") || !strings.Contains(shown, "timer tick") {
		t.Errorf("trace show:\n%s", shown)
	}
	var fixed checkDoc
	out = program(t, ctx, "check", "--nodes", "3", "--max-depth", "10", "--fix", "all", "--json")
	if err := json.Unmarshal(out, &fixed); err != nil || len(fixed.Violations) != 0 {
		t.Errorf("check --fix all: %v\n%s", err, out)
	}
}
