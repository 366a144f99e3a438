package papers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/experiments"
)

// The experiment commands are flag parsing around package experiments
// (whose tests cover the experiments): these check the flags reach the
// configuration, the output is the library's result, and bad flags are
// one-line usage errors.

func TestExperimentRandTreePredictionCommand(t *testing.T) {
	code, stdout, stderr := runCLI("experiment", "randtree-prediction", "--max-states", "3000", "--budget", "0", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out experiments.PredictionResult
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Format != experiments.PredictionFormat || out.MaxStates != 3000 || out.Budget != "0s" || !out.Prediction.Found || out.Exhaustive.Unique != 3000 {
		t.Fatalf("result %+v", out)
	}
	if code, _, _ := runCLI("experiment", "nope"); code != exitUsage {
		t.Fatalf("unknown experiment: exit %d", code)
	}
}

// --run and --trace reach the library: one run of the full experiment,
// its trace in the file; the table is the library's text. The steered run
// is kept small (searches of 100 states, a snapshot every 8 s, as
// experiments' paxosTestConfig has them); its run 2, like run 1 with 300
// states every 2 s before, is avoided by the immediate check (44 vetoes),
// so the trace shows steering at work.
func TestExperimentPaxosCommand(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.txt")
	code, stdout, stderr := runCLI("experiment", "paxos", "--bug", "2", "--seed", "7", "--run", "2", "--max-gap", "3s", "--max-states", "100", "--snapshots", "8s", "--trace", trace)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"paxos: Figure 13's scenario with bug2, 1 runs, seed 7", "avoided by steering", "AllLearned at the end"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if b, err := os.ReadFile(trace); err != nil || len(b) == 0 {
		t.Errorf("trace: %d bytes, %v", len(b), err)
	}
	if stderr != "1/1 runs done\n" {
		t.Errorf("stderr %q", stderr)
	}
}

func TestExperimentBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"experiment", "paxos"}, "--bug must be 1 or 2"},
		{[]string{"experiment", "paxos", "--bug", "3"}, "--bug must be 1 or 2"},
		{[]string{"experiment", "paxos", "--bug", "1", "--runs", "0"}, "must be positive"},
		{[]string{"experiment", "paxos", "--bug", "2", "--max-gap", "-1s"}, "not negative"},
		{[]string{"experiment", "paxos", "--bug", "2", "--snapshots", "soon"}, "invalid value"},
		{[]string{"experiment", "paxos", "--bug", "1", "--trace", "t.txt"}, "--trace needs --run"},
		{[]string{"experiment", "paxos", "--bug", "1", "--run", "-2"}, "--run must be a run number"},
		{[]string{"experiment", "paxos", "--bug", "1", "--last-known", "-1s"}, "not negative"},
		{[]string{"experiment", "randtree-prediction", "--budget", "-1s"}, "must not be negative"},
		{[]string{"experiment", "randtree-churn", "--churn", "fast"}, "--churn"},
		{[]string{"experiment", "randtree-churn", "--nodes", "0"}, "--nodes must be in 1..1000"},
		{[]string{"experiment", "randtree-churn", "--configs", "off,sometimes"}, `unknown configuration "sometimes"`},
	} {
		expectUsageError(t, c.args, c.want)
	}
}
