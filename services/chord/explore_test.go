package chord

import (
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// These tests run the CrystalBall paper's prediction for Chord: consequence
// prediction from the live state just before each scenario of §5.2.2 —
// replayed by the scenario script itself up to that point — finds the
// inconsistency with the paper's code, and not with the correction.

// liveModel builds the actor model of the harness's nodes as a gathered
// snapshot would give it: their checkpoints at the harness's clock and the
// messages in flight. Every node rejoins through bootstrap after a reset,
// as the experiments' workload has it.
func liveModel(t *testing.T, h *nodetest.Harness, opts Options, bootstrap node.ID, faults consequence.Faults) *consequence.ActorModel {
	t.Helper()
	return servicetest.LiveModel(t, h, NewSpec(opts), consequence.ActorOptions{
		Workload: func(node.ID, bool) []node.Message { return []node.Message{JoinOverlay{Bootstrap: bootstrap}} },
		Faults:   faults,
	})
}

// foundAndReplays checks that res holds a violation of property whose path
// contains want, in order, and that the path replays to it.
func foundAndReplays(t *testing.T, m *consequence.ActorModel, res *servicetest.Result, property, wantErr string, want []string) {
	t.Helper()
	v, ok := res.Violated(property)
	if !ok {
		t.Fatalf("no violation of %s in %d states (stop: %v)", property, res.Unique, res.Stop)
	}
	var path []string
	for _, a := range v.Path {
		path = append(path, a.Act.String())
	}
	t.Logf("found at depth %d: %s; %v", v.Depth, strings.Join(path, ", "), v.Err)
	i := 0
	for _, step := range path {
		if i < len(want) && step == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("path %q lacks %q (in order)", path, want[i:])
	}
	if !strings.Contains(v.Err.Error(), wantErr) {
		t.Errorf("violation %q, want it to say %q", v.Err, wantErr)
	}
	end, err := consequence.Replay[*consequence.GlobalState, consequence.ActorAction](m, v.Start, v.Path)
	if err != nil {
		t.Fatal(err)
	}
	if end.Fingerprint() != v.Fingerprint {
		t.Fatalf("replay reached %v, violation at %v", end.Fingerprint(), v.Fingerprint)
	}
}

// notFound checks that res found no violation of property although it
// explored every state up to the depth at which the paper's code shows it
// (consequence prediction goes level by level).
func notFound(t *testing.T, res *servicetest.Result, property string, depth int) {
	t.Helper()
	if v, ok := res.Violated(property); ok {
		t.Fatalf("with the correction: %v at depth %d", v.Err, v.Depth)
	}
	if res.Depth <= depth {
		t.Fatalf("with the correction the search stopped at depth %d, not past the paper's %d", res.Depth, depth)
	}
}

// The budget of each search: enough for the paper's code to show its
// inconsistency many times over, and what the corrected code is searched
// with.
const predictionBudget = 30_000

// TestPredictFigure11: from the state in which A(i) has just set its
// predecessor to A(i-1) and its successor to A(i-2), consequence
// prediction finds the ordering violation through A(i-1)'s stabilize.
func TestPredictFigure11(t *testing.T) {
	const stop = "state"
	h := nodetest.ReplayUntil(t, harnessConfig(), "testdata/figure11.txt", stop)
	opts := func(fix bool) Options {
		o := DefaultOptions()
		o.Placement, o.Bits = PlaceByID, 6
		o.FixNodeOrdering = fix
		return o
	}
	m := liveModel(t, h, opts(false), 30, consequence.Faults{})
	res := servicetest.Predict(t, m, NodeOrdering, predictionBudget)
	foundAndReplays(t, m, res, NodeOrdering, "n20: successor n10 lies between predecessor n30 and n20", []string{
		"n20 timer stabilize",
		"n30 deliver chord.GetPred from n20",
		"n20 deliver chord.GetPredReply from n30",
	})
	if v, _ := res.Violated(NodeOrdering); v.Depth != 3 {
		t.Errorf("found at depth %d, want 3 (the paper's three steps)", v.Depth)
	}

	fixed := liveModel(t, h, opts(true), 30, consequence.Faults{})
	notFound(t, servicetest.Predict(t, fixed, NodeOrdering, predictionBudget), NodeOrdering, 3)
}

// TestPredictFigure10: from the state after B's reset, in which A's
// successor is C, consequence prediction with one reset and one broken
// connection finds the paper's seven steps: C resets, rejoins through A,
// sends UpdatePred to itself, gets a transport error from A that clears
// its predecessor, and takes the loopback UpdatePred.
//
// The snapshot model assumes a connection between nodes that name each
// other, A and C among them, so it is a silent reset that keeps A unaware
// of C's reset here, as the missing connection did in the paper's run.
//
// The break that matters comes right after C handled A's FindPredReply, in
// a state where only C's local state is new: a break is a local action of
// both ends, so consequence prediction expands it there. (When it was the
// lower-ID end's alone, A = n1's, the break was never expanded where it
// matters and this test had to rename the nodes so that C's ID lay below
// A's.)
func TestPredictFigure10(t *testing.T) {
	const stop = "reset n3"
	const a, c node.ID = 1, 3
	h := nodetest.ReplayUntil(t, harnessConfig(), "testdata/figure10.txt", stop)
	if got := h.Service(a).(*State).Successor(a); got != c {
		t.Fatalf("A's successor is %v, want C (%v)", got, c)
	}
	opts := func(fix bool) Options {
		o := DefaultOptions()
		o.Placement, o.Bits = PlaceByID, 6
		o.FixSelfPredecessor = fix
		return o
	}
	faults := consequence.Faults{Resets: 1, SilentResets: true, Breaks: 1}
	m := liveModel(t, h, opts(false), a, faults)
	res := servicetest.Predict(t, m, PredSelfImpliesSuccSelf, predictionBudget)
	foundAndReplays(t, m, res, PredSelfImpliesSuccSelf, "n3: predecessor is itself but successors are [n4]", []string{
		"n3 reset silent",
		"n3 app chord.JoinOverlay",
		"n1 deliver chord.FindPred from n3",
		"n3 deliver chord.FindPredReply from n1",
		"n3 break n1",
		"n3 transport-error from n1",
		"n3 deliver chord.UpdatePred from n3",
	})
	if v, _ := res.Violated(PredSelfImpliesSuccSelf); v.Depth != 7 {
		t.Errorf("found at depth %d, want 7 (the paper's steps)", v.Depth)
	}

	fixed := liveModel(t, h, opts(true), a, faults)
	notFound(t, servicetest.Predict(t, fixed, PredSelfImpliesSuccSelf, predictionBudget), PredSelfImpliesSuccSelf, 7)
}
