package emulation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// waitSvc: n1 asks n2, which answers after its "reply" timer; n1 must not
// learn of a broken connection to n2 before the answer (ReplyFirst). The
// one event of n1 on that path is the transport error.
type waitSvc struct{ Got, Gone bool }

type waitAsk struct{}
type waitAnswer struct{}

func (waitAsk) MessageType() string    { return "wait.Ask" }
func (waitAnswer) MessageType() string { return "wait.Answer" }

func (s *waitSvc) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("ask", time.Second) // n2 is up by then
	}
}
func (s *waitSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case waitAsk:
		env.SetTimer("reply", 15*time.Second)
	case waitAnswer:
		s.Got = true
	}
}
func (s *waitSvc) HandleTimer(env node.Env, name string) {
	if name == "ask" {
		env.Send(2, waitAsk{})
	} else {
		env.Send(1, waitAnswer{})
	}
}
func (s *waitSvc) HandleApp(env node.Env, call node.Message)       {}
func (s *waitSvc) HandleTransportError(env node.Env, peer node.ID) { s.Gone = s.Gone || !s.Got }
func (s *waitSvc) Neighbors(self node.ID) []node.ID                { return []node.ID{3 - self} }

var waitSpec = node.Spec{
	Name:     "wait",
	New:      func() node.Service { return &waitSvc{} },
	Messages: []node.Message{waitAsk{}, waitAnswer{}},
	Properties: []node.Property{node.Always("ReplyFirst", func(v node.View) error {
		if s, _ := v.Service(1).(*waitSvc); s != nil && s.Gone {
			return fmt.Errorf("n1 gave up on n2 before its answer")
		}
		return nil
	})},
}

// A transport-error filter at work in the emulator: n1's rounds predict
// that a break of its connection to n2 before the answer violates
// ReplyFirst and install "n1: postpone transport-error from n2"; when the
// connection does break (at 8 s), the steering layer postpones the
// transport error in n1's pipeline until the answer has come, and the
// property holds. Without steering the same run violates it. (The
// explorer's side of the same filter: steering's transport_filter_test.)
func TestEmulatorPostponesFilteredTransportError(t *testing.T) {
	run := func(steer bool) (emulation.Result, []emulation.Intervention) {
		var seen []emulation.Intervention
		cfg := emulation.Config{Spec: waitSpec, Nodes: 2, Seed: 1, Duration: 40 * time.Second, StartSpread: time.Millisecond,
			// Gathers on the period only (GatherSettle -1), so that the
			// retries spend the budget before a round sees the answer:
			// the escalation below is part of what this test pins.
			Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{GatherConfig: snapshot.GatherConfig{GatherInterval: 2 * time.Second, GatherSettle: -1}}}}
		if steer {
			cfg.Steering = &emulation.SteeringConfig{
				Controller: steering.Config{Mode: steering.Steer, Faults: consequence.Faults{Breaks: 1},
					LivenessWalks:      steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}},
					InterventionPolicy: steering.InterventionPolicy{PostponeDelay: 2 * time.Second},
				},
				OnIntervention: func(iv emulation.Intervention) { seen = append(seen, iv) },
			}
		}
		e, err := emulation.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(8 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := e.BreakConnection(1, 2); err != nil {
			t.Fatal(err)
		}
		r, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r, seen
	}
	violated := func(r emulation.Result) int64 { return violatedStates(t, r, "ReplyFirst") }
	off, _ := run(false)
	if violated(off) == 0 {
		t.Fatal("without steering the run does not violate ReplyFirst: the scenario is wrong")
	}
	on, seen := run(true)
	if n := violated(on); n != 0 {
		t.Fatalf("with steering ReplyFirst was violated in %d states; interventions %v", n, seen)
	}
	postponed := 0
	for _, iv := range seen {
		if iv.Node == 1 && iv.Event.Kind == node.EventTransportError && iv.Event.Peer == 2 && iv.Verdict.Postponed() {
			postponed++
		}
	}
	if postponed != 1 || len(seen) != 1 {
		t.Fatalf("n1's transport error postponed %d times, %d interventions in all (%v); want 1 and 1 (retries are not reported again)", postponed, len(seen), seen)
	}
	// The error comes back every PostponeDelay (2 s); its retries spend
	// the budget (5 a minute) by 16 s, so the kind is escalated and held
	// until the first round on a snapshot with n2's answer in (18 s)
	// installs no filter for it: released, never overridden.
	if s := on.Steering; s == nil || s.FilterHits != 1 || s.Overrides != 0 || s.Escalations != 1 || s.Released != 1 {
		t.Fatalf("steering result %+v: want 1 filter hit, 1 escalation released, no override", s)
	}
}

// violatedStates is the number of states of run r that violated the
// safety property name; a result without the property fails the test.
func violatedStates(t *testing.T, r emulation.Result, name string) int64 {
	t.Helper()
	for _, p := range r.Safety {
		if p.Name == name {
			return p.ViolatedStates
		}
	}
	t.Fatalf("no %s in the result", name)
	return 0
}
