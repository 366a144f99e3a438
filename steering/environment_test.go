package steering_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// chordFigure11Spec is the paper's Chord on the 64-identifier ring of
// Figure 11, nodes placed by ID.
func chordFigure11Spec() node.Spec { return chordSpec(false) }

// chordSpec is that Chord, with the paper's correction of Figure 11 if fix.
func chordSpec(fix bool) node.Spec {
	o := chord.DefaultOptions()
	o.Placement, o.Bits = chord.PlaceByID, 6
	o.FixNodeOrdering = fix
	return chord.NewSpec(o)
}

// loneBootstrap is the snapshot Figure 11 starts from: n30 has formed a
// ring of its own and is its whole neighbourhood. Nothing in it can go
// wrong without nodes that join.
func loneBootstrap(t *testing.T, spec node.Spec) *snapshot.Snapshot {
	t.Helper()
	const self node.ID = 30
	at := time.Unix(1_000_000, 0).UTC()
	c, err := node.NewCore(node.CoreConfig{ID: self, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []node.Event{
		{Kind: node.EventInit, At: at},
		{Kind: node.EventApp, At: at, Msg: chord.JoinOverlay{Bootstrap: self}},
	} {
		if _, err := c.Step(ev); err != nil {
			t.Fatal(err)
		}
	}
	b, err := c.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	return snapshotOf(self, []consequence.Checkpoint{{ID: self, Bytes: b, At: at}})
}

// chordController is a debugging controller at n30 for Chord's safety
// properties, with 2,000 states a search (the environment search meets
// Figure 11 within about a thousand).
func chordController(t *testing.T, spec node.Spec, noArrivals bool) *steering.Controller {
	t.Helper()
	c, err := steering.New(steering.Config{
		Mode:         steering.Debug,
		Spec:         spec,
		Properties:   chord.SafetyProperties(),
		SearchBudget: steering.SearchBudget{MaxStates: 2_000},
		RoundModel:   steering.RoundModel{NoArrivals: noArrivals},
	}, 30)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRoundPredictsFigure11FromArrivals: from a snapshot of the lone
// bootstrap, a round whose model holds the two joiners n30 declares
// (chord.State.Arrivals: IDs placed just after it, joining through it)
// predicts the paper's Figure 11 — both join at once, n30 answers both,
// takes both UpdatePreds, and the stabilize of the higher one learns of
// the lower — in nine steps from the joiners' lookups in flight; a second
// variant, ten steps long, starts with n30's stabilize and a joiner's join
// retry (the explorer's virtual clock orders the timers: the variants of
// any-order timers are gone).
// Without the environment the round predicts nothing, and with the
// paper's correction neither.
func TestRoundPredictsFigure11FromArrivals(t *testing.T) {
	ctx := context.Background()
	spec := chordFigure11Spec()
	snap := loneBootstrap(t, spec)

	arrivals, err := steering.SnapshotArrivals(spec, snap, steering.DefaultArrivals)
	if err != nil {
		t.Fatal(err)
	}
	if len(arrivals) != 2 || arrivals[0].ID != chord.ArrivalBase || arrivals[1].ID != chord.ArrivalBase+1 {
		t.Fatalf("arrivals %v, want n%d and n%d", arrivals, chord.ArrivalBase, chord.ArrivalBase+1)
	}

	rep, err := chordController(t, spec, false).Round(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	// Figure 11 as the round finds it: n1000001 (A(i-1)) joins first and
	// its stabilize fires at once, its GetPred waiting until n30 has taken
	// both UpdatePreds, the lower joiner's first.
	want := strings.Join([]string{
		"n30 deliver chord.FindPred from n1000001",
		"n1000001 deliver chord.FindPredReply from n30",
		"n1000001 timer stabilize",
		"n30 deliver chord.FindPred from n1000000",
		"n1000000 deliver chord.FindPredReply from n30",
		"n30 deliver chord.UpdatePred from n1000000",
		"n30 deliver chord.UpdatePred from n1000001",
		"n30 deliver chord.GetPred from n1000001",
		"n1000001 deliver chord.GetPredReply from n30",
	}, "; ")
	const wantErr = "n1000001: successor n1000000 lies between predecessor n30 and n1000001"
	found := false
	for i, p := range rep.Predictions {
		t.Logf("prediction %d: %v", i, p)
		if wantLen := []int{9, 10}[min(i, 1)]; p.Property != chord.NodeOrdering || len(p.Path) != wantLen || p.Err == nil || p.Err.Error() != wantErr || p.Arrivals != steering.DefaultArrivals {
			t.Errorf("prediction %d: %s at depth %d (%v) with %d arrivals, want NodeOrdering at depth %d (%s) with 2", i, p.Property, len(p.Path), p.Err, p.Arrivals, wantLen, wantErr)
		}
		var path []string
		for _, a := range p.Path {
			path = append(path, a.String())
		}
		found = found || strings.Join(path, "; ") == want
	}
	if len(rep.Predictions) != 2 || !found {
		t.Errorf("%d predictions in %d states, want 2 with Figure 11's path %s", len(rep.Predictions), rep.States, want)
	}

	off, err := chordController(t, spec, true).Round(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Predictions) != 0 {
		t.Errorf("without arrivals: %v", off.Predictions)
	}

	fixed := chordSpec(true)
	rep, err = chordController(t, fixed, false).Round(ctx, loneBootstrap(t, fixed))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Predictions) != 0 {
		t.Errorf("with the correction: %v", rep.Predictions)
	}
}

// TestArrivalsConfig: a negative bound is an error, zero in a Config is
// the default, and SnapshotModelWith holds as many joiners as the bound
// and the members' declarations allow (none for a zero bound).
func TestArrivalsConfig(t *testing.T) {
	spec := chordFigure11Spec()
	if _, err := steering.New(steering.Config{Spec: spec, RoundModel: steering.RoundModel{Arrivals: -1}}, 30); !errors.Is(err, steering.ErrInvalidConfig) {
		t.Errorf("Arrivals -1: %v, want ErrInvalidConfig", err)
	}
	if got := steering.DefaultConfig().Arrivals; got != steering.DefaultArrivals {
		t.Errorf("DefaultConfig().Arrivals = %d, want %d", got, steering.DefaultArrivals)
	}
	snap := loneBootstrap(t, spec)
	if _, err := steering.SnapshotModelWith(spec, snap, steering.SnapshotOptions{Arrivals: -1}); !errors.Is(err, steering.ErrInvalidConfig) {
		t.Errorf("SnapshotOptions.Arrivals -1: %v, want ErrInvalidConfig", err)
	}
	for _, tc := range []struct {
		opts steering.SnapshotOptions
		want []node.ID
	}{
		{steering.SnapshotOptions{}, []node.ID{30}},
		{steering.SnapshotOptions{Arrivals: 1}, []node.ID{30, chord.ArrivalBase}},
		{steering.SnapshotOptions{Arrivals: 5}, []node.ID{30, chord.ArrivalBase, chord.ArrivalBase + 1}}, // n30 declares two
	} {
		m, err := steering.SnapshotModelWith(spec, snap, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Nodes(); !equalIDs(got, tc.want) {
			t.Errorf("%+v: nodes %v, want %v", tc.opts, got, tc.want)
		}
	}
}

func equalIDs(a, b []node.ID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// porch is the tiny service of the arrivals contract: node k declares the
// arrivals Declared[k] (configuration, not state), each calling ring.
type porch struct {
	Declared map[node.ID][]node.ID `msgpack:"-"`
}

type ring struct{}

func (ring) MessageType() string { return "porch.Ring" }

func (p *porch) Init(node.Env)                                 {}
func (p *porch) HandleMessage(node.Env, node.ID, node.Message) {}
func (p *porch) HandleTimer(node.Env, string)                  {}
func (p *porch) HandleApp(node.Env, node.Message)              {}
func (p *porch) HandleTransportError(node.Env, node.ID)        {}
func (p *porch) Arrivals(self node.ID) []node.Arrival {
	var out []node.Arrival
	for _, id := range p.Declared[self] {
		out = append(out, node.Arrival{ID: id, Calls: []node.Message{ring{}}})
	}
	return out
}

// TestSnapshotArrivalsOrder pins the choice of arrivals: the gatherer's
// first, then the other members' by ascending ID, each in its declared
// order, skipping None, members, dead and excluded members and repeats,
// and at most the bound.
func TestSnapshotArrivalsOrder(t *testing.T) {
	declared := map[node.ID][]node.ID{
		1: {101, 2, 201},         // n2 is a member
		2: {102, 0, 101, 202},    // None; n101 is n1's too
		3: {103, 4, 5, 203, 303}, // n4 is dead, n5 excluded
	}
	spec := node.Spec{Name: "porch", New: func() node.Service { return &porch{Declared: declared} }, Messages: []node.Message{ring{}}}
	at := time.Unix(1_000_000, 0).UTC()
	var cps []consequence.Checkpoint
	for _, id := range []node.ID{1, 2, 3} {
		c, err := node.NewCore(node.CoreConfig{ID: id, Factory: spec.New})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Step(node.Event{Kind: node.EventInit, At: at}); err != nil {
			t.Fatal(err)
		}
		b, err := c.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: at})
	}
	snap := snapshotOf(2, cps)
	snap.Dead = []node.ID{4}
	snap.Excluded = []snapshot.Exclusion{{Node: 5, Reason: "bandwidth"}}
	for max, want := range map[int][]node.ID{
		0:   nil,
		1:   {102},
		3:   {102, 101, 202},
		100: {102, 101, 202, 201, 103, 203, 303},
	} {
		got, err := steering.SnapshotArrivals(spec, snap, max)
		if err != nil {
			t.Fatal(err)
		}
		var ids []node.ID
		for _, a := range got {
			ids = append(ids, a.ID)
			if len(a.Calls) != 1 || a.Calls[0] != (ring{}) {
				t.Errorf("%v: calls %v", a.ID, a.Calls)
			}
		}
		if !equalIDs(ids, want) {
			t.Errorf("max %d: %v, want %v", max, ids, want)
		}
	}
	m, err := steering.SnapshotModelWith(spec, snap, steering.SnapshotOptions{Arrivals: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Nodes(), []node.ID{1, 2, 3, 101, 102, 202}; !equalIDs(got, want) {
		t.Errorf("model nodes %v, want %v", got, want)
	}
}
