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

// late is a lock server with lockd's bug and two clients: n1 gave the lock
// to n2 before the run; n3 asks for it at 3 s, and n1 grants every Acquire
// without looking whether the lock is held.
type late struct {
	Holder node.ID
	Held   bool
}

type lateAcquire struct{}
type lateGrant struct{}

func (lateAcquire) MessageType() string { return "late.Acquire" }
func (lateGrant) MessageType() string   { return "late.Grant" }

func (s *late) Init(env node.Env) {
	switch env.Self() {
	case 1:
		s.Holder = 2
	case 2:
		s.Held = true
	case 3:
		env.SetTimer("ask", 3*time.Second)
	}
}
func (s *late) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case lateAcquire:
		s.Holder = from
		env.Send(from, lateGrant{})
	case lateGrant:
		s.Held = true
	}
}
func (s *late) HandleTimer(env node.Env, name string)           { env.Send(1, lateAcquire{}) }
func (s *late) HandleApp(env node.Env, call node.Message)       {}
func (s *late) HandleTransportError(env node.Env, peer node.ID) {}
func (s *late) Neighbors(self node.ID) []node.ID {
	if self == 1 {
		return []node.ID{2, 3}
	}
	return []node.ID{1}
}

var lateSpec = node.Spec{
	Name:     "late",
	New:      func() node.Service { return &late{} },
	Messages: []node.Message{lateAcquire{}, lateGrant{}},
	Properties: []node.Property{node.Always("OneHolder", func(v node.View) error {
		n := 0
		for _, id := range v.Nodes() {
			if s, ok := v.Service(id).(*late); ok && s.Held {
				n++
			}
		}
		if n > 1 {
			return fmt.Errorf("%d nodes hold the lock", n)
		}
		return nil
	})},
}

// No blind start: with a gather every 10 s, the server gathers half a
// second after it starts (snapshot.Config.GatherSettle), sees n3's pending
// "ask" timer and predicts the second grant long before the 3 s it
// happens at — and in mode Steer stops it — where a node gathering on the
// period alone predicts nothing before 10 s, after the violation (from
// then on the snapshot already violates the property: nothing to
// predict).
func TestFirstGatherPredictsBeforeThePeriod(t *testing.T) {
	run := func(mode steering.Mode, settle time.Duration) (first time.Duration, violated int64) {
		first = -1
		cfg := emulation.Config{Spec: lateSpec, Nodes: 3, Seed: 1, Duration: 20 * time.Second, StartSpread: time.Millisecond,
			Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: 10 * time.Second, GatherConfig: snapshot.GatherConfig{GatherInterval: 10 * time.Second, GatherSettle: settle}}},
			Steering: &emulation.SteeringConfig{Controller: steering.Config{Mode: mode, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}}},
				OnRound: func(_ node.ID, at time.Duration, rep *steering.RoundReport) {
					if len(rep.Predictions) > 0 && first < 0 {
						first = at
					}
				}},
		}
		e, err := emulation.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Run(context.Background())
		if err != nil {
			t.Fatalf("seed=1: %v", err)
		}
		for _, p := range r.Safety {
			if p.Name == "OneHolder" {
				violated = p.ViolatedStates
			}
		}
		return first, violated
	}
	first, violated := run(steering.Debug, 0)
	if first < 0 || first >= 3*time.Second || violated == 0 {
		t.Fatalf("debug, early gathers: first prediction at %v, %d violating states; want a prediction before 3 s of a violation that happens", first, violated)
	}
	if first, _ := run(steering.Debug, -1); first >= 0 && first < 10*time.Second {
		t.Fatalf("debug, gathers on the period alone: first prediction at %v, want none before the 10 s period", first)
	}
	if _, violated := run(steering.Steer, 0); violated != 0 {
		t.Fatalf("steer, early gathers: %d violating states, want the second grant stopped", violated)
	}
}
