package servicetest

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// Emulate runs cfg on the emulator to its end and returns the result and
// the emulator (its View is the final state). A configuration the emulator
// refuses, or a run that fails, fails t.
func Emulate(t testing.TB, cfg emulation.Config) (emulation.Result, *emulation.Emulator) {
	t.Helper()
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed=%d: %v", cfg.Seed, err)
	}
	return r, e
}

// RequireLive reports, as an error of t prefixed by run ("seed=1"), every
// liveness property that does not hold at the end of r.
func RequireLive(t testing.TB, run string, r emulation.Result) {
	t.Helper()
	for _, l := range r.Liveness {
		if !l.Holds {
			t.Errorf("%s: liveness %s does not hold at the end: %s", run, l.Name, l.Error)
		}
	}
}

// RequireSafe reports, as an error of t prefixed by run ("seed=1"), every
// safety property r saw violated.
func RequireSafe(t testing.TB, run string, r emulation.Result) {
	t.Helper()
	for _, s := range r.Safety {
		if s.ViolatedStates != 0 {
			t.Errorf("%s: %s violated in %d states: %s", run, s.Name, s.ViolatedStates, s.FirstError)
		}
	}
}

// Safety returns r's result for the safety property name, and whether r
// has one.
func Safety(r emulation.Result, name string) (emulation.SafetyResult, bool) {
	for _, s := range r.Safety {
		if s.Name == name {
			return s, true
		}
	}
	return emulation.SafetyResult{}, false
}

// SafetyCount returns in how many states r saw the safety property name
// violated, -1 when r has no such property.
func SafetyCount(r emulation.Result, name string) int64 {
	if s, ok := Safety(r, name); ok {
		return s.ViolatedStates
	}
	return -1
}
