package steering_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// snapshotOf packages checkpoints as the snapshot gatherer would have
// gathered them (nothing in flight).
func snapshotOf(gatherer node.ID, cps []consequence.Checkpoint) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Gatherer: gatherer, CN: 7}
	for _, cp := range cps {
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: cp.ID, CN: 7, State: cp.Bytes})
		s.At = cp.At
	}
	return s
}

func figure2Snapshot(t *testing.T, spec node.Spec) *snapshot.Snapshot {
	t.Helper()
	s, err := paper.Figure2Snapshot(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// initialSnapshot is the three nodes of Figure 2 right after Init: nothing
// has happened yet, so nothing bad is near.
func initialSnapshot(t *testing.T, spec node.Spec) *snapshot.Snapshot {
	t.Helper()
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{Nodes: paper.Figure2Nodes})
	if err != nil {
		t.Fatal(err)
	}
	var cps []consequence.Checkpoint
	for _, id := range paper.Figure2Nodes {
		st, now, _ := m.Start().NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: now})
	}
	return snapshotOf(9, cps)
}

func controller(t *testing.T, mode steering.Mode, spec node.Spec, self node.ID) *steering.Controller {
	t.Helper()
	c, err := steering.New(steering.Config{
		Mode:               mode,
		Spec:               spec,
		Workload:           paper.Figure2Workload,
		Faults:             consequence.Faults{Resets: 1, SilentResets: true},
		LivenessWalks:      steering.LivenessWalks{MaxWalkSteps: steering.Figure2WalkSteps},
		InterventionPolicy: steering.InterventionPolicy{BreakConnection: true},
		// The paper's filter: drop the Join and reset the connection.

		// A tenth of the default walk budget (see Figure2WalkSteps).

	}, self)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSteerFigure2: n9, predicting from Figure 2's live state, finds the
// children∩siblings violation and installs the paper's filter — drop the
// Join n13 sends after its reset, and break the connection — after
// checking that exploring with the filter in place finds no violation.
// The next round on the same state replays the stored path and reinstalls
// the filter at once; a round on a state with nothing bad ahead leaves no
// filter behind.
func TestSteerFigure2(t *testing.T) {
	ctx := context.Background()
	spec := randtree.NewSpec(randtree.DefaultOptions())
	c := controller(t, steering.Steer, spec, 9)
	rep, err := c.Round(ctx, figure2Snapshot(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	var found *steering.Prediction
	for i, p := range rep.Predictions {
		t.Logf("predicted %s: %v; filter %v", p.Property, p.Err, p.Filter)
		if p.Property == randtree.ChildrenSiblingsDisjoint && found == nil {
			found = &rep.Predictions[i]
		}
	}
	if found == nil {
		t.Fatalf("no %s predicted in %+v", randtree.ChildrenSiblingsDisjoint, rep)
	}
	want := steering.Filter{Kind: steering.FilterMessage, Node: 9, From: 13, Type: "randtree.Join", Break: true}
	if found.Filter == nil || *found.Filter != want {
		t.Fatalf("filter %v, want %v", found.Filter, want)
	}
	if len(rep.Installed) == 0 || !contains(rep.Installed, want) || rep.Unhelpful != 0 {
		t.Fatalf("installed %v (unhelpful %d), want %v among them", rep.Installed, rep.Unhelpful, want)
	}
	if rep.States == 0 {
		t.Fatal("the round explored no states")
	}

	// The filter blocks exactly the targeted event.
	join13 := node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Join{Joiner: 13}}
	cases := []struct {
		ev   node.Event
		want layer.Verdict
	}{
		{join13, layer.Verdict{Break: true}},
		{node.Event{Kind: node.EventMessage, From: 1, Msg: randtree.Join{Joiner: 1}}, layer.Verdict{Handle: true}},
		{node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}}, layer.Verdict{Handle: true}},
		{node.Event{Kind: node.EventTimer, Timer: "recovery"}, layer.Verdict{Handle: true}},
		{node.Event{Kind: node.EventTransportError, Peer: 13}, layer.Verdict{Handle: true}},
	}
	before := c.Stats().FilterHits
	for _, tc := range cases {
		if got := c.Intercept(tc.ev); got != tc.want && !otherFilterMatches(rep.Installed, tc.ev) {
			t.Errorf("%v: %v, want %v", tc.ev, got, tc.want)
		}
	}
	if c.Stats().FilterHits == before {
		t.Error("a filter hit was not counted")
	}

	// Next round, same state: the last round's outcome is reused without
	// exploring, its checked filters back at once.
	rep2, err := c.Round(ctx, figure2Snapshot(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	if !rep2.Reused || rep2.States != 0 || !contains(rep2.Reinstalled, want) || !contains(rep2.Installed, want) || c.Stats().RoundsReused != 1 {
		t.Fatalf("second round: reused %v, %d states, reinstalled %v, installed %v", rep2.Reused, rep2.States, rep2.Reinstalled, rep2.Installed)
	}

	// A round on a different state on which the stored path still fails
	// (a Probe from the root is in flight to n13, on a channel the path
	// does not use): the path replays and its filter, which passed its
	// check, is back at once, before any search.
	probed := figure2Snapshot(t, spec)
	probed.Channels = []snapshot.Channel{{From: 1, To: 13, Complete: true,
		Messages: []node.Envelope{{From: 1, To: 13, CN: 7, Msg: randtree.Probe{Root: 1}}}}}
	rep2, err = c.Round(ctx, probed)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Reused || len(rep2.Predictions) == 0 || !rep2.Predictions[0].Replayed || !contains(rep2.Reinstalled, want) {
		t.Fatalf("round on the probed state: reused %v, predictions %v, reinstalled %v", rep2.Reused, rep2.Predictions, rep2.Reinstalled)
	}
	if c.Stats().ReplayHits == 0 {
		t.Fatal("replay hit not counted")
	}

	// A round from a state with nothing bad ahead removes every filter.
	rep3, err := c.Round(ctx, initialSnapshot(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Filters()) != 0 || len(rep3.Installed) != 0 {
		t.Fatalf("filters left after a clean round: %v (predictions %v)", c.Filters(), rep3.Predictions)
	}
	if !c.Intercept(join13).Handle {
		t.Fatal("the old filter still matches")
	}
}

// otherFilterMatches reports whether a filter other than the paper's one
// matches ev (the round may install more than one).
func otherFilterMatches(fs []steering.Filter, ev node.Event) bool {
	for _, f := range fs {
		if !f.Verdict(9, ev, steering.DefaultPostponeDelay).Handle && !(f.Kind == steering.FilterMessage && f.From == 13 && f.Type == "randtree.Join") {
			return true
		}
	}
	return false
}

func contains(fs []steering.Filter, f steering.Filter) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// TestDebugModeChangesNothing: debug predicts the same violation but
// installs no filter; off does not even explore; with the paper's
// correction nothing is predicted.
func TestDebugModeChangesNothing(t *testing.T) {
	ctx := context.Background()
	spec := randtree.NewSpec(randtree.DefaultOptions())
	c := controller(t, steering.Debug, spec, 9)
	rep, err := c.Round(ctx, figure2Snapshot(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Predictions) == 0 || len(rep.Installed) != 0 || len(c.Filters()) != 0 {
		t.Fatalf("debug: %d predictions, installed %v", len(rep.Predictions), rep.Installed)
	}
	off := controller(t, steering.Off, spec, 9)
	if rep, err := off.Round(ctx, figure2Snapshot(t, spec)); err != nil || rep.States != 0 || len(rep.Predictions) != 0 {
		t.Fatalf("off: %+v, %v", rep, err)
	}
	fixed := randtree.NewSpec(randtree.AllFixes())
	fc := controller(t, steering.Steer, fixed, 9)
	rep, err = fc.Round(ctx, figure2Snapshot(t, fixed))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Predictions {
		t.Errorf("fixed protocol: predicted %s: %v", p.Property, p.Err)
	}
}

func TestConfigErrors(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	for _, tc := range []struct {
		name string
		cfg  steering.Config
		self node.ID
	}{
		{"no spec", steering.Config{}, 1},
		{"no node", steering.Config{Spec: spec}, node.None},
		{"negative states", steering.Config{Spec: spec, SearchBudget: steering.SearchBudget{MaxStates: -1}}, 1},
		{"bad mode", steering.Config{Spec: spec, Mode: 9}, 1},
		{"negative walk depth", steering.Config{Spec: spec, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{DMax: -1}}}, 1},
		{"warm-up past the walk", steering.Config{Spec: spec, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{DMax: 50, DInit: 50}}}, 1},
		{"live fraction above 1", steering.Config{Spec: spec, LivenessWalks: steering.LivenessWalks{LiveFraction: 1.5}}, 1},
		{"negative walk weight", steering.Config{Spec: spec, LivenessWalks: steering.LivenessWalks{WalkWeights: map[consequence.ActorActionKind]float64{consequence.ActTimer: -1}}}, 1},
		{"negative walk budget", steering.Config{Spec: spec, LivenessWalks: steering.LivenessWalks{MaxWalkSteps: -5}}, 1},
	} {
		if _, err := steering.New(tc.cfg, tc.self); !errors.Is(err, steering.ErrInvalidConfig) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := steering.ParseMode("loud"); !errors.Is(err, steering.ErrInvalidConfig) || !strings.Contains(err.Error(), "loud") {
		t.Errorf("ParseMode: %v", err)
	}
	for _, m := range []steering.Mode{steering.Off, steering.Debug, steering.Steer} {
		if got, err := steering.ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, got, err)
		}
	}
}
