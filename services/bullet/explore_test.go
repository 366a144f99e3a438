package bullet

import (
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// These tests run consequence prediction for Bullet′ from the live state of
// the scenario scripts just before n2's diff timer fires (n2 holds blocks
// 0-1 in its shadow for n3). The bug needs the transport to refuse the
// diff: without refusals as an explored fault (consequence.Faults.Refusals)
// the paper's code is as consistent as the corrected one.

// liveModel builds the actor model of the harness's nodes as a gathered
// snapshot would give it: their checkpoints at the harness's clock and the
// messages in flight. Every node downloads from n1 after a reset.
func liveModel(t *testing.T, h *nodetest.Harness, opts Options, faults consequence.Faults) *consequence.ActorModel {
	t.Helper()
	return servicetest.LiveModel(t, h, NewSpec(opts), consequence.ActorOptions{
		Workload: func(node.ID, bool) []node.Message { return []node.Message{Download{Source: 1}} },
		Faults:   faults,
	})
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
		h := nodetest.ReplayUntil(t, harnessConfig(), tc.script, "fire n2 diff")
		m := liveModel(t, h, scriptOpts(tc.fix), consequence.Faults{Resets: 1, ResetKinds: consequence.ResetBoth, Breaks: 1})
		res := servicetest.Predict(t, m, FileMapViewConsistent, 6000)
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
	h := nodetest.ReplayUntil(t, harnessConfig(), "testdata/refused-diff.txt", "fire n2 diff")
	m := liveModel(t, h, scriptOpts(false), faults)
	res := servicetest.Predict(t, m, FileMapViewConsistent, 5000)
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

	h = nodetest.ReplayUntil(t, harnessConfig(), "testdata/refused-diff-fixed.txt", "fire n2 diff")
	fixed := servicetest.Predict(t, liveModel(t, h, scriptOpts(true), faults), FileMapViewConsistent, 5000)
	if v, ok := fixed.Violated(FileMapViewConsistent); ok {
		t.Fatalf("with keep-shadow: %v at depth %d", v.Err, v.Depth)
	}
	if fixed.Depth <= 2 {
		t.Fatalf("with keep-shadow the search stopped at depth %d, not past the paper's 2", fixed.Depth)
	}
}
