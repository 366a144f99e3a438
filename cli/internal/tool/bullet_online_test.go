package tool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/services/bullet"
)

// TestEmulateBulletPredictsTheRefusedDiff is §5.2.3 online, small: 5
// nodes download the paper's file over the paper's INET access links
// (1 Mb/s up, 5 Mb/s down) for 10 s, every node gathering its
// neighbourhood (at start, when it changes, every 10 s) and predicting
// (--mode debug --predictors 0) with one refused send per path
// (--steer-refusals, default 1). A round predicts FileMapViewConsistent —
// a path that ends with a refused bullet.Diff — before the paper's code
// first violates it in the run, and with the correction (--fix
// keep-shadow) nothing is predicted or violated. The prediction's report
// replays ('trace show'). The run is a pure function of its seed and
// rounds are budgeted in states, so the figures do not depend on the
// machine's speed. Seed 2 was chosen by running seeds 1..10 with 4, 5, 6
// and 8 nodes: with each it is predicted at about 3 s and violated at
// 8.5-8.9 s, the earliest of the seeds (with 5 nodes: predicted at 2.9 s,
// n1's refused Diff to n3; violated at 8.5 s, n4's Diff to n3); rounds of
// 500 states suffice. (The test ran 8 nodes for 20 s at 2,000 states,
// seed 1, predicted at 10.0 s and violated at 15.7 s: 5.5 s of CPU under
// the race detector for the two runs, 0.6 s now.)
func TestEmulateBulletPredictsTheRefusedDiff(t *testing.T) {
	args := []string{"emulate", "--service", "bullet", "--nodes", "5", "--churn", "0", "--duration", "10s",
		"--uplink", "inet", "--downlink", "inet", "--mode", "debug", "--predictors", "0",
		"--steer-states", "500", "--walks", "0", "--seed", "2", "--json"}
	buggy := runBulletOnline(t, append(args, "--reports", t.TempDir()))
	if len(buggy.Predictions) == 0 {
		t.Fatalf("nothing predicted; snapshots %+v", buggy.Result.Snapshots)
	}
	p := buggy.Predictions[0]
	if p.Property != bullet.FileMapViewConsistent || len(p.Path) == 0 ||
		!strings.Contains(p.Path[len(p.Path)-1], "refuse-send bullet.Diff") {
		t.Fatalf("first prediction %+v, want %s by a refused bullet.Diff", p, bullet.FileMapViewConsistent)
	}
	if p.ViolatedBefore || p.Happened == nil || p.Happened.AtS <= p.FirstPredictedS {
		t.Errorf("predicted at %.3fs; happened %+v (violated before: %v): want it predicted before the run violates it",
			p.FirstPredictedS, p.Happened, p.ViolatedBefore)
	}
	code, shown, stderr := runCLI("trace", "show", p.Report)
	if code != exitOK || !strings.Contains(shown, "violation of "+bullet.FileMapViewConsistent) {
		t.Errorf("trace show %s: exit %d %s\n%s", p.Report, code, stderr, shown)
	}
	if s := buggy.Result.Snapshots; s == nil || s.Failures != 0 {
		t.Errorf("snapshots %+v: want no gather given up on the links", s)
	}

	fixed := runBulletOnline(t, append(args, "--fix", "keep-shadow"))
	if len(fixed.Predictions) != 0 {
		t.Errorf("keep-shadow: predicted %+v", fixed.Predictions)
	}
	for _, s := range fixed.Result.Safety {
		if s.ViolatedStates != 0 {
			t.Errorf("keep-shadow: %s violated in %d states: %s", s.Name, s.ViolatedStates, s.FirstError)
		}
	}
	if fixed.Result.Steering == nil || fixed.Result.Steering.Rounds == 0 {
		t.Errorf("keep-shadow: no round ran (%+v): nothing could be predicted", fixed.Result.Steering)
	}
}

// runBulletOnline runs the CLI with args and decodes its --json output.
func runBulletOnline(t *testing.T, args []string) EmulateOutput {
	t.Helper()
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var out EmulateOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
