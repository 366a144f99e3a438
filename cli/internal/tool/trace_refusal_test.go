package tool

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// pushNote is pusher's message.
type pushNote struct{ T string }

func (pushNote) MessageType() string { return "test.Push" }

// pusher: node 1's timers a and b (due one after the other) send A and
// then B to node 2 with TrySend.
type pusher struct{ Refused int }

func (p *pusher) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("a", time.Second)
		env.SetTimer("b", 2*time.Second)
	}
}
func (p *pusher) HandleTimer(env node.Env, name string) {
	env.TrySend(2, pushNote{T: name})
}
func (p *pusher) HandleSendRefused(node.Env, node.ID, node.Message) { p.Refused++ }
func (p *pusher) HandleMessage(node.Env, node.ID, node.Message)     {}
func (p *pusher) HandleApp(node.Env, node.Message)                  {}
func (p *pusher) HandleTransportError(node.Env, node.ID)            {}

// TestTraceGraphsARefusal: a replayed path with a refusal reads
// "n1 refuse-send test.Push to n2", and the event graph draws the refused
// send from the step that sent it (b's timer) to the refusal, and A's
// delivery from a's timer (A was ahead of the refused B in the channel:
// taking B out must not shift A's sender).
func TestTraceGraphsARefusal(t *testing.T) {
	spec := node.Spec{Name: "pusher", New: func() node.Service { return &pusher{} }, Messages: []node.Message{pushNote{}}}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Faults: consequence.Faults{Refusals: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var recs []consequence.ActionRecord
	for _, a := range []consequence.ActorAction{
		{Kind: consequence.ActTimer, Node: 1, Timer: "a"},
		{Kind: consequence.ActTimer, Node: 1, Timer: "b"},
		{Kind: consequence.ActRefuse, Node: 1, Peer: 2, Msg: pushNote{T: "b"}},
		{Kind: consequence.ActDeliver, Node: 2, Peer: 1, Msg: pushNote{T: "a"}},
	} {
		r, err := m.Record(a)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	tl, err := replayTimeline(m, recs)
	if err != nil {
		t.Fatal(err)
	}
	if got := tl.steps[2].text; got != "n1 refuse-send test.Push to n2" {
		t.Errorf("step 3 reads %q", got)
	}
	if got := stepMark(tl.steps[2]); got != "x" {
		t.Errorf("step 3's mark %q", got)
	}
	g, err := modelGraph(tl)
	if err != nil {
		t.Fatal(err)
	}
	var edges []string
	for _, e := range g.edges {
		if e.Kind != "timer" {
			edges = append(edges, fmt.Sprintf("%d->%d %s", e.From, e.To, e.Kind))
		}
	}
	if want := []string{"2->3 refused", "1->4 message"}; !slices.Equal(edges, want) {
		t.Errorf("edges %v, want %v", edges, want)
	}
	if len(g.lost) != 0 {
		t.Errorf("lost %v: a refusal loses nothing in flight", g.lost)
	}
}
