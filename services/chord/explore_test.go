package chord

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// These tests run the CrystalBall paper's prediction for Chord: consequence
// prediction from the live state just before each scenario of §5.2.2 —
// replayed by the scenario script itself up to that point — finds the
// inconsistency with the paper's code, and not with the correction.

// scriptPrefix replays the script at path on a fresh harness up to (not
// including) its first command whose text is stop, and returns the
// harness; the rest of the script is not run. With rename set, every node
// ID argument is renamed first. The outputs are not compared: the script's
// own test does that.
func scriptPrefix(t *testing.T, path, stop string, rename map[node.ID]node.ID) *nodetest.Harness {
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
		for k, a := range args {
			if id, err := node.ParseID(a.Key); err == nil && len(a.Vals) == 0 {
				if to, ok := rename[id]; ok {
					args[k] = datadriven.CmdArg{Key: to.String()}
				}
			}
		}
		h.Run(t, &datadriven.TestData{Pos: fmt.Sprintf("%s:%d", path, i+1), Cmd: cmd, CmdArgs: args})
	}
	t.Fatalf("%s has no command %q", path, stop)
	return nil
}

// liveModel builds the actor model of the harness's nodes as a gathered
// snapshot would give it: their checkpoints at the harness's clock and the
// messages in flight. Every node rejoins through bootstrap after a reset,
// as the experiments' workload has it.
func liveModel(t *testing.T, h *nodetest.Harness, opts Options, bootstrap node.ID, faults consequence.Faults) *consequence.ActorModel {
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
		Workload: func(node.ID, bool) []node.Message { return []node.Message{JoinOverlay{Bootstrap: bootstrap}} },
		Faults:   faults,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// predict runs consequence prediction for property on m within budget.
func predict(t *testing.T, m *consequence.ActorModel, property string, budget int) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	var props []consequence.Property[*consequence.GlobalState]
	for _, p := range m.Properties() {
		if p.Name == consequence.CrashProperty || p.Name == property {
			props = append(props, p)
		}
	}
	start := time.Now()
	res, err := consequence.NewChecker(m).
		Properties(props...).
		Strategy(consequence.Consequence).
		MaxStates(budget).
		StopOnViolation(true).
		Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d unique states, depth %d, stop: %v, %v", property, res.Unique, res.Depth, res.Stop, time.Since(start).Round(time.Millisecond))
	if v, ok := res.Violated(consequence.CrashProperty); ok {
		t.Fatalf("a handler panicked: %v", v.Err)
	}
	return res
}

// foundAndReplays checks that res holds a violation of property whose path
// contains want, in order, and that the path replays to it.
func foundAndReplays(t *testing.T, m *consequence.ActorModel, res *consequence.Result[*consequence.GlobalState, consequence.ActorAction], property, wantErr string, want []string) {
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
func notFound(t *testing.T, res *consequence.Result[*consequence.GlobalState, consequence.ActorAction], property string, depth int) {
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
	h := scriptPrefix(t, "testdata/figure11.txt", stop, nil)
	opts := func(fix bool) Options {
		o := DefaultOptions()
		o.Placement, o.Bits = PlaceByID, 6
		o.FixNodeOrdering = fix
		return o
	}
	m := liveModel(t, h, opts(false), 30, consequence.Faults{})
	res := predict(t, m, NodeOrdering, predictionBudget)
	foundAndReplays(t, m, res, NodeOrdering, "n20: successor n10 lies between predecessor n30 and n20", []string{
		"n20 timer stabilize",
		"n30 deliver chord.GetPred from n20",
		"n20 deliver chord.GetPredReply from n30",
	})
	if v, _ := res.Violated(NodeOrdering); v.Depth != 3 {
		t.Errorf("found at depth %d, want 3 (the paper's three steps)", v.Depth)
	}

	fixed := liveModel(t, h, opts(true), 30, consequence.Faults{})
	notFound(t, predict(t, fixed, NodeOrdering, predictionBudget), NodeOrdering, 3)
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
	h := scriptPrefix(t, "testdata/figure10.txt", stop, nil)
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
	res := predict(t, m, PredSelfImpliesSuccSelf, predictionBudget)
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
	notFound(t, predict(t, fixed, PredSelfImpliesSuccSelf, predictionBudget), PredSelfImpliesSuccSelf, 7)
}
