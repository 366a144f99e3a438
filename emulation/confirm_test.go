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

// The race service has a dead end in its near future and a run that
// decides whether it enters it: n1 pings n2 on its timer until n2 pongs;
// n3 jams n2 on its own timer, and a jammed n2 never pongs again.
// Liveness property Ponged: n1 has its pong. Until both timers have fired,
// every round's walks find the dead end (the jam delivered before the
// ping); the run enters it only when the jam's timer is the earlier.
type raceSvc struct {
	Ponged, Jammed bool
	PingAt, JamAt  time.Duration
}

type racePing struct{}
type racePong struct{}
type raceJam struct{}

func (racePing) MessageType() string { return "race.Ping" }
func (racePong) MessageType() string { return "race.Pong" }
func (raceJam) MessageType() string  { return "race.Jam" }

func (s *raceSvc) Init(env node.Env) {
	switch env.Self() {
	case 1:
		env.SetTimer("ping", s.PingAt)
	case 3:
		env.SetTimer("jam", s.JamAt)
	}
}

func (s *raceSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case racePing:
		if !s.Jammed {
			env.Send(from, racePong{})
		}
	case racePong:
		s.Ponged = true
	case raceJam:
		s.Jammed = true
	}
}

func (s *raceSvc) HandleTimer(env node.Env, name string) {
	switch {
	case name == "jam":
		env.Send(2, raceJam{})
	case !s.Ponged:
		env.Send(2, racePing{})
		env.SetTimer("ping", time.Second)
	}
}

func (s *raceSvc) HandleApp(env node.Env, msg node.Message)        {}
func (s *raceSvc) HandleTransportError(env node.Env, peer node.ID) {}

// Neighbors: every node is every node's neighbour, so each gather holds
// the three and the dead end is closed (steering/closed.go).
func (s *raceSvc) Neighbors(self node.ID) []node.ID {
	var out []node.ID
	for id := node.ID(1); id <= 3; id++ {
		if id != self {
			out = append(out, id)
		}
	}
	return out
}

func raceSpec(pingAt, jamAt time.Duration) node.Spec {
	return node.Spec{
		Name:     "race",
		New:      func() node.Service { return &raceSvc{PingAt: pingAt, JamAt: jamAt} },
		Messages: []node.Message{racePing{}, racePong{}, raceJam{}},
		Properties: []node.Property{node.Eventually("Ponged", func(v node.View) error {
			if s, ok := v.Service(1).(*raceSvc); ok && !s.Ponged {
				return fmt.Errorf("n1 has no pong")
			}
			return nil
		})},
	}
}

// runRace emulates the race service for 30 s with rounds in mode Debug
// on every node's gathers (every 2 s) and returns the steering result. The
// critical-transition search probes a state with 4 walks (MaceMC's k; the
// default is 8): the probes were nearly all of the test's cost, which 4
// halve, and every dead end is still confirmed or retracted as before.
func runRace(t *testing.T, pingAt, jamAt time.Duration) *emulation.SteeringResult {
	t.Helper()
	cfg := emulation.Config{Spec: raceSpec(pingAt, jamAt), Nodes: 3, Seed: 1, Duration: 30 * time.Second, StartSpread: time.Millisecond,
		Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{GatherConfig: snapshot.GatherConfig{GatherInterval: 2 * time.Second, GatherSettle: -1}}},
		Steering: &emulation.SteeringConfig{Controller: steering.Config{Mode: steering.Debug,
			LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Seed: 1, DMax: 60, K: 4}, WalkWeights: map[consequence.ActorActionKind]float64{}},
			// Every kind of event equally likely: the timers race.
		}}}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r.Steering
}

// A dead end the run enters is confirmed, one it escapes is retracted,
// by the emulator's global check and by the nodes' own later snapshots.
// The rounds before 5 s (both timers pending) predict the dead end of
// Ponged; with the jam at 5 s and the ping at 9 s, n2 is jammed first
// and Ponged fails to the end (confirmed: 5 s grace); with the ping
// first, n1 has its pong at 5 s and every prediction is retracted. The
// dead-end counts are those of runRace's configuration: 4 and 2 (with 8
// probe walks, 5 and 2).
func TestDeadEndsConfirmedAndRetracted(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		pingAt, jamAt        time.Duration
		confirmed, retracted bool
		deadEnds             uint64
	}{
		{"jam first", 9 * time.Second, 5 * time.Second, true, false, 4},
		{"ping first", 5 * time.Second, 9 * time.Second, false, true, 2},
	} {
		s := runRace(t, tc.pingAt, tc.jamAt)
		t.Logf("%s: %d dead ends; global %d confirmed, %d retracted, %d pending; nodes %d confirmed, %d retracted",
			tc.name, s.DeadEnds, s.Global.Confirmed, s.Global.Retracted, s.Global.Pending, s.DeadEndsConfirmed, s.DeadEndsRetracted)
		if s.DeadEnds != tc.deadEnds {
			t.Fatalf("%s: %d dead ends predicted, want %d", tc.name, s.DeadEnds, tc.deadEnds)
		}
		want := func(b bool) uint64 {
			if b {
				return s.DeadEnds
			}
			return 0
		}
		if g := s.Global; g.Confirmed != want(tc.confirmed) || g.Retracted != want(tc.retracted) || g.Pending != 0 {
			t.Errorf("%s: global check %d confirmed, %d retracted, %d pending of %d dead ends", tc.name, g.Confirmed, g.Retracted, g.Pending, s.DeadEnds)
		}
		if s.DeadEndsConfirmed != want(tc.confirmed) || s.DeadEndsRetracted != want(tc.retracted) {
			t.Errorf("%s: nodes' views %d confirmed, %d retracted of %d dead ends", tc.name, s.DeadEndsConfirmed, s.DeadEndsRetracted, s.DeadEnds)
		}
	}
}

// A node's own account of its events (steering.Layer.Rates), for rounds
// under Config.AdaptiveWeights: with the jam first, n1's ping timer fires
// every second from 9 s to 29 s (the run ends at 30 s): 21 pings sent, 20
// gaps of 1 s; it receives no message. Its rounds weigh timers
// AssumedLatency / 1 s. (The rounds' critical-transition searches probe
// with 4 walks, as runRace's: the rates are the node's own events, which
// the rounds of mode Debug do not change.)
func TestNodeRatesForAdaptiveWeights(t *testing.T) {
	cfg := emulation.Config{Spec: raceSpec(9*time.Second, 5*time.Second), Nodes: 3, Seed: 1, Duration: 30 * time.Second, StartSpread: time.Millisecond,
		Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{GatherConfig: snapshot.GatherConfig{GatherInterval: 2 * time.Second, GatherSettle: -1}}},
		Steering:  &emulation.SteeringConfig{Controller: steering.Config{Mode: steering.Debug, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{DMax: 60, K: 4}, AdaptiveWeights: true}}}}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := e.Steering(1).Rates()
	if r.TimersSet != 20 || r.TimerDelaySum != 20*time.Second || r.Deliveries != 0 || r.Sends != 21 || r.Nodes != 1 {
		t.Fatalf("n1's rates %+v", r)
	}
	if w := r.WalkWeights()[consequence.ActTimer]; w != 0.01 {
		t.Errorf("timer weight %v, want 0.01", w)
	}
}

// A transport error gathers at once under GatherOnFault: the wait
// service's connection breaks at 8 s, between gathers every 10 s; with
// the option n1 and n2 both run a round on a snapshot gathered right
// after their transport errors (within 200 ms), without it the next
// round comes at the periodic gather.
func TestGatherOnFault(t *testing.T) {
	roundsAfterBreak := func(on bool) map[node.ID]int {
		got := map[node.ID]int{}
		cfg := emulation.Config{Spec: waitSpec, Nodes: 2, Seed: 1, Duration: 12 * time.Second, StartSpread: time.Millisecond,
			Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{GatherConfig: snapshot.GatherConfig{GatherInterval: 10 * time.Second, GatherSettle: -1}}},
			Steering: &emulation.SteeringConfig{Controller: steering.Config{Mode: steering.Debug, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}}, GatherPolicy: steering.GatherPolicy{GatherOnFault: on}},
				OnRound: func(id node.ID, at time.Duration, rep *steering.RoundReport) {
					if at >= 8*time.Second && at < 8200*time.Millisecond {
						got[id]++
					}
				}}}
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
		if _, err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := roundsAfterBreak(true); got[1] != 1 || got[2] != 1 {
		t.Errorf("with GatherOnFault: rounds within 200 ms of the break %v, want one per node", got)
	}
	if got := roundsAfterBreak(false); len(got) != 0 {
		t.Errorf("without: rounds within 200 ms of the break %v, want none", got)
	}
}
