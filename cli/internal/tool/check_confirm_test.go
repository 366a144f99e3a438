package tool

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// TestCheckConfirmRandTreeSafety: the paper's RandTree bug that BFS finds
// at depth 7 with one reset (a root with siblings) is real: the emulator,
// its five nodes started together and forced along the path, takes all 7
// steps and violates RootHasNoSiblings.
func TestCheckConfirmRandTreeSafety(t *testing.T) {
	out := checkJSON(t, "--service", "randtree", "--nodes", "5", "--resets", "1", "--max-depth", "7", "--confirm", "--quiet")
	if len(out.Violations) != 1 || out.Violations[0].Property != "RootHasNoSiblings" {
		t.Fatalf("violations %+v, want RootHasNoSiblings", out.Violations)
	}
	want := emulation.PathJudgement{Verdict: emulation.PathReal, Steps: 7}
	if len(out.Confirmed) != 1 || out.Confirmed[0] != want {
		t.Fatalf("confirmed %+v, want [%+v]", out.Confirmed, want)
	}
}

// TestCheckConfirmRandTreeLiveness: MaceMC's RandTree dead end (the walk
// check the trace tests share) is real: forced up to its critical
// transition (step 18), the emulator runs on for --confirm-duration and
// ParentChildAgree still fails at the end.
func TestCheckConfirmRandTreeLiveness(t *testing.T) {
	out := checkJSON(t, append(slices.Clone(walkCheckArgs[1:]), "--confirm", "--quiet")...)
	l := out.Liveness
	if l == nil || l.Verdict != "C1" || l.Confirmed == nil {
		t.Fatalf("liveness %+v", l)
	}
	if want := (emulation.PathJudgement{Verdict: emulation.PathReal, Steps: l.Critical + 1}); *l.Confirmed != want {
		t.Fatalf("confirmed %+v, want %+v", *l.Confirmed, want)
	}
}

// TestCheckConfirmRejects: what a directed run from the service's initial
// state cannot judge is a usage error naming --confirm.
func TestCheckConfirmRejects(t *testing.T) {
	for _, args := range [][]string{
		{"--confirm", "--confirm-duration", "0"},
		{"--confirm", "--model", "2pc"},
		{"--confirm", "--from", "report.json"},
		{"--confirm", "--symmetry"},
		{"--confirm", "--skew", "1s"},
	} {
		code, _, stderr := runCLI(append([]string{"check", "--service", "randtree", "--nodes", "3"}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "confirm") {
			t.Errorf("check %v: exit %d: %s", args, code, stderr)
		}
	}
}
