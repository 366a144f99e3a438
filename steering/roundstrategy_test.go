package steering_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// resender is a client (n1) that sends its one request on its "retry"
// timer, and sends it again on every later firing without changing its
// state, and a server (n2) that counts the requests it got. The server
// takes one ("Window"); a second means a retry overran it. It is the race
// the round strategy exists for: the retry timer must fire twice in a
// row, the second time from a local state of the client that consequence
// prediction has already expanded once, so Fig. 8 never fires it again.
type resender struct{ Got int }

type request struct{}

func (request) MessageType() string { return "test.Request" }

func (s *resender) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("retry", time.Second)
	}
}
func (s *resender) HandleMessage(node.Env, node.ID, node.Message) { s.Got++ }
func (s *resender) HandleApp(node.Env, node.Message)              {}
func (s *resender) HandleTransportError(node.Env, node.ID)        {}
func (s *resender) HandleTimer(env node.Env, name string) {
	env.Send(2, request{})
	env.SetTimer("retry", time.Second)
}

var resenderSpec = node.Spec{Name: "resender", New: func() node.Service { return &resender{} }, Messages: []node.Message{request{}},
	Properties: []node.Property{node.Always("Window", func(v node.View) error {
		if s, ok := v.Service(2).(*resender); ok && s.Got > 1 {
			return fmt.Errorf("n2 got %d requests", s.Got)
		}
		return nil
	})}}

// TestRoundStrategyFindsRepeatedRetry: a round with the near-future
// search (the default Config.FullDepth) predicts the overrun; the same
// round with Fig. 8 alone (FullDepth negative) does not, whatever its
// budget.
func TestRoundStrategyFindsRepeatedRetry(t *testing.T) {
	m, err := consequence.NewActorModel(resenderSpec, consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	var cps []consequence.Checkpoint
	for _, id := range []node.ID{1, 2} {
		st, now, _ := m.Start().NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: now})
	}
	round := func(full int) *steering.RoundReport {
		t.Helper()
		c, err := steering.New(steering.Config{Mode: steering.Debug, Spec: resenderSpec, SearchBudget: steering.SearchBudget{FullDepth: full, MaxStates: 100_000}, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Round(context.Background(), snapshotOf(2, cps))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := round(-1); len(rep.Predictions) != 0 {
		t.Fatalf("Fig. 8 alone predicted %v: the test no longer shows what its pruning misses", rep.Predictions[0].Path)
	}
	rep := round(0)
	if len(rep.Predictions) != 1 {
		t.Fatalf("the round strategy predicted %d violations, want 1", len(rep.Predictions))
	}
	p := rep.Predictions[0]
	want := "[n1 timer retry n1 timer retry n2 deliver test.Request from n1 n2 deliver test.Request from n1]"
	if p.Property != "Window" || fmt.Sprint(p.Path) != want || p.Rank != 1 {
		t.Fatalf("predicted %s rank %d: %v, want Window rank 1: %s", p.Property, p.Rank, p.Path, want)
	}
	if l := p.Likelihood; l.Local != 2 || l.InFlight != 0 || l.Spawned != 2 || l.Faults != 0 {
		t.Fatalf("likelihood %+v", l)
	}
}
