package consequence_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// listed is in the stray service's Spec.Messages; stray is not.
type listed struct{}
type stray struct{}

func (listed) MessageType() string { return "test.listed" }
func (stray) MessageType() string  { return "test.stray" }

// strayService sends stray to node 2: at Init when Eager, otherwise when
// its timer "go" fires (set at Init). A listed message to node 2 also sets
// it going, so the model has a path of ordinary steps first.
type strayService struct {
	Eager bool `msgpack:"-"`
	Done  bool
}

func (s *strayService) Init(env node.Env) {
	if s.Eager {
		env.Send(2, stray{})
		return
	}
	if env.Self() == 1 {
		env.SetTimer("go", time.Second)
	}
}
func (s *strayService) HandleMessage(node.Env, node.ID, node.Message) { s.Done = true }
func (s *strayService) HandleTimer(env node.Env, _ string)            { env.Send(2, stray{}) }
func (s *strayService) HandleApp(node.Env, node.Message)              {}
func (s *strayService) HandleTransportError(node.Env, node.ID)        {}

func straySpec(eager bool) node.Spec {
	return node.Spec{
		Name:     "stray",
		New:      func() node.Service { return &strayService{Eager: eager} },
		Messages: []node.Message{listed{}},
		Properties: []node.Property{node.Eventually("done", func(v node.View) error {
			if !v.Service(2).(*strayService).Done {
				return errors.New("n2 got nothing")
			}
			return nil
		})},
	}
}

// TestMessagesOutsideSpecRejectTheModel is the explorer's side of
// node.Registry.CheckMessage: a message outside Spec.Messages is never a
// behaviour to explore. Sent before the model exists, it fails the
// constructor; sent along a path, it fails the search and the walks with
// ErrInvalidModel, never a crash report.
func TestMessagesOutsideSpecRejectTheModel(t *testing.T) {
	if _, err := consequence.NewActorModel(straySpec(true), consequence.ActorOptions{N: 2}); !errors.Is(err, consequence.ErrActorModel) || !errors.Is(err, node.ErrUnknownMessageType) {
		t.Fatalf("NewActorModel with a stray send at Init = %v, want ErrActorModel and node.ErrUnknownMessageType", err)
	}
	m, err := consequence.NewActorModel(straySpec(false), consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).Workers(2).Run(context.Background())
	if res != nil || !errors.Is(err, consequence.ErrInvalidModel) || !errors.Is(err, node.ErrUnknownMessageType) {
		t.Fatalf("Run = %v, %v; want no result and ErrInvalidModel wrapping node.ErrUnknownMessageType", res, err)
	}
	if want := `n1 timer go`; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"test.stray"`) {
		t.Errorf("Run's error %q does not name the event (%s) and the message", err, want)
	}
	_, err = consequence.RandomWalks(context.Background(), m, m.Properties(), consequence.WalkOptions[consequence.ActorAction]{Walks: 3, DMax: 5})
	if !errors.Is(err, consequence.ErrInvalidModel) || !errors.Is(err, node.ErrUnknownMessageType) {
		t.Fatalf("RandomWalks = %v, want ErrInvalidModel wrapping node.ErrUnknownMessageType", err)
	}

	// An application call outside Spec.Messages: rejected as a pending
	// call when the model is built.
	_, err = consequence.NewActorModel(straySpec(false), consequence.ActorOptions{N: 2,
		Workload: func(node.ID, bool) []node.Message { return []node.Message{stray{}} }})
	if !errors.Is(err, consequence.ErrActorModel) || !errors.Is(err, node.ErrUnknownMessageType) {
		t.Fatalf("NewActorModel with a stray call = %v", err)
	}
}
