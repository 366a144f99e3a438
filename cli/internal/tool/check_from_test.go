package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
)

// chordPrefix is the first half of the path to chord's NodeOrdering
// violation from three nodes' initial configuration (12 steps, found by
// breadth-first search): every node has joined, n3's lookup is answered.
var chordPrefix = []string{
	"n1 app chord.JoinOverlay",
	"n2 app chord.JoinOverlay",
	"n1 deliver chord.FindPred from n2",
	"n2 deliver chord.FindPredReply from n1",
	"n3 app chord.JoinOverlay",
	"n1 deliver chord.FindPred from n3",
}

// fromDepth is the depth budget of both searches: half the violation's
// depth from the initial configuration.
const fromDepth = 8

// chordStartFiles writes the state chordPrefix reaches as a /snapshot
// document and as a prediction report holding it, and returns their names.
func chordStartFiles(t *testing.T) (snapFile, reportFile string) {
	t.Helper()
	svc, err := testCatalog().lookup("chord", nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	m, err := serviceModel(svc, 3, 1, consequence.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Start()
	for _, step := range chordPrefix {
		next := (*consequence.GlobalState)(nil)
		for _, a := range m.Actions(g, nil) {
			if a.Act.String() == step {
				next, _ = m.Next(g, a.Act)
				break
			}
		}
		if next == nil {
			t.Fatalf("step %q is not enabled", step)
		}
		g = next
	}
	snap, err := paper.SnapshotOfState(g, 1)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := report.NewSnapshot(snap, svc.spec, snap.At)
	if err != nil {
		t.Fatal(err)
	}
	pd := report.Prediction{Format: report.PredictionFormat, Node: 1, Service: "chord", Nodes: 3, Mode: "debug",
		Property: "NodeOrdering", Snapshot: doc}
	dir := t.TempDir()
	snapFile, reportFile = filepath.Join(dir, "snapshot.json"), filepath.Join(dir, "report.json")
	for file, v := range map[string]any{snapFile: doc, reportFile: pd} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return snapFile, reportFile
}

// checkJSON runs check --json with args and decodes its output.
func checkJSON(t *testing.T, args ...string) checkOutput {
	t.Helper()
	code, stdout, stderr := runCLI(append([]string{"check", "--budget", "0", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("check %v: exit %d: %s", args, code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckFromFindsWhatTheStartMisses: within the same depth budget, a
// search of chord's initial configuration finds nothing, while one from
// the reported state — a prediction report's snapshot, or the same state
// as a /snapshot document — finds NodeOrdering violated; 'trace show'
// replays the violation on the same start.
func TestCheckFromFindsWhatTheStartMisses(t *testing.T) {
	snapFile, reportFile := chordStartFiles(t)
	depth := []string{"--max-depth", strconv.Itoa(fromDepth), "--max-states", "100000"}
	if out := checkJSON(t, append([]string{"--service", "chord", "--nodes", "3"}, depth...)...); len(out.Violations) != 0 || out.Stop != "depth budget" {
		t.Fatalf("from the initial configuration: %v, %d violations", out.Stop, len(out.Violations))
	}
	for _, from := range []struct{ name, file string }{{"report", reportFile}, {"snapshot", snapFile}} {
		t.Run(from.name, func(t *testing.T) {
			args := append([]string{"--from", from.file}, depth...)
			if from.name == "snapshot" {
				args = append(args, "--service", "chord")
			}
			out := checkJSON(t, args...)
			if len(out.Violations) == 0 || out.Violations[0].Property != "NodeOrdering" || out.Target != "chord" || out.From != from.file || out.Start == nil {
				t.Fatalf("from %s: %+v", from.name, out.Violations)
			}
			t.Logf("from %s: %d states, %s at depth %d", from.name, out.Unique, out.Violations[0].Property, out.Violations[0].Depth)
			b, _ := json.Marshal(out)
			file := filepath.Join(t.TempDir(), "check.json")
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if code, shown, stderr := runCLI("trace", "show", file); code != exitOK || !strings.Contains(shown, "violation of NodeOrdering") {
				t.Fatalf("trace show: exit %d: %s%s", code, shown, stderr)
			}
		})
	}
	// The same flags as from the initial configuration: liveness walks
	// and faults.
	out := checkJSON(t, "--from", reportFile, "--strategy", "walk", "--walks", "4", "--dmax", "50", "--resets", "1")
	if out.Liveness == nil || out.Liveness.Walks != 4 {
		t.Fatalf("walks from the report: %+v", out.Liveness)
	}
}

// TestCheckFromRejects: a file of another service or format, or none, is
// a usage error saying so.
func TestCheckFromRejects(t *testing.T) {
	snapFile, reportFile := chordStartFiles(t)
	check := filepath.Join(t.TempDir(), "check.json")
	if err := os.WriteFile(check, []byte(`{"format":"crystalball-check/1","target":"chord","nodes":3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", reportFile, "--service", "randtree"}, `service "chord", not "randtree"`},
		{[]string{"--from", snapFile, "--service", "randtree"}, "properties"},
		{[]string{"--from", check}, "neither a prediction report"},
		{[]string{"--from", filepath.Join(t.TempDir(), "missing.json")}, "no such file"},
		{[]string{"--from", reportFile, "--model", "2pc"}, "--model"},
	} {
		code, _, stderr := runCLI(append([]string{"check", "--budget", "0"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("check %v: exit %d, %q; want a usage error containing %q", c.args, code, stderr, c.want)
		}
	}
}
