package steering_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// lend is a one-token server (n1) and its clients. n3 asks for the token
// at Init; the server grants it to whoever asks first, and its operator
// may lend it to n2 instead (a declared application call, Lend). A lent
// token never comes back: once lent, n3 waits for ever. In a snapshot of
// n1 and n3 that is a dead end whose critical transition is the Lend —
// unless the snapshot records that n1 deals with n2, a node it does not
// hold, which may well give the token back in the deployment.
type lend struct {
	Holder      node.ID
	Wants, Gets bool
}

type (
	lendRequest struct{}
	lendGrant   struct{}
	lendOut     struct{ To node.ID }
)

func (lendRequest) MessageType() string { return "lend.Request" }
func (lendGrant) MessageType() string   { return "lend.Grant" }
func (lendOut) MessageType() string     { return "lend.Lend" }

func (s *lend) Init(env node.Env) {
	if env.Self() == 3 {
		s.Wants = true
		env.Send(1, lendRequest{})
	}
}

func (s *lend) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case lendRequest:
		if s.Holder == node.None {
			s.Holder = from
			env.Send(from, lendGrant{})
		}
	case lendGrant:
		s.Wants, s.Gets = false, true
	}
}

func (s *lend) HandleApp(env node.Env, msg node.Message) {
	if m, ok := msg.(lendOut); ok && s.Holder == node.None {
		s.Holder = m.To
		env.Send(m.To, lendGrant{})
	}
}

func (s *lend) AppCalls(self node.ID) []node.Message {
	if self != 1 || s.Holder != node.None {
		return nil
	}
	return []node.Message{lendOut{To: 2}}
}

func (s *lend) HandleTimer(node.Env, string)           {}
func (s *lend) HandleTransportError(node.Env, node.ID) {}

func lendSpec() node.Spec {
	return node.Spec{
		Name:     "lend",
		New:      func() node.Service { return &lend{} },
		Messages: []node.Message{lendRequest{}, lendGrant{}, lendOut{}},
		Properties: []node.Property{node.Eventually("Served", func(v node.View) error {
			for _, id := range v.Nodes() {
				if s, ok := v.Service(id).(*lend); ok && s.Wants {
					return fmt.Errorf("%v still waits for the token", id)
				}
			}
			return nil
		})},
	}
}

// A dead end on an open snapshot is no prediction: from a
// snapshot of n1 and n3, the walks find that lending the token to n2
// leaves n3 waiting for ever. When the gather recorded n1's dealings with
// n2 (NodeCheckpoint.Peers), n3's wait involves n1 (its peer), whose peer
// n2 is outside the snapshot: the round counts the dead end open and
// predicts nothing. The same snapshot without the record predicts it —
// the test's own control, so it cannot pass by finding nothing.
func TestOpenSnapshotYieldsNoDeadEnd(t *testing.T) {
	spec := lendSpec()
	round := func(peers bool) *steering.RoundReport {
		t.Helper()
		snap := startSnapshot(t, spec, []node.ID{1, 3}, 3)
		if peers {
			snap.Nodes[0].Peers = []node.ID{2, 3} // n1 deals with n2 and n3
			snap.Nodes[1].Peers = []node.ID{1}
		}
		c, err := steering.New(steering.Config{Mode: steering.Debug, Spec: spec,
			LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Seed: 1, K: 8, DMax: 20}, WalkWeights: map[consequence.ActorActionKind]float64{}, MaxWalkSteps: 100_000},
		}, 3)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Explore(context.Background(), snap)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	closed := round(false)
	if len(closed.Predictions) != 1 || closed.Predictions[0].Property != "Served" || closed.Predictions[0].Critical == nil {
		t.Fatalf("without recorded peers: predictions %v, want the dead end of Served", closed.Predictions)
	}
	if p := closed.Predictions[0]; p.Path[p.Critical.Step].String() != "n1 app lend.Lend" {
		t.Fatalf("critical step %v, want the Lend", p.Path[p.Critical.Step])
	}
	open := round(true)
	if len(open.Predictions) != 0 {
		t.Fatalf("with n1's peer n2 outside the snapshot: predictions %v, want none", open.Predictions)
	}
	if open.Liveness == nil || open.Liveness.Open == 0 {
		t.Fatalf("liveness outcome %+v, want the dead end counted open", open.Liveness)
	}
}
