package tool

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
)

// Deep online debugging on Chord: with --mode debug two nodes (n1, the
// bootstrap, and n6) gather their neighbourhoods every 10 s, at start and
// when their neighbourhoods change, and predict. From their first
// snapshots, consequence prediction with a silent reset and a broken
// connection finds the paper's Figure 10 inconsistency
// (PredSelfImpliesSuccSelf: a node that rejoins through n1 ends as its own
// predecessor), n1 and n6 both; every distinct prediction is written as a
// report that 'trace show' replays; with the paper's correction it is not
// predicted (the long test also runs the seed twice and wants the same
// output). The rounds' liveness walks are off (--walks 0): they are
// tested on their own.
//
// The quick test searches 2,000 states per round instead of --mode debug's
// 50,000 and stops at 7.5 s (each round's search is what costs: 2 rounds
// of 50,000 states took 14.7 s of CPU per run under the race detector).
// Seed 158 was chosen by running seeds 1..200 for 8 s at 2,000 states and
// keeping those whose first Figure 10 prediction is n1's and n6's both, at
// depth 7 with the paper's shape, and whose corrected run predicts no
// Figure 10; it had the fewest states in both runs. n1 predicts it at
// 7.02 s, n6 in its first round with a view of four nodes, at 7.21 s; the
// run stops at 7.5 s, after both, and the corrected run covers the same
// 7.5 s, n6's round included. (Seed 1 predicts it at the default 50,000:
// TestEmulateDeepOnlineDebuggingChordLong, in cli_long_test.go.) It used
// to run seed 28 for 12 s at 5,000 states: 14 s of CPU under the race
// detector for the two runs (131,000 states); now 2.5 s (23,000 states).
func TestEmulateDeepOnlineDebuggingChord(t *testing.T) {
	stdout, dir := chordDebugRun(t)
	checkChordDeepOnlineDebugging(t, chordDebugArgs, stdout, dir, false)
}

// chordDebugArgs is the quick deep online debugging run of Chord (see
// TestEmulateDeepOnlineDebuggingChord), without --reports.
var chordDebugArgs = []string{"emulate", "--service", "chord", "--nodes", "10", "--duration", "7.5s", "--churn", "0", "--mode", "debug",
	"--walks", "0", "--steer-states", "2000", "--seed", "158", "--json"}

var chordDebug struct {
	once             sync.Once
	stdout, dir, err string
}

// chordDebugRun runs chordDebugArgs with --reports once per test binary
// (TestEmulateDeepOnlineDebuggingChord and TestTraceShowPredictionReport
// share it: both only read its output and reports) and returns its
// output and the reports' directory.
func chordDebugRun(t *testing.T) (stdout, dir string) {
	t.Helper()
	chordDebug.once.Do(func() {
		dir, err := sharedTempDir("chord-debug")
		if err != nil {
			chordDebug.err = err.Error()
			return
		}
		code, stdout, stderr := runCLI(append(slices.Clone(chordDebugArgs), "--reports", dir)...)
		if code != exitOK {
			chordDebug.err = fmt.Sprintf("emulate: exit %d: %s", code, stderr)
			return
		}
		chordDebug.stdout, chordDebug.dir = stdout, dir
	})
	if chordDebug.err != "" {
		t.Fatal(chordDebug.err)
	}
	return chordDebug.stdout, chordDebug.dir
}

// figure10 returns the first prediction of PredSelfImpliesSuccSelf, the
// paper's Figure 10 (the zero prediction if there is none). Since nodes
// gather at start and on neighbourhood changes (snapshot.Config.
// GatherSettle), n1 predicts NodeOrdering races (Figure 11's family) at
// 6.1 s, in its first round, before Figure 10: the order of the two is not
// what these tests are about.
func figure10(ps []predictionOut) predictionOut {
	for _, p := range ps {
		if p.Property == chord.PredSelfImpliesSuccSelf {
			return p
		}
	}
	return predictionOut{}
}

// checkChordDeepOnlineDebugging checks stdout, the output of args run with
// --reports dir, as TestEmulateDeepOnlineDebuggingChord describes, and
// runs args with the correction (nothing predicted). With rerun it runs
// args again and wants the same output; the quick test leaves that to
// TestStatusLineDoesNotChangeTheRun, which runs a debugging run of the
// same seed twice.
func checkChordDeepOnlineDebugging(t *testing.T, args []string, stdout, dir string, rerun bool) {
	t.Helper()
	var out EmulateOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Predictors, []node.ID{1, 6}) {
		t.Fatalf("predictors %v, want [n1 n6]", out.Predictors)
	}
	if len(out.Predictions) == 0 {
		t.Fatalf("nothing predicted: %s", stdout)
	}
	p := figure10(out.Predictions)
	if p.Property != chord.PredSelfImpliesSuccSelf || !slices.Contains(p.Predictors, 6) || p.FirstPredictedS > 20 || p.Depth != 7 ||
		!strings.HasPrefix(p.Shape, "A reset silent; A app chord.JoinOverlay; B deliver chord.FindPred from A") || p.Report == "" {
		t.Fatalf("first prediction %+v", p)
	}
	seen := map[string]bool{}
	for _, q := range out.Predictions {
		key := q.Property + "|" + q.Shape
		if seen[key] {
			t.Errorf("prediction listed twice: %s", key)
		}
		seen[key] = true
		if q.Happened != nil {
			t.Errorf("%s happened in a run without it: %+v", q.Property, q.Happened)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != len(out.Predictions) {
		t.Fatalf("%d report files for %d predictions", len(files), len(out.Predictions))
	}
	code, shown, stderr := runCLI("trace", "show", p.Report)
	if code != exitOK || !strings.Contains(shown, fmt.Sprintf("predicted by %v", p.Node)) || !strings.Contains(shown, "violation of "+chord.PredSelfImpliesSuccSelf) {
		t.Fatalf("trace show %s: exit %d %s\n%s", p.Report, code, stderr, shown)
	}

	if rerun {
		checkChordRunRepeats(t, args, out)
	}

	// With the paper's correction there is nothing to predict.
	code, stdout, stderr = runCLI(append(slices.Clone(args), "--fix", "self-predecessor")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var corrected EmulateOutput
	if err := json.Unmarshal([]byte(stdout), &corrected); err != nil {
		t.Fatal(err)
	}
	for _, q := range corrected.Predictions {
		if q.Property == chord.PredSelfImpliesSuccSelf {
			t.Fatalf("predicted with the correction: %+v", q)
		}
	}
}

// checkChordRunRepeats runs args again and wants out: the same seed gives
// the same run and the same predictions.
func checkChordRunRepeats(t *testing.T, args []string, out EmulateOutput) {
	t.Helper()
	_, again, _ := runCLI(args...)
	var out2 EmulateOutput
	if err := json.Unmarshal([]byte(again), &out2); err != nil {
		t.Fatal(err)
	}
	for i := range out.Predictions {
		out.Predictions[i].Report = ""
	}
	first, _ := json.Marshal(out)
	second, _ := json.Marshal(out2)
	if stripWall(t, string(first)) != stripWall(t, string(second)) {
		t.Fatal("two runs of the same seed differ")
	}
}

// TestEmulateConfirmChordFigure10: with --confirm every distinct
// prediction carries a directed run's verdict. The paper's Figure 10
// inconsistency is real: the emulator, rerun to n1's round and forced
// along its path, takes all 7 steps and its n6 ends as its own
// predecessor. The two NodeOrdering paths through the node outside n1's
// model (the dummy sink) cannot be taken by the system: model-only.
func TestEmulateConfirmChordFigure10(t *testing.T) {
	code, stdout, stderr := runCLI(append(slices.Clone(chordDebugArgs), "--confirm")...)
	if code != exitOK {
		t.Fatalf("emulate --confirm: exit %d: %s", code, stderr)
	}
	var out EmulateOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]int{}
	for _, p := range out.Predictions {
		if p.Confirmed == nil {
			t.Fatalf("prediction of %s at %.3fs has no verdict", p.Property, p.FirstPredictedS)
		}
		verdicts[p.Property+" "+string(p.Confirmed.Verdict)]++
		if p.Property == "PredSelfImpliesSuccSelf" && (p.Confirmed.Verdict != "real" || p.Confirmed.Steps != p.Depth) {
			t.Errorf("Figure 10 prediction: %+v, want real after all %d steps", *p.Confirmed, p.Depth)
		}
	}
	want := map[string]int{"PredSelfImpliesSuccSelf real": 1, "NodeOrdering model-only": 2}
	if fmt.Sprint(verdicts) != fmt.Sprint(want) {
		t.Errorf("verdicts %v, want %v", verdicts, want)
	}
	if out.FirstRoundS <= 0 || out.FirstRoundS > out.Predictions[0].FirstPredictedS {
		t.Errorf("first round at %.3fs, first prediction at %.3fs", out.FirstRoundS, out.Predictions[0].FirstPredictedS)
	}
}

// TestEmulateConfirmNeedsMode: --confirm without predictions to judge is
// a usage error, not a silent no-op.
func TestEmulateConfirmNeedsMode(t *testing.T) {
	code, _, stderr := runCLI("emulate", "--service", "chord", "--nodes", "4", "--duration", "1s", "--churn", "0", "--confirm")
	if code != exitUsage || !strings.Contains(stderr, "--confirm") {
		t.Fatalf("emulate --confirm without --mode: exit %d: %s", code, stderr)
	}
}
