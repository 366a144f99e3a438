package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// paxosTestArgs keeps the runs small: short gaps (few steering rounds
// between the rounds) and small searches, so three runs of both bugs stay
// well within seconds under the race detector.
func paxosTestArgs(bug string, extra ...string) []string {
	return append([]string{"experiment", "paxos", "--bug", bug, "--runs", "3", "--seed", "7",
		"--max-gap", "3s", "--max-states", "300"}, extra...)
}

// The JSON object names the paper's counts; they add up to the runs; and
// without CrystalBall the script leads every run to the bug (otherwise the
// scenario, not steering, would be what the counts measure).
func TestExperimentPaxosJSON(t *testing.T) {
	for _, bug := range []string{"1", "2"} {
		code, stdout, stderr := runCLI(paxosTestArgs(bug, "--json")...)
		if code != exitOK {
			t.Fatalf("bug %s: exit %d: %s", bug, code, stderr)
		}
		var out struct {
			Experiment                 string  `json:"experiment"`
			Bug                        string  `json:"bug"`
			Seed                       *uint64 `json:"seed"`
			Runs                       *int    `json:"runs"`
			AvoidedBySteering          *int    `json:"avoided_by_steering"`
			AvoidedByImmediateCheck    *int    `json:"avoided_by_immediate_check"`
			Violated                   *int    `json:"violated"`
			NoIntervention             *int    `json:"safe_without_intervention"`
			ViolatedWithoutCrystalBall *int    `json:"violated_without_crystalball"`
			LiveWithCrystalBall        *int    `json:"live_with_crystalball"`
			LiveWithoutCrystalBall     *int    `json:"live_without_crystalball"`
			ScenarioDeviations         *int    `json:"scenario_deviations"`
			PerRun                     []struct {
				Seed    uint64  `json:"seed"`
				GapS    float64 `json:"gap_s"`
				Outcome string  `json:"outcome"`
			} `json:"per_run"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("bug %s: bad JSON: %v\n%s", bug, err, stdout)
		}
		for name, p := range map[string]*int{"runs": out.Runs, "avoided_by_steering": out.AvoidedBySteering,
			"avoided_by_immediate_check": out.AvoidedByImmediateCheck, "violated": out.Violated,
			"safe_without_intervention": out.NoIntervention, "violated_without_crystalball": out.ViolatedWithoutCrystalBall,
			"live_with_crystalball": out.LiveWithCrystalBall, "live_without_crystalball": out.LiveWithoutCrystalBall,
			"scenario_deviations": out.ScenarioDeviations} {
			if p == nil {
				t.Fatalf("bug %s: JSON lacks %q:\n%s", bug, name, stdout)
			}
		}
		if out.Experiment != "paxos" || out.Bug != "bug"+bug || out.Seed == nil || *out.Seed != 7 || *out.Runs != 3 || len(out.PerRun) != 3 {
			t.Fatalf("bug %s: header %q %q seed %v runs %d per_run %d", bug, out.Experiment, out.Bug, out.Seed, *out.Runs, len(out.PerRun))
		}
		if sum := *out.AvoidedBySteering + *out.AvoidedByImmediateCheck + *out.Violated + *out.NoIntervention; sum != 3 {
			t.Errorf("bug %s: outcomes add up to %d, want 3", bug, sum)
		}
		if *out.ViolatedWithoutCrystalBall != 3 || *out.ScenarioDeviations != 0 {
			t.Errorf("bug %s: %d of 3 runs violate without CrystalBall, %d left the script; want 3 and 0", bug, *out.ViolatedWithoutCrystalBall, *out.ScenarioDeviations)
		}
		if *out.LiveWithoutCrystalBall != 3 {
			t.Errorf("bug %s: AllLearned fails at the end of %d runs without CrystalBall", bug, 3-*out.LiveWithoutCrystalBall)
		}
		seen := map[uint64]bool{}
		for _, r := range out.PerRun {
			if seen[r.Seed] || r.GapS < 0 || r.GapS >= 3 || r.Outcome == "" {
				t.Errorf("bug %s: run %+v (seeds must differ, gaps lie in [0, 3s))", bug, r)
			}
			seen[r.Seed] = true
		}
	}
}

// The runs are emulated in parallel, but the output does not depend on it.
func TestExperimentPaxosDoesNotDependOnWorkers(t *testing.T) {
	args := paxosTestArgs("1", "--runs", "2", "--json")
	_, one, stderr := runCLI(append(args, "--workers", "1")...)
	code, two, _ := runCLI(append(args, "--workers", "2")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stripWall(t, one) != stripWall(t, two) {
		t.Fatalf("--workers changed the output:\n%s\n%s", one, two)
	}
}

func TestExperimentPaxosBadFlags(t *testing.T) {
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
	} {
		code, stdout, stderr := runCLI(c.args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and one line containing %q", c.args, code, stdout, stderr, exitUsage, c.want)
		}
	}
}

// The human table is shaped like the paper's Fig. 14.
func TestExperimentPaxosTable(t *testing.T) {
	code, stdout, stderr := runCLI(paxosTestArgs("2", "--runs", "1")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"avoided by steering", "avoided by immediate check", "violated without CrystalBall", "bug2", "AllLearned at the end"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}

// With the experiment's own settings, steering keeps a run with a long
// gap between the rounds safe for each bug: C, back in touch with A and B,
// predicts round 2 and drops B's Prepare (the paper's "C rejects the
// Prepare message sent by B"), while without CrystalBall the run violates
// both properties. --run reruns one run of the full experiment alone, and
// --trace shows the filter at work.
func TestExperimentPaxosSteeringAvoidsTheViolation(t *testing.T) {
	for _, bug := range []string{"1", "2"} {
		trace := filepath.Join(t.TempDir(), "run.txt")
		code, stdout, stderr := runCLI("experiment", "paxos", "--bug", bug, "--seed", "1", "--run", "2", "--max-gap", "8s", "--trace", trace, "--json")
		if code != exitOK {
			t.Fatalf("bug %s: exit %d: %s", bug, code, stderr)
		}
		var out paxosOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("bug %s: %v", bug, err)
		}
		if len(out.PerRun) != 1 || out.Runs != 1 {
			t.Fatalf("bug %s: %d runs in the output, want 1", bug, len(out.PerRun))
		}
		r := out.PerRun[0]
		if r.Run != 2 || r.Seed != paxosRunSeed(1, 2) || r.GapS < 3 {
			t.Fatalf("bug %s: run %d seed %d gap %.2fs; want run 2 of seed 1, a gap of 3 s or more", bug, r.Run, r.Seed, r.GapS)
		}
		if r.Outcome != outcomeSteering || r.Steer.ChosenViolated || !r.Steer.Live || !r.Off.Violated || !r.Off.ChosenViolated {
			t.Fatalf("bug %s: outcome %q, steered %+v, without CrystalBall %+v", bug, r.Outcome, r.Steer, r.Off)
		}
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "n3 steering drop message paxos.Prepare from n2 by filter") {
			t.Errorf("bug %s: the trace does not show n3 dropping n2's Prepare", bug)
		}
	}
}
