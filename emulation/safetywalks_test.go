package emulation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// chimeSvc: n1's "chime" timer sends n2 a Chime every 20 s and re-arms
// itself without changing n1's state. AtMostThreeChimes fails at n2's
// fourth, which a 30 s run never reaches, but a round's model does: the
// timer fires again and again in one unchanged local state, which only
// safety walks explore.
type chimeSvc struct{ Got int }

type chime struct{}

func (chime) MessageType() string { return "chime.Chime" }

func (s *chimeSvc) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("chime", 20*time.Second)
	}
}

func (s *chimeSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) { s.Got++ }

func (s *chimeSvc) HandleTimer(env node.Env, name string) {
	env.Send(2, chime{})
	env.SetTimer("chime", 20*time.Second)
}

func (s *chimeSvc) HandleApp(env node.Env, msg node.Message)        {}
func (s *chimeSvc) HandleTransportError(env node.Env, peer node.ID) {}
func (s *chimeSvc) Neighbors(self node.ID) []node.ID                { return []node.ID{3 - self} }

// The emulator adds up the rounds' safety walks and says so in its
// summary: with walks, n2's rounds predict the fourth Chime the searches
// never reach; without, the counters stay zero and the line is absent.
func TestEmulationCountsSafetyWalks(t *testing.T) {
	spec := node.Spec{Name: "chime", New: func() node.Service { return &chimeSvc{} }, Messages: []node.Message{chime{}},
		Properties: []node.Property{node.Always("AtMostThreeChimes", func(v node.View) error {
			if s, ok := v.Service(2).(*chimeSvc); ok && s.Got > 3 {
				return fmt.Errorf("n2 got %d chimes", s.Got)
			}
			return nil
		})}}
	run := func(walks int) emulation.Result {
		t.Helper()
		cfg := emulation.Config{Spec: spec, Nodes: 2, Seed: 1, Duration: 30 * time.Second, StartSpread: time.Millisecond,
			Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{GatherConfig: snapshot.GatherConfig{GatherInterval: 5 * time.Second, GatherSettle: -1}}},
			Steering:  &emulation.SteeringConfig{Controller: steering.Config{Mode: steering.Debug, SafetyWalkConfig: steering.SafetyWalkConfig{SafetyWalks: walks, SafetyWalkDepth: 20}}}}
		e, err := emulation.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	off := run(0)
	if s := off.Steering; s.SafetyWalks != 0 || s.Predicted["AtMostThreeChimes"] != 0 || strings.Contains(off.String(), "safety walks:") {
		t.Fatalf("without safety walks: %d walks, predicted %v\n%s", s.SafetyWalks, s.Predicted, off)
	}
	on := run(8)
	s := on.Steering
	if s.SafetyWalks == 0 || s.SafetyWalkSteps == 0 || s.SafetyWalkPredictions == 0 || s.Predicted["AtMostThreeChimes"] == 0 {
		t.Fatalf("with safety walks: %d walks, %d steps, %d predictions, predicted %v", s.SafetyWalks, s.SafetyWalkSteps, s.SafetyWalkPredictions, s.Predicted)
	}
	if !strings.Contains(on.String(), fmt.Sprintf("safety walks: %d walks, %d steps", s.SafetyWalks, s.SafetyWalkSteps)) {
		t.Fatalf("the summary does not say so:\n%s", on)
	}
	if len(on.Safety) != 1 || on.Safety[0].ViolatedStates != 0 {
		t.Fatalf("the run itself violated: %+v", on.Safety)
	}
}
