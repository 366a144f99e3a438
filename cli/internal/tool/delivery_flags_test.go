package tool

import (
	"strings"
	"testing"
)

// TestDeliveryFlagsUndeclared: the delivery budgets explore nothing more
// for a service that declares every message reliable (randtree): the same
// states as without them.
func TestDeliveryFlagsUndeclared(t *testing.T) {
	base := []string{"--service", "randtree", "--nodes", "3", "--max-depth", "6"}
	plain := checkJSON(t, base...)
	with := checkJSON(t, append(base, "--losses", "1", "--duplicates", "1", "--reorders", "1")...)
	if with.Unique != plain.Unique || with.Generated != plain.Generated {
		t.Fatalf("with delivery budgets: %d unique, %d generated; without: %d, %d", with.Unique, with.Generated, plain.Unique, plain.Generated)
	}
	if with.Duplicates != 1 || !strings.Contains(with.Faults, "duplicates=1") {
		t.Fatalf("budgets not recorded: %+v", with.Faults)
	}
	// randtree has no bounded property, so no delay bound to break.
	late := checkJSON(t, append(base, "--delays", "2")...)
	if late.Unique != plain.Unique || late.Delays != 2 || !strings.Contains(late.Faults, " delays=2") || strings.Contains(late.Faults, "losses") {
		t.Fatalf("with --delays 2: %d unique (want %d), delays %d, faults %q", late.Unique, plain.Unique, late.Delays, late.Faults)
	}
}

// TestDeliveryFlagsBad: budgets and rates out of range are usage errors.
func TestDeliveryFlagsBad(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--losses", "-1"},
		{"check", "--reorders", "100000"},
		{"check", "--delays", "-1"},
		{"emulate", "--steer-delays", "-1", "--duration", "1s"},
		{"emulate", "--msg-duplicate", "1.5", "--duration", "1s"},
		{"emulate", "--msg-loss", "NaN", "--duration", "1s"},
		{"emulate", "--msg-reorder-delay", "-1s", "--duration", "1s"},
	} {
		if code, _, stderr := runCLI(args...); code != exitUsage || !strings.Contains(stderr, "--") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
