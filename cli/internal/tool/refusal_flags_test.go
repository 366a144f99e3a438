package tool

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestCheckRefusals: check --refusals reaches the model and the output
// (so 'trace show' rebuilds it); RandTree never calls TrySend, so the
// search explores the very same states; a negative count is bad usage.
func TestCheckRefusals(t *testing.T) {
	run := func(extra ...string) checkOutput {
		t.Helper()
		args := append([]string{"check", "--service", "randtree", "--nodes", "3", "--strategy", "bfs", "--resets", "1", "--silent",
			"--max-states", "3000", "--budget", "0", "--workers", "1", "--json"}, extra...)
		code, stdout, stderr := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var out checkOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	without, with := run(), run("--refusals", "1")
	if with.Refusals != 1 || !strings.Contains(with.Faults, "refusals=1") || without.Refusals != 0 || strings.Contains(without.Faults, "refusals") {
		t.Errorf("faults %q (refusals %d), without %q (refusals %d)", with.Faults, with.Refusals, without.Faults, without.Refusals)
	}
	if with.Unique != without.Unique || len(with.Violations) != len(without.Violations) {
		t.Errorf("with --refusals 1: %d states, %d violations; without: %d, %d", with.Unique, len(with.Violations), without.Unique, len(without.Violations))
	}
	if code, _, stderr := runCLI("check", "--service", "randtree", "--refusals", "-1"); code != exitUsage {
		t.Errorf("--refusals -1: exit %d, %s", code, stderr)
	}
	w, err := parseWeights("refuse=0.5,drop=0")
	if err != nil || len(w) != 2 {
		t.Fatalf("--weights refuse=0.5,drop=0: %v, %v", w, err)
	}
}

// TestSteerRefusals: --steer-refusals (default 1, steering.DefaultFaults)
// reaches the steering rounds' faults of emulate and node; negative is bad
// usage.
func TestSteerRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 1},
		{[]string{"--steer-refusals", "0"}, 0},
		{[]string{"--steer-refusals", "3"}, 3},
	} {
		fs := newFlagSet("emulate", io.Discard)
		p := emulateParams{services: testCatalog()}
		p.register(fs)
		if err := fs.Parse(append([]string{"--nodes", "4", "--mode", "debug"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		if err := p.resolve(); err != nil {
			t.Fatal(err)
		}
		if got := p.emulationConfig(serviceRun{}).Steering.Controller.Faults.Refusals; got != c.want {
			t.Errorf("emulate %v: refusals %d, want %d", c.args, got, c.want)
		}
		f, err := parseNodeFlags(testCatalog(), append([]string{"--id", "1"}, c.args...), io.Discard)
		if err != nil || f.steer.faults.refusals != c.want {
			t.Errorf("node %v: refusals %d (%v), want %d", c.args, f.steer.faults.refusals, err, c.want)
		}
	}
	fs := newFlagSet("emulate", io.Discard)
	p := emulateParams{services: testCatalog()}
	p.register(fs)
	if err := fs.Parse([]string{"--mode", "debug", "--steer-refusals", "-1"}); err != nil {
		t.Fatal(err)
	}
	if err := p.resolve(); err == nil {
		t.Error("emulate --steer-refusals -1 accepted")
	}
	if _, err := parseNodeFlags(testCatalog(), []string{"--id", "1", "--steer-refusals", "-1"}, io.Discard); err == nil {
		t.Error("node --steer-refusals -1 accepted")
	}
}

// TestTraceRejectsBadRefusals: a check output claiming a negative or huge
// refusal budget is bad usage, never a model.
func TestTraceRejectsBadRefusals(t *testing.T) {
	for _, n := range []string{"-1", "1000000"} {
		f := writeTemp(t, "check.json", []byte(`{"format":"crystalball-check/1","target":"randtree","nodes":3,"refusals":`+n+`,"reports":[]}`))
		code, _, stderr := runCLI("trace", "show", f)
		if code != exitUsage || !strings.Contains(stderr, "refusals "+n) {
			t.Errorf("refusals %s: exit %d, %s", n, code, stderr)
		}
	}
}
