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

// knock is doorSvc's application call: knock at To's door.
type knock struct{ To node.ID }

func (knock) MessageType() string { return "door.Knock" }

// hello is what a knocking node sends.
type hello struct{}

func (hello) MessageType() string { return "door.Hello" }

// doorSvc is the tiny service of the arrival tests: Init arms a timer, a
// knock call sends hello to the door, and a door lets in whoever says
// hello. Its property: a door lets in at most one guest — broken only
// when two guests arrive.
type doorSvc struct {
	Guests  []node.ID
	Knocked node.ID
}

func (s *doorSvc) Init(env node.Env) { env.SetTimer("tick", time.Second) }
func (s *doorSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	s.Guests = append(s.Guests, from)
}
func (s *doorSvc) HandleTimer(node.Env, string) {}
func (s *doorSvc) HandleApp(env node.Env, call node.Message) {
	k := call.(knock)
	s.Knocked = k.To
	env.Send(k.To, hello{})
}
func (s *doorSvc) HandleTransportError(node.Env, node.ID) {}

func doorSpec() node.Spec {
	return node.Spec{
		Name:     "door",
		New:      func() node.Service { return &doorSvc{} },
		Messages: []node.Message{knock{}, hello{}},
		Properties: []node.Property{node.Always("OneGuest", func(v node.View) error {
			for _, id := range v.Nodes() {
				if g := v.Service(id).(*doorSvc).Guests; len(g) > 1 {
					return fmt.Errorf("%v let in %v", id, g)
				}
			}
			return nil
		})},
	}
}

// doorCheckpoint is node id of doorSpec right after Init, as a checkpoint.
func doorCheckpoint(t *testing.T, id node.ID, at time.Time) consequence.Checkpoint {
	t.Helper()
	c, err := node.NewCore(node.CoreConfig{ID: id, Factory: doorSpec().New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(node.Event{Kind: node.EventInit, At: at}); err != nil {
		t.Fatal(err)
	}
	b, err := c.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	return consequence.Checkpoint{ID: id, Bytes: b, At: at}
}

// TestFreshNodesStartKnocking: a fresh node is in the start state having
// run Init and its calls at its At — its timer set, its state changed, its
// message in flight over an open connection — so two fresh nodes race at
// once: the one state with both guests in is two deliveries deep, and
// without them nothing happens at the door.
func TestFreshNodesStartKnocking(t *testing.T) {
	at := consequence.DefaultStart.Add(time.Hour)
	cps := []consequence.Checkpoint{doorCheckpoint(t, 1, at)}
	fresh := []consequence.Fresh{
		{ID: 7, At: at, Calls: []node.Message{knock{To: 1}}},
		{ID: 9, At: at, Calls: []node.Message{knock{To: 1}}},
	}
	m, err := consequence.NewActorModelWithFresh(doorSpec(), cps, fresh, nil, consequence.ActorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Nodes(); len(got) != 3 || got[0] != 1 || got[1] != 7 || got[2] != 9 {
		t.Fatalf("nodes %v, want [n1 n7 n9]", got)
	}
	g := m.Start()
	st, now, ok := g.NodeState(7)
	if !ok || !now.Equal(at) || st.Service.(*doorSvc).Knocked != 1 {
		t.Fatalf("n7 at start: %v at %v, want knocked at n1 at %v", st.Service, now, at)
	}
	if _, ok := st.TimerAt("tick"); !ok {
		t.Errorf("n7's Init did not run: no timer")
	}
	if !g.Connected(7, 1) || !g.Connected(9, 1) {
		t.Errorf("no connection from the fresh nodes to n1")
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).MaxStates(1000).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, ok := res.Violated("OneGuest")
	if !ok || v.Depth != 2 {
		t.Fatalf("OneGuest: %v (depth %d), want violated at depth 2", ok, v.Depth)
	}

	alone, err := consequence.NewActorModelWithFresh(doorSpec(), cps, nil, nil, consequence.ActorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = consequence.NewChecker(alone).Properties(alone.Properties()...).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Violated("OneGuest"); ok || res.Unique != 2 {
		t.Errorf("without fresh nodes: %d states, violated %v; want 2 states (the tick) and no violation", res.Unique, ok)
	}
}

type stranger struct{}

func (stranger) MessageType() string { return "door.Stranger" }

// TestFreshNodeErrors: a fresh node may not take a member's ID, another
// fresh node's or None, nor make a call outside the spec.
func TestFreshNodeErrors(t *testing.T) {
	at := consequence.DefaultStart
	cps := []consequence.Checkpoint{doorCheckpoint(t, 1, at)}
	for name, fresh := range map[string][]consequence.Fresh{
		"member's ID": {{ID: 1}},
		"twice":       {{ID: 5}, {ID: 5}},
		"none":        {{ID: node.None}},
		"stranger":    {{ID: 5, Calls: []node.Message{stranger{}}}},
	} {
		if _, err := consequence.NewActorModelWithFresh(doorSpec(), cps, fresh, nil, consequence.ActorOptions{}); !errors.Is(err, consequence.ErrActorModel) {
			t.Errorf("%s: %v, want ErrActorModel", name, err)
		}
	}
}
