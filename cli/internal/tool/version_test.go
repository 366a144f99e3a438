package tool

import (
	"strings"
	"testing"
)

// TestVersion: 'version' and '--version' print the main module and the Go
// version on standard output; an argument is a usage error.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, stderr := runCLI(args...)
		if code != exitOK || !strings.Contains(stdout, "go go1.") || stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if code, _, stderr := runCLI("version", "extra"); code != exitUsage || !strings.Contains(stderr, "extra") {
		t.Errorf("version extra: exit %d, stderr %q", code, stderr)
	}
}

// TestHelpCommand: 'help COMMAND' prints the command's usage and flags (as
// 'COMMAND -h' does) on standard output, not the general usage.
func TestHelpCommand(t *testing.T) {
	code, stdout, _ := runCLI("help", "check")
	if code != exitOK || !strings.HasPrefix(stdout, "usage: crystalball check") || !strings.Contains(stdout, "-strategy") {
		t.Errorf("help check: exit %d, stdout %.200q", code, stdout)
	}
	code, stdout, _ = runCLI("help")
	if code != exitOK || !strings.Contains(stdout, "commands:") || !strings.Contains(stdout, "version") {
		t.Errorf("help: exit %d, stdout %.200q", code, stdout)
	}
}

// TestSpeedFactor: runs slower than real time read as a fraction, not 0x.
func TestSpeedFactor(t *testing.T) {
	for x, want := range map[float64]string{0.25: "0.25x", 0.004: "0.004x", 3.14159: "3.1x", 12.7: "13x", 2400: "2400x"} {
		if got := speedFactor(x); got != want {
			t.Errorf("speedFactor(%g) = %q, want %q", x, got, want)
		}
	}
}

// TestFixHelpListsCorrections: --fix's help names each service's
// corrections (Service.Fixes), so check -h tells what --fix takes.
func TestFixHelpListsCorrections(t *testing.T) {
	_, stdout, _ := runCLI("help", "check")
	for _, want := range []string{"randtree: update-sibling, new-root-child", "pastry: rapid-rejoin", "macetransport: monotone-syn"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check's help lacks %q", want)
		}
	}
}
