package tool

import (
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
