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
func chordFigure11Spec() node.Spec {
	o := chord.DefaultOptions()
	o.Placement, o.Bits = chord.PlaceByID, 6
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

// chordController is a debugging controller at n30 that explores the
// ring's first ordering violation only.
func chordController(t *testing.T, spec node.Spec, noArrivals bool) *steering.Controller {
	t.Helper()
	c, err := steering.New(steering.Config{
		Mode:       steering.Debug,
		Spec:       spec,
		Properties: chord.SafetyProperties(),
		MaxStates:  20_000,
		NoArrivals: noArrivals,
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
// takes both UpdatePreds, and the stabilize of the nearer-before one
// learns of the other — in the paper's eleven steps after the two join
// calls. Without the environment the round has nothing to explore.
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
	var got *steering.Prediction
	for i, p := range rep.Predictions {
		if p.Property == chord.NodeOrdering {
			got = &rep.Predictions[i]
		}
	}
	if got == nil {
		t.Fatalf("no NodeOrdering prediction in %d states: %v", rep.States, rep.Predictions)
	}
	var path []string
	for _, a := range got.Path {
		path = append(path, a.String())
	}
	t.Logf("%d states; %v; path %s", rep.States, got.Err, strings.Join(path, ", "))
	want := []string{
		"n1000000 app chord.JoinOverlay",
		"n1000001 app chord.JoinOverlay",
		"n30 deliver chord.FindPred from n1000000",
		"n30 deliver chord.FindPred from n1000001",
		"n1000000 deliver chord.FindPredReply from n30",
		"n1000001 deliver chord.FindPredReply from n30",
		"n30 deliver chord.UpdatePred from n1000000",
		"n30 deliver chord.UpdatePred from n1000001",
		"n1000001 timer stabilize",
		"n30 deliver chord.GetPred from n1000001",
		"n1000001 deliver chord.GetPredReply from n30",
	}
	if strings.Join(path, "\n") != strings.Join(want, "\n") {
		t.Errorf("path\n%s\nwant\n%s", strings.Join(path, "\n"), strings.Join(want, "\n"))
	}
	if msg := "n1000001: successor n1000000 lies between predecessor n30 and n1000001"; got.Err == nil || got.Err.Error() != msg {
		t.Errorf("violation %v, want %q", got.Err, msg)
	}

	off, err := chordController(t, spec, true).Round(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Predictions) != 0 {
		t.Errorf("without arrivals: %v", off.Predictions)
	}
}

// TestArrivalsConfig: a negative bound is an error, zero is the default,
// and SnapshotModelWith holds exactly the bound's number of joiners.
func TestArrivalsConfig(t *testing.T) {
	spec := chordFigure11Spec()
	if _, err := steering.New(steering.Config{Spec: spec, Arrivals: -1}, 30); !errors.Is(err, steering.ErrInvalidConfig) {
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
		{steering.SnapshotOptions{}, []node.ID{30, chord.ArrivalBase, chord.ArrivalBase + 1}},
		{steering.SnapshotOptions{Arrivals: 1}, []node.ID{30, chord.ArrivalBase}},
		{steering.SnapshotOptions{Arrivals: 5}, []node.ID{30, chord.ArrivalBase, chord.ArrivalBase + 1}}, // n30 declares two
		{steering.SnapshotOptions{NoArrivals: true}, []node.ID{30}},
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
