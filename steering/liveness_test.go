package steering_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// The latch service is the smallest dead end: n1 pings n2 on its timer
// until n2 pongs; n2 pongs every ping, unless a Jam reached it first,
// after which it never answers again. Liveness property Ponged: n1 has its
// pong. From a state with a Jam in flight to n2 and n1's ping not yet
// sent, a path that delivers the Jam is dead at that step; one that lets
// the ping and the pong through first is live.

type latchPing struct{}
type latchPong struct{}
type latchJam struct{}

func (latchPing) MessageType() string { return "latch.Ping" }
func (latchPong) MessageType() string { return "latch.Pong" }
func (latchJam) MessageType() string  { return "latch.Jam" }

type latch struct {
	Ponged bool
	Jammed bool
}

func (s *latch) Init(env node.Env) {
	switch env.Self() {
	case 1:
		env.SetTimer("ping", time.Second)
	case 3:
		env.Send(2, latchJam{})
	}
}

func (s *latch) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case latchPing:
		if !s.Jammed {
			env.Send(from, latchPong{})
		}
	case latchPong:
		s.Ponged = true
	case latchJam:
		s.Jammed = true
	}
}

func (s *latch) HandleTimer(env node.Env, name string) {
	if !s.Ponged {
		env.Send(2, latchPing{})
		env.SetTimer("ping", time.Second)
	}
}

func (s *latch) HandleApp(env node.Env, msg node.Message)        {}
func (s *latch) HandleTransportError(env node.Env, peer node.ID) {}

func latchSpec() node.Spec {
	return node.Spec{
		Name:     "latch",
		New:      func() node.Service { return &latch{} },
		Messages: []node.Message{latchPing{}, latchPong{}, latchJam{}},
		Properties: []node.Property{node.Eventually("Ponged", func(v node.View) error {
			if s, ok := v.Service(1).(*latch); ok && !s.Ponged {
				return fmt.Errorf("n1 has no pong")
			}
			return nil
		})},
	}
}

// startSnapshot is StartSnapshot (layer_test.go).
func startSnapshot(t *testing.T, spec node.Spec, ids []node.ID, gatherer node.ID) *snapshot.Snapshot {
	t.Helper()
	return steering.StartSnapshot(t, spec, ids, gatherer)
}

// TestLivenessDeadEnd: a round from the latch's start predicts the dead
// end (MaceMC's C1) at the Jam's delivery, with the nearest live path
// delivering the ping first; n2, whose event the critical transition is,
// installs a filter against it in mode Steer once walks with the filter in
// place all reach the pong, and n1 (no event of its own on the path) has
// no filter to offer. Walks of 40 steps: every probe of a dead state walks
// its full length K times, so the length sets the cost (about
// 34,000 steps for the three rounds); the latch's dead end and its live
// path are a handful of steps long. TestLivenessDeadEndDefaultDepth (make
// test-long) takes the default DefaultWalkDepth.
func TestLivenessDeadEnd(t *testing.T) { checkLivenessDeadEnd(t, 40) }

// checkLivenessDeadEnd is TestLivenessDeadEnd with walks of depth steps
// (LivenessWalks.DMax; 0 takes the default).
func checkLivenessDeadEnd(t *testing.T, depth int) {
	spec := latchSpec()
	snap := startSnapshot(t, spec, []node.ID{1, 2, 3}, 2)
	for _, tc := range []struct {
		mode   steering.Mode
		self   node.ID
		filter string
	}{
		{steering.Debug, 2, ""},
		{steering.Steer, 2, "n2: drop+break latch.Jam from n3"},
		{steering.Steer, 1, ""},
	} {
		c, err := steering.New(steering.Config{Mode: tc.mode, Spec: spec,
			LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Seed: 2, K: 20, DMax: depth}, WalkWeights: map[consequence.ActorActionKind]float64{}, MaxWalkSteps: 1_000_000},
			// Every kind of event equally likely, and room for the probes.
		}, tc.self)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Explore(context.Background(), snap)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Predictions) != 1 {
			t.Fatalf("%v at %v: %d predictions, want 1:\n%v", tc.mode, tc.self, len(rep.Predictions), rep)
		}
		p := rep.Predictions[0]
		cr := p.Critical
		if p.Kind != node.Liveness || p.Property != "Ponged" || cr == nil || cr.Verdict != consequence.C1 {
			t.Fatalf("%v at %v: prediction %v, want a C1 dead end of Ponged", tc.mode, tc.self, p)
		}
		if got := p.Path[cr.Step].String(); got != "n2 deliver latch.Jam from n3" || cr.Step != len(p.Path)-1 {
			t.Fatalf("critical step %d of %d is %q, want the Jam's delivery last", cr.Step, len(p.Path), got)
		}
		if cr.Step >= len(cr.LivePath) || cr.LivePath[cr.Step] == p.Path[cr.Step] {
			t.Fatalf("nearest live path %v takes the critical step too", cr.LivePath)
		}
		if p.Err == nil || p.Err.Error() != "n1 has no pong" {
			t.Fatalf("prediction error %v", p.Err)
		}
		var installed []string
		for _, f := range rep.Installed {
			installed = append(installed, f.String())
		}
		if got := strings.Join(installed, ", "); got != tc.filter {
			t.Fatalf("%v at %v: filters %q, want %q\n%v", tc.mode, tc.self, got, tc.filter, rep)
		}
		if l := rep.Liveness; l == nil || l.Walks == 0 || l.Steps == 0 || rep.States < l.Steps {
			t.Fatalf("liveness outcome %+v, states %d", l, rep.States)
		}
	}
}

// A liveness property that panics stops the round's walks, not the round:
// the panic is the outcome's error, the safety results stand.
func TestLivenessPropertyPanic(t *testing.T) {
	spec := latchSpec()
	spec.Properties = []node.Property{node.Eventually("Boom", func(node.View) error { panic("boom") })}
	snap := startSnapshot(t, spec, []node.ID{1, 2, 3}, 2)
	c, err := steering.New(steering.Config{Mode: steering.Debug, Spec: spec}, 2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Explore(context.Background(), snap)
	if err != nil {
		t.Fatalf("the round failed: %v", err)
	}
	if rep.Liveness == nil || !errors.Is(rep.Liveness.Err, consequence.ErrModelPanic) || !strings.Contains(rep.Liveness.Err.Error(), "boom") {
		t.Fatalf("liveness outcome %+v", rep.Liveness)
	}
	if len(rep.Predictions) != 0 {
		t.Fatalf("predictions %v", rep.Predictions)
	}
}
