package bullet

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// These tests run consequence prediction for Bullet′ from the live state of
// the scenario scripts just before n2's diff timer fires (n2 holds blocks
// 0-1 in its shadow for n3). The bug needs the transport to refuse the
// diff: without refusals as an explored fault (consequence.Faults.Refusals)
// the paper's code is as consistent as the corrected one.

// scriptPrefix replays the script at path on a fresh harness up to (not
// including) its first command whose text is stop, and returns the
// harness; the outputs are not compared (the script's own test does).
func scriptPrefix(t *testing.T, path, stop string) *nodetest.Harness {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := nodetest.New(harnessConfig())
	if err != nil {
		t.Fatal(err)
	}
	// A command is a line followed by "----"; its output runs to the next
	// blank line (the scripts' outputs have none inside).
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") || lines[i+1] != "----" {
			continue
		}
		if line == stop {
			return h
		}
		cmd, args, err := datadriven.ParseLine(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		h.Run(t, &datadriven.TestData{Pos: fmt.Sprintf("%s:%d", path, i+1), Cmd: cmd, CmdArgs: args})
	}
	t.Fatalf("%s has no command %q", path, stop)
	return nil
}

// liveModel builds the actor model of the harness's nodes as a gathered
// snapshot would give it: their checkpoints at the harness's clock and the
// messages in flight. Every node downloads from n1 after a reset.
func liveModel(t *testing.T, h *nodetest.Harness, opts Options, faults consequence.Faults) *consequence.ActorModel {
	t.Helper()
	var cps []consequence.Checkpoint
	for _, id := range h.Nodes() {
		c, err := h.Core(id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.State().AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: h.Now()})
	}
	m, err := consequence.NewActorModelFromCheckpoints(NewSpec(opts), cps, h.Pending(), consequence.ActorOptions{
		Workload: func(node.ID, bool) []node.Message { return []node.Message{Download{Source: 1}} },
		Faults:   faults,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// predict runs consequence prediction for FileMapViewConsistent on m
// within budget states.
func predict(t *testing.T, m *consequence.ActorModel, budget int) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	var props []consequence.Property[*consequence.GlobalState]
	for _, p := range m.Properties() {
		if p.Name == consequence.CrashProperty || p.Name == FileMapViewConsistent {
			props = append(props, p)
		}
	}
	res, err := consequence.NewChecker(m).
		Properties(props...).
		Strategy(consequence.Consequence).
		MaxStates(budget).
		StopOnViolation(true).
		Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d unique states, depth %d, stop: %v", res.Unique, res.Depth, res.Stop)
	if v, ok := res.Violated(consequence.CrashProperty); ok {
		t.Fatalf("a handler panicked: %v", v.Err)
	}
	return res
}

// scriptOpts are the options of the scripts: 8 blocks, push-fanout=1.
func scriptOpts(fix bool) Options {
	o := scriptOptions()
	o.PushFanout, o.FixKeepShadow = 1, fix
	return o
}

// TestPredictWithoutRefusals: from the state before n2's diff, the
// explorer runs Bullet′'s handlers through thousands of states (pushes,
// diffs, requests, peering, a reset of either kind, a broken connection)
// without a handler failing or, with no refusal explored,
// FileMapViewConsistent violated — in the paper's code
// and in the corrected one alike. Each search keeps 6,000 states, which
// reach depth 13 (20,000 reached 18 and cost three times as much; the
// test asks for depth 10).
func TestPredictWithoutRefusals(t *testing.T) {
	for _, tc := range []struct {
		script string
		fix    bool
	}{{"testdata/refused-diff.txt", false}, {"testdata/refused-diff-fixed.txt", true}} {
		h := scriptPrefix(t, tc.script, "fire n2 diff")
		m := liveModel(t, h, scriptOpts(tc.fix), consequence.Faults{Resets: 1, ResetKinds: consequence.ResetBoth, Breaks: 1})
		res := predict(t, m, 6000)
		if v, ok := res.Violated(FileMapViewConsistent); ok {
			t.Errorf("%s: %v at depth %d without a refusal", tc.script, v.Err, v.Depth)
		}
		if res.Depth < 10 {
			t.Errorf("%s: the search stopped at depth %d", tc.script, res.Depth)
		}
	}
}

// TestPredictRefusedDiff: with one refusal explored, consequence prediction
// from the state before n2's diff finds the paper's inconsistency — n2's
// diff timer, the transport refusing the Diff to n3 — and with the
// correction finds none.
func TestPredictRefusedDiff(t *testing.T) {
	faults := consequence.Faults{Refusals: 1}
	h := scriptPrefix(t, "testdata/refused-diff.txt", "fire n2 diff")
	m := liveModel(t, h, scriptOpts(false), faults)
	res := predict(t, m, 5000)
	v, ok := res.Violated(FileMapViewConsistent)
	if !ok {
		t.Fatalf("no violation of %s in %d states (stop: %v)", FileMapViewConsistent, res.Unique, res.Stop)
	}
	var path []string
	for _, a := range v.Path {
		path = append(path, a.Act.String())
	}
	t.Logf("found at depth %d: %s; %v", v.Depth, strings.Join(path, ", "), v.Err)
	if got, want := strings.Join(path, ", "), "n2 timer diff, n2 refuse-send bullet.Diff to n3"; got != want {
		t.Errorf("path %q, want %q", got, want)
	}
	if want := "n2 -> n3: 2 blocks (the first 0) are neither announced to n3 nor in n2's shadow for n3"; v.Err.Error() != want {
		t.Errorf("violation %q, want %q", v.Err, want)
	}
	end, err := consequence.Replay[*consequence.GlobalState, consequence.ActorAction](m, v.Start, v.Path)
	if err != nil || end.Fingerprint() != v.Fingerprint {
		t.Fatalf("the path does not replay to the violation: %v", err)
	}

	h = scriptPrefix(t, "testdata/refused-diff-fixed.txt", "fire n2 diff")
	fixed := predict(t, liveModel(t, h, scriptOpts(true), faults), 5000)
	if v, ok := fixed.Violated(FileMapViewConsistent); ok {
		t.Fatalf("with keep-shadow: %v at depth %d", v.Err, v.Depth)
	}
	if fixed.Depth <= 2 {
		t.Fatalf("with keep-shadow the search stopped at depth %d, not past the paper's 2", fixed.Depth)
	}
}
