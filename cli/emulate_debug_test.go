package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
)

// Deep online debugging on Chord: with --mode debug two nodes (n1, the
// bootstrap, and n6) gather their neighbourhoods every 10 s and predict.
// From n6's first snapshot (n1's too, later; with timers in any order only
// n1's found it), consequence prediction with a silent reset and
// a broken connection finds the paper's Figure 10 inconsistency
// (PredSelfImpliesSuccSelf: a node that rejoins through n1 ends as its own
// predecessor); every distinct prediction is written as a report that
// 'trace show' replays; the run is a pure function of its seed; with the
// paper's correction nothing is predicted. The rounds' liveness walks are
// off (--walks 0): they are tested on their own, and this test's three
// runs are the slowest of the package under -race.
func TestEmulateDeepOnlineDebuggingChord(t *testing.T) {
	dir := t.TempDir()
	args := []string{"emulate", "--service", "chord", "--nodes", "10", "--duration", "20s", "--churn", "0", "--mode", "debug", "--walks", "0", "--json"}
	code, stdout, stderr := runCLI(append(args, "--reports", dir)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out emulateOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Predictors, []node.ID{1, 6}) {
		t.Fatalf("predictors %v, want [n1 n6]", out.Predictors)
	}
	if len(out.Predictions) == 0 {
		t.Fatalf("nothing predicted: %s", stdout)
	}
	p := out.Predictions[0]
	if p.Property != chord.PredSelfImpliesSuccSelf || p.Node != 6 || p.FirstPredictedS < 10 || p.FirstPredictedS > 20 || p.Depth != 7 ||
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
	if code != exitOK || !strings.Contains(shown, "predicted by n6") || !strings.Contains(shown, "violation of "+chord.PredSelfImpliesSuccSelf) {
		t.Fatalf("trace show %s: exit %d %s\n%s", p.Report, code, stderr, shown)
	}

	// The same seed gives the same run and the same predictions.
	_, again, _ := runCLI(args...)
	var out2 emulateOutput
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

	// With the paper's correction there is nothing to predict.
	code, stdout, stderr = runCLI(append(args, "--fix", "self-predecessor")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var fixed emulateOutput
	if err := json.Unmarshal([]byte(stdout), &fixed); err != nil {
		t.Fatal(err)
	}
	for _, q := range fixed.Predictions {
		if q.Property == chord.PredSelfImpliesSuccSelf {
			t.Fatalf("predicted with the correction: %+v", q)
		}
	}
}
