package tool

import (
	"flag"
	"io"
	"testing"
)

// The value -help prints as an auto flag's default can be typed: "auto"
// means the same as leaving the flag out, and a negative number is still
// refused.
func TestAutoFlagsAcceptAuto(t *testing.T) {
	parse := func(args ...string) (*emulateParams, *flag.FlagSet) {
		t.Helper()
		fs := flag.NewFlagSet("emulate", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		p := &emulateParams{services: testCatalog()}
		p.registerCommand(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return p, fs
	}
	for _, name := range autoFlags {
		if got := func() string { _, fs := parse(); return fs.Lookup(name).DefValue }(); got != autoValue {
			t.Errorf("--%s's default prints as %q, want %q", name, got, autoValue)
		}
	}
	typed, fs := parse("--mode", "debug", "--heal", "auto", "--snapshots", "auto", "--predictors", "auto", "--steer-states", "auto")
	if err := rejectNegativeAuto(fs); err != nil {
		t.Fatalf("auto typed: %v", err)
	}
	left, _ := parse("--mode", "debug")
	for _, p := range []*emulateParams{typed, left} {
		if err := p.resolve(); err != nil {
			t.Fatal(err)
		}
	}
	if typed.heal != left.heal || typed.snapEvery != left.snapEvery || typed.predictors != left.predictors || typed.steer.states != left.steer.states {
		t.Errorf("auto typed resolves to heal %v, snapshots %v, predictors %d, steer-states %d; left out to %v, %v, %d, %d",
			typed.heal, typed.snapEvery, typed.predictors, typed.steer.states, left.heal, left.snapEvery, left.predictors, left.steer.states)
	}
	if _, fs := parse("--predictors", "auto", "--predictors", "-2"); rejectNegativeAuto(fs) == nil {
		t.Error("--predictors -2 typed after auto was accepted")
	}
}
