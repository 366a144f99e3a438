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

// earlySvc is a lock server with lockd's bug that bites at once: n1
// serves, n2 and n3 ask at 100 ms, and the server grants every Acquire.
// Both grants land within the first second, long before the first gather
// (every 10 s, no early gathers): no round, look-ahead or check on an
// empty view can stop them.
type earlySvc struct{ Held bool }

type earlyAcquire struct{}
type earlyGrant struct{}

func (earlyAcquire) MessageType() string { return "early.Acquire" }
func (earlyGrant) MessageType() string   { return "early.Grant" }

func (s *earlySvc) Init(env node.Env) {
	if env.Self() != 1 {
		env.SetTimer("ask", 100*time.Millisecond) // the server is up by then
	}
}
func (s *earlySvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case earlyAcquire:
		env.Send(from, earlyGrant{}) // the bug: no check that the lock is free
	case earlyGrant:
		s.Held = true
	}
}
func (s *earlySvc) HandleTimer(env node.Env, name string)           { env.Send(1, earlyAcquire{}) }
func (s *earlySvc) HandleApp(env node.Env, call node.Message)       {}
func (s *earlySvc) HandleTransportError(env node.Env, peer node.ID) {}
func (s *earlySvc) Neighbors(self node.ID) []node.ID {
	var out []node.ID
	for id := node.ID(1); id <= 3; id++ {
		if id != self {
			out = append(out, id)
		}
	}
	return out
}

var earlySpec = node.Spec{
	Name:     "early",
	New:      func() node.Service { return &earlySvc{} },
	Messages: []node.Message{earlyAcquire{}, earlyGrant{}},
	Properties: []node.Property{node.Always("OneHolder", func(v node.View) error {
		var holders []node.ID
		for _, id := range v.Nodes() {
			if s, ok := v.Service(id).(*earlySvc); ok && s.Held {
				holders = append(holders, id)
			}
		}
		if len(holders) > 1 {
			return fmt.Errorf("%v hold the lock", holders)
		}
		return nil
	})},
}

// A violation before the first round, prevented by filters an offline
// search shipped: BFS from the initial configuration finds the double
// grant, ShipPath gives the filter of its earliest stoppable event (n2's
// ask), the file round-trips, and n2 installs it before its first event.
// Without it the steered run violates OneHolder before its first gather;
// with it the run does not, and the first rounds replace it with what
// they predict (the same filter, now at n3's request: n3 holds the lock
// and the server still grants blindly).
func TestShippedFiltersPreventAViolationBeforeTheFirstRound(t *testing.T) {
	m, err := consequence.NewActorModel(earlySpec, consequence.ActorOptions{Nodes: []node.ID{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).MaxViolations(1).Run(context.Background())
	if err != nil || len(res.Violations) == 0 {
		t.Fatalf("the offline search found %v (%v), want the double grant", res.Violations, err)
	}
	var ship []steering.ShippedFilter
	for _, v := range res.Violations {
		path := make([]consequence.ActorAction, len(v.Path))
		for i, a := range v.Path {
			path[i] = a.Act
		}
		if s, ok := steering.ShipPath(v.Property, v.Kind, v.Err, path); ok {
			ship = append(ship, s)
		}
	}
	b, err := steering.EncodeShipped(ship)
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := steering.DecodeShipped(b)
	if err != nil || len(shipped) != 1 || shipped[0].Filter.String() != "n2: postpone timer ask" || shipped[0].Why.Source != "shipped" {
		t.Fatalf("shipped %+v, %v; want n2's ask postponed", shipped, err)
	}
	run := func(fs []steering.ShippedFilter) (emulation.Result, *emulation.Emulator) {
		cfg := emulation.Config{Spec: earlySpec, Nodes: 3, Seed: 1, Duration: 15 * time.Second, StartSpread: time.Millisecond,
			Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{GatherConfig: snapshot.GatherConfig{GatherInterval: 10 * time.Second, GatherSettle: -1}}},
			Steering:  &emulation.SteeringConfig{Controller: steering.Config{Mode: steering.Steer, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}}}, Immediate: true, Shipped: fs}}
		e, err := emulation.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r, e
	}
	violated := func(r emulation.Result) int64 { return violatedStates(t, r, "OneHolder") }
	if without, _ := run(nil); violated(without) == 0 {
		t.Fatal("without shipped filters steering prevented the early double grant: the scenario is wrong")
	}
	with, e := run(shipped)
	if n := violated(with); n != 0 {
		t.Fatalf("with the shipped filter OneHolder was violated in %d states (steering %+v)", n, with.Steering)
	}
	if with.Steering.FilterHits == 0 || with.Steering.Interventions["shipped/OneHolder"] == 0 {
		t.Fatalf("steering %+v: want the shipped filter's hits", with.Steering)
	}
	st := e.Steering(2).Status()
	if st.Rounds == 0 || len(st.Reasons) != 1 || st.Reasons[0].Why.Source == "shipped" {
		t.Fatalf("n2 after %d rounds: filters %+v; want the shipped filter replaced by the round's", st.Rounds, st.Reasons)
	}
}
