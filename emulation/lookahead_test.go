package emulation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// takeoverSvc: n2 leads, n1 watches it and, when it loses its
// connection to n2, hands the lead to n3 (Takeover). n2 steps down only
// 3 s after it loses its own connection to n1 — so a takeover at once
// makes two leaders for those seconds. The episode opens with a transport
// error at n1 whose own handling breaks nothing: the second leader shows
// one message later, at n3, whose view does not hold n2.
type takeoverSvc struct {
	Leader bool
}

type takeoverMsg struct{}

func (takeoverMsg) MessageType() string { return "takeover.Takeover" }

func (s *takeoverSvc) Init(env node.Env) { s.Leader = env.Self() == 2 }
func (s *takeoverSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	s.Leader = true
}
func (s *takeoverSvc) HandleTimer(env node.Env, name string)     { s.Leader = false }
func (s *takeoverSvc) HandleApp(env node.Env, call node.Message) {}
func (s *takeoverSvc) HandleTransportError(env node.Env, peer node.ID) {
	switch {
	case env.Self() == 1 && peer == 2:
		env.Send(3, takeoverMsg{})
	case env.Self() == 2 && peer == 1 && s.Leader:
		env.SetTimer("step-down", 3*time.Second)
	}
}

// Neighbors: n1 watches both; n2 and n3 know n1 alone, so n3's own
// immediate check, on a view without n2, sees nothing wrong in leading.
func (s *takeoverSvc) Neighbors(self node.ID) []node.ID {
	if self == 1 {
		return []node.ID{2, 3}
	}
	return []node.ID{1}
}

var takeoverSpec = node.Spec{
	Name:     "takeover",
	New:      func() node.Service { return &takeoverSvc{} },
	Messages: []node.Message{takeoverMsg{}},
	Properties: []node.Property{node.Always("OneLeader", func(v node.View) error {
		var leaders []node.ID
		for _, id := range v.Nodes() {
			if s, ok := v.Service(id).(*takeoverSvc); ok && s.Leader {
				leaders = append(leaders, id)
			}
		}
		if len(leaders) > 1 {
			return fmt.Errorf("%v lead", leaders)
		}
		return nil
	})},
}

// A transport-error-initiated episode, prevented by the look-ahead: the
// connection between n1 and n2 breaks at 10 s. Without crystalball n1
// hands the lead to n3 at once and OneLeader fails for 3 s. With the
// immediate check (no rounds), the check passes n1's transport error —
// its own state breaks nothing — but the look-ahead before it, from
// n1's view with the Takeover in flight, sees n3 lead beside n2 one event
// later and postpones the error; it runs once a gather shows n2 stepped
// down, and OneLeader holds throughout. With the look-ahead off the
// check lets the takeover through, as the paper's check would.
func TestLookAheadPreventsATransportErrorEpisode(t *testing.T) {
	run := func(steer *emulation.SteeringConfig) (emulation.Result, *takeoverSvc) {
		cfg := emulation.Config{Spec: takeoverSpec, Nodes: 3, Seed: 1, Duration: 30 * time.Second, StartSpread: time.Millisecond,
			Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{GatherConfig: snapshot.GatherConfig{GatherInterval: time.Second}}},
			Steering:  steer}
		e, err := emulation.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := e.BreakConnection(1, 2); err != nil {
			t.Fatal(err)
		}
		r, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r, e.Core(3).Service().(*takeoverSvc)
	}
	violated := func(r emulation.Result) int64 { return violatedStates(t, r, "OneLeader") }
	off, _ := run(nil)
	if violated(off) == 0 {
		t.Fatal("without crystalball OneLeader holds: the scenario is wrong")
	}
	blind, _ := run(&emulation.SteeringConfig{Controller: steering.Config{Mode: steering.Off, ImmediateCheckConfig: steering.ImmediateCheckConfig{LookAhead: steering.LookAheadConfig{States: -1}}}, Immediate: true})
	if violated(blind) == 0 {
		t.Fatal("the immediate check alone prevented the takeover: the look-ahead is not what this test pins")
	}
	on, n3 := run(&emulation.SteeringConfig{Controller: steering.Config{Mode: steering.Off}, Immediate: true})
	if n := violated(on); n != 0 {
		t.Fatalf("with the look-ahead OneLeader was violated in %d states (steering %+v)", n, on.Steering)
	}
	if !n3.Leader {
		t.Fatal("n3 never took over: the look-ahead held the transport error for good")
	}
	if s := on.Steering; s == nil || s.LookAheadVetoes == 0 || s.Vetoes != s.LookAheadVetoes {
		t.Fatalf("steering %+v: want the look-ahead's vetoes and no other", on.Steering)
	}
}
