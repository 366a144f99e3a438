package tool

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// One episode reads "1 episode", not "1 episodes".
func TestEmulateSummarySaysOneEpisode(t *testing.T) {
	var b strings.Builder
	printEmulateSummary(&b, EmulateOutput{Result: emulation.Result{Safety: []emulation.SafetyResult{{Name: "P", ViolatedStates: 3, Episodes: 1}}}})
	if !strings.Contains(b.String(), "(1 episode, first at") {
		t.Fatalf("summary:\n%s", b.String())
	}
	if s := (emulation.Result{Safety: []emulation.SafetyResult{{Name: "P", ViolatedStates: 1, Episodes: 1}}}).String(); !strings.Contains(s, "violated in 1 state (1 episode)") {
		t.Fatalf("emulation.Result:\n%s", s)
	}
}

// A failed run says how to rerun it once, as a flag.
func TestFailedRunSaysRerunOnce(t *testing.T) {
	err := seedHint{fmt.Errorf("emulation: node n2 on timer t at 00:00:01.000: boom; rerun with seed=7"), 7}
	if got, want := err.Error(), "emulation: node n2 on timer t at 00:00:01.000: boom (rerun with --seed 7)"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}
