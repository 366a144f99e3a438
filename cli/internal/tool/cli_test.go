package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	return runProgram(testProgram, args...)
}

// withoutWallBudget gives `check` --budget 0 unless the test sets a
// budget itself: check's default is 30 s of wall time, and a search that
// needs a few seconds quiet can need more than 30 on a loaded machine,
// where the budget would change what it finds. The tests' searches are
// bounded in states, depth and walks instead.
func withoutWallBudget(args []string) []string {
	if len(args) == 0 || args[0] != "check" {
		return args
	}
	for _, a := range args {
		if a == "--budget" || strings.HasPrefix(a, "--budget=") || a == "-budget" || strings.HasPrefix(a, "-budget=") {
			return args
		}
	}
	return append(append([]string{}, args...), "--budget", "0")
}

func TestBadInputIsAOneLineUsageError(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"emulate", "--service", "nope"}, `unknown service "nope"`},
		{[]string{"emulate", "--nodes", "-3"}, "--nodes must be positive"},
		{[]string{"emulate", "--nodes", "0"}, "--nodes must be positive"},
		{[]string{"emulate", "--nodes", "many"}, "invalid value"},
		{[]string{"emulate", "--duration", "10 parsecs"}, "invalid value"},
		{[]string{"emulate", "--duration", "-5m"}, "--duration must be positive"},
		{[]string{"emulate", "--churn", "fast"}, "invalid rate"},
		{[]string{"emulate", "--churn", "1/fortnight"}, "invalid rate"},
		{[]string{"emulate", "--silent", "1.5"}, "--silent must be in [0, 1]"},
		{[]string{"emulate", "--fix", "everything"}, `unknown fix "everything"`},
		{[]string{"emulate", "stray"}, `unexpected argument "stray"`},
		{[]string{"emulate", "--duration", "1m", "--heal", "40s"}, "leaves no time for churn"},
		{[]string{"emulate", "--predictors", "2"}, "--predictors needs --mode debug or steer"},
		{[]string{"emulate", "--reports", "dir"}, "--reports needs --mode debug or steer"},
		{[]string{"emulate", "--mode", "debug", "--nodes", "5", "--predictors", "6"}, "--predictors must be between 0 and --nodes (5)"},
		{[]string{"emulate", "--mode", "debug", "--steer-breaks", "-2"}, "--steer-breaks must not be negative, got -2"},
		{[]string{"emulate", "--mode", "debug", "--snapshots", "0"}, "--mode debug needs a snapshot manager (--snapshots is 0)"},
		{[]string{"emulate", "--mode", "debug", "--walks", "-1"}, "--walks must not be negative"},
		{[]string{"emulate", "--mode", "debug", "--walk-depth", "0"}, "--walk-depth must be positive"},
		{[]string{"emulate", "--mode", "debug", "--probe-walks", "0"}, "--probe-walks must be positive"},
		{[]string{"emulate", "--mode", "debug", "--walk-suspects", "0"}, "--walk-suspects must be positive"},
		{[]string{"emulate", "--mode", "debug", "--safety-walks", "-1"}, "--safety-walks must not be negative"},
		{[]string{"emulate", "--mode", "debug", "--second-hop", "-1"}, "--second-hop must not be negative"},
		{[]string{"node", "--service", "randtree", "--id", "1", "--second-hop", "-2"}, "--second-hop must not be negative"},
		{[]string{"node", "--service", "randtree", "--id", "1", "--mode", "steer", "--safety-walk-depth", "0"}, "--safety-walk-depth must be positive"},
		{[]string{"experiment", "randtree-liveness"}, "--seed is required"},
		{[]string{"experiment", "randtree-liveness", "--seed", "1", "--runs", "0"}, "--runs and --workers must be positive"},
		{[]string{"emulate", "--mode", "sideways"}, `--mode: want off, debug or steer, got "sideways"`},
		{[]string{"check", "--resets", "1", "--reset-kinds", "some"}, `--reset-kinds: "some" is not rst, silent or both`},
		{[]string{"experiment", "randtree-churn", "--reset-kinds", "none"}, `--reset-kinds: "none" is not rst, silent or both`},
		{[]string{"experiment", "randtree-churn", "--veto-hold", "0s"}, `--veto-hold: "0s" is not a positive duration or 'unbounded'`},
		{[]string{"experiment", "randtree-churn", "--veto-hold", "forever"}, `--veto-hold: "forever" is not a positive duration or 'unbounded'`},
	}
	for _, c := range cases {
		expectUsageError(t, c.args, c.want)
	}
}

func TestEmulateJSONIsDeterministic(t *testing.T) {
	args := []string{"emulate", "--nodes", "12", "--duration", "5m", "--churn", "2/m", "--seed", "5", "--json"}
	code, first, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, second, _ := runCLI(args...)
	// Wall-clock figures are the only thing allowed to differ.
	if stripWall(t, first) != stripWall(t, second) {
		t.Fatalf("same flags, different output:\n%s\n%s", first, second)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(first), &out); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, first)
	}
	for _, k := range []string{"service", "options", "seed", "nodes", "duration", "summary", "result"} {
		if _, ok := out[k]; !ok {
			t.Errorf("JSON output lacks %q: %s", k, first)
		}
	}
	res, _ := out["result"].(map[string]any)
	for _, k := range []string{"safety", "liveness", "messages", "events"} {
		if _, ok := res[k]; !ok {
			t.Errorf("JSON result lacks %q: %s", k, first)
		}
	}
	_, third, _ := runCLI("emulate", "--nodes", "12", "--duration", "5m", "--churn", "2/m", "--seed", "6", "--json")
	if stripWall(t, first) == stripWall(t, third) {
		t.Error("different seeds gave identical output")
	}
}

func TestEmulateHumanSummary(t *testing.T) {
	code, out, stderr := runCLI("emulate", "--nodes", "8", "--duration", "3m", "--churn", "0", "--seed", "3")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"randtree", "seed 3", "joined", "depth", "messages", "ChildrenSiblingsDisjoint", "virtual"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestEmulateWithSnapshots(t *testing.T) {
	code, out, stderr := runCLI("emulate", "--nodes", "10", "--duration", "2m", "--churn", "0", "--snapshots", "10s")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"snapshots:", "gathered", "b/s checkpoints"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if code, _, stderr := runCLI("emulate", "--snapshots", "-1s"); code == exitOK || !strings.Contains(stderr, "--snapshots must not be negative") {
		t.Errorf("negative --snapshots: exit %d, %s", code, stderr)
	}
}

// stripWall removes the wall-clock fields from a JSON result.
func stripWall(t *testing.T, s string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad JSON: %v", err)
	}
	delete(m, "wall_seconds")
	delete(m, "speedup")
	if r, ok := m["result"].(map[string]any); ok {
		for k := range r {
			if strings.HasPrefix(k, "wall") {
				delete(r, k)
			}
		}
		if st, ok := r["steering"].(map[string]any); ok {
			delete(st, "exploration_seconds")
		}
	}
	if c, ok := m["liveness_cost"].(map[string]any); ok {
		delete(c, "control_wall_seconds")
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// expectUsageError runs the command line args and fails t unless it exits
// with the usage status, writes nothing to stdout and one line containing
// want to stderr.
func expectUsageError(t *testing.T, args []string, want string) {
	t.Helper()
	code, stdout, stderr := runCLI(args...)
	if code != exitUsage {
		t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
	}
	if stdout != "" {
		t.Errorf("%v: wrote to stdout: %q", args, stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("%v: stderr %q, want one line containing %q", args, stderr, want)
	}
}
