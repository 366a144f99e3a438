package consequence_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// beepSvc is the smallest timer race consequence prediction prunes: n1's
// "beep" timer sends n2 a Beep and re-arms itself without changing n1's
// state, and n2 counts the Beeps it got. AtMostTwoBeeps fails at n2's third
// Beep: three firings of a timer in one unchanged local state.
type beepSvc struct{ Got int }

type beep struct{}

func (beep) MessageType() string { return "test.Beep" }

func (s *beepSvc) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("beep", time.Second)
	}
}

func (s *beepSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) { s.Got++ }

func (s *beepSvc) HandleTimer(env node.Env, name string) {
	env.Send(2, beep{})
	env.SetTimer("beep", time.Second)
}

func (s *beepSvc) HandleApp(env node.Env, call node.Message)       {}
func (s *beepSvc) HandleTransportError(env node.Env, peer node.ID) {}

func beepModel(t *testing.T) (*consequence.ActorModel, []consequence.Property[*consequence.GlobalState]) {
	t.Helper()
	spec := node.Spec{
		Name:     "beep",
		New:      func() node.Service { return &beepSvc{} },
		Messages: []node.Message{beep{}},
		Properties: []node.Property{node.Always("AtMostTwoBeeps", func(v node.View) error {
			if s, ok := v.Service(2).(*beepSvc); ok && s.Got > 2 {
				return fmt.Errorf("n2 got %d beeps", s.Got)
			}
			return nil
		})},
	}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	var props []consequence.Property[*consequence.GlobalState]
	for _, p := range spec.Properties {
		props = append(props, consequence.AdaptProperty(p))
	}
	return m, props
}

// TestSafetyWalksFindWhatConsequencePrunes: consequence prediction
// expands n1's timer once per local state, so it never sees a third Beep;
// safety walks take the timer again and again and stop at the violation,
// with a path that replays to it. The result is a pure function of the
// seed.
func TestSafetyWalksFindWhatConsequencePrunes(t *testing.T) {
	m, props := beepModel(t)
	res, err := consequence.NewChecker(m).Properties(props...).Strategy(consequence.Consequence).MaxStates(10_000).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 0 {
		t.Fatalf("consequence prediction found %v: the test no longer shows what it prunes", res.Violations[0].Err)
	}
	opts := consequence.WalkOptions[consequence.ActorAction]{Seed: 7, Walks: 20, DMax: 40}
	walks, err := consequence.SafetyWalks(context.Background(), m, props, opts, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(walks.Unsafe) != 3 || walks.Walks < 3 || walks.Steps == 0 {
		t.Fatalf("want 3 unsafe walks, got %d of %d walks (%d steps)", len(walks.Unsafe), walks.Walks, walks.Steps)
	}
	for _, u := range walks.Unsafe {
		if u.Violation.Property != "AtMostTwoBeeps" {
			t.Fatalf("violation of %q: %v", u.Violation.Property, u.Violation.Err)
		}
		g := u.Start
		for i, a := range u.Path {
			next, ok := m.Next(g, a.Act)
			if !ok {
				t.Fatalf("step %d (%v) does not replay", i+1, a.Act)
			}
			g = next
		}
		if props[0].Check(g) == nil || m.Fingerprint(g) != m.Fingerprint(u.State) {
			t.Fatalf("the path %s does not replay to the violating state", pathString(u.Path))
		}
	}
	again, err := consequence.SafetyWalks(context.Background(), m, props, opts, 3)
	if err != nil {
		t.Fatal(err)
	}
	if again.Walks != walks.Walks || again.Steps != walks.Steps || pathString(again.Unsafe[2].Path) != pathString(walks.Unsafe[2].Path) {
		t.Fatal("the same seed gave other walks")
	}
}

// TestSafetyWalksBadInput: no safety property, negative options and a
// cancelled context are errors, not panics.
func TestSafetyWalksBadInput(t *testing.T) {
	m, props := beepModel(t)
	live := []consequence.Property[*consequence.GlobalState]{{Name: "L", Kind: node.Liveness, Check: props[0].Check}}
	ctx := context.Background()
	if _, err := consequence.SafetyWalks(ctx, m, live, consequence.WalkOptions[consequence.ActorAction]{}, 1); !errors.Is(err, consequence.ErrInvalidOptions) {
		t.Errorf("liveness only: %v", err)
	}
	if _, err := consequence.SafetyWalks(ctx, m, props, consequence.WalkOptions[consequence.ActorAction]{DMax: -1}, 1); !errors.Is(err, consequence.ErrInvalidOptions) {
		t.Errorf("negative DMax: %v", err)
	}
	if _, err := consequence.SafetyWalks[*consequence.GlobalState, consequence.ActorAction](ctx, nil, props, consequence.WalkOptions[consequence.ActorAction]{}, 1); !errors.Is(err, consequence.ErrInvalidModel) {
		t.Errorf("nil model: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := consequence.SafetyWalks(cancelled, m, props, consequence.WalkOptions[consequence.ActorAction]{}, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
