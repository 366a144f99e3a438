package consequence_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// Faults.ResetKinds chooses the kinds of reset: zero means what
// SilentResets says, ResetBoth offers both (the RST one first).
func TestResetKinds(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	resets := func(f consequence.Faults) []string {
		m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 1, Faults: f})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range m.Actions(m.Start(), nil) {
			if a.Act.Kind == consequence.ActReset {
				out = append(out, a.Act.String())
			}
		}
		return out
	}
	for _, c := range []struct {
		f    consequence.Faults
		want []string
	}{
		{consequence.Faults{Resets: 1}, []string{"n1 reset rst"}},
		{consequence.Faults{Resets: 1, SilentResets: true}, []string{"n1 reset silent"}},
		{consequence.Faults{Resets: 1, ResetKinds: consequence.ResetRST, SilentResets: true}, []string{"n1 reset rst"}},
		{consequence.Faults{Resets: 1, ResetKinds: consequence.ResetBoth}, []string{"n1 reset rst", "n1 reset silent"}},
		{consequence.Faults{ResetKinds: consequence.ResetBoth}, nil},
	} {
		if got := resets(c.f); !slices.Equal(got, c.want) {
			t.Errorf("%+v: resets %q, want %q", c.f, got, c.want)
		}
	}
	if _, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 1, Faults: consequence.Faults{ResetKinds: 4}}); !errors.Is(err, consequence.ErrActorModel) {
		t.Errorf("unknown reset kind: %v", err)
	}
}

// A silent reset under the faithful model leaves the peer a stale
// connection: its next write is lost and answered by a transport error;
// without StaleConnections the write reaches the new incarnation.
func TestSilentResetStaleConnection(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	wl := func(id node.ID, restart bool) []node.Message {
		return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
	}
	for _, stale := range []bool{false, true} {
		m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Workload: wl,
			Faults: consequence.Faults{Resets: 1, SilentResets: true, StaleConnections: stale}})
		if err != nil {
			t.Fatal(err)
		}
		g := apply(t, m, m.Start(), "n1 app randtree.JoinOverlay")
		g = apply(t, m, g, "n2 app randtree.JoinOverlay")
		g = apply(t, m, g, "n1 deliver randtree.Join from n2") // n1 answers n2
		g = apply(t, m, g, "n2 deliver randtree.JoinReply from n1")
		r := apply(t, m, g, "n1 reset silent")
		if got := r.Stale(2, 1); got != stale {
			t.Fatalf("stale=%v: n2 holds a stale connection: %v", stale, got)
		}
		if stale && r.Connected(1, 2) {
			t.Fatal("the reset node keeps its connection")
		}
	}
}
