package steering

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// echoSvc: n1 pings n2 when it starts and on its "again" timer; n2 answers
// every ping with a pong.
type echoSvc struct{ Pongs int }

type ping struct{}
type pong struct{}

func (ping) MessageType() string { return "test.Ping" }
func (pong) MessageType() string { return "test.Pong" }

func (s *echoSvc) Init(env node.Env) {
	if env.Self() == 1 {
		env.Send(2, ping{})
		env.SetTimer("again", time.Second)
	}
}
func (s *echoSvc) HandleMessage(env node.Env, from node.ID, m node.Message) {
	switch m.(type) {
	case ping:
		env.Send(from, pong{})
	case pong:
		s.Pongs++
	}
}
func (s *echoSvc) HandleApp(node.Env, node.Message)       {}
func (s *echoSvc) HandleTransportError(node.Env, node.ID) {}
func (s *echoSvc) HandleTimer(env node.Env, name string)  { env.Send(2, ping{}) }

// likelihood tells a delivery of a message already in flight at the start
// from one the path sent, and counts timers and faults; rank orders by
// cost, then length, then place.
func TestLikelihoodAndRank(t *testing.T) {
	spec := node.Spec{Name: "echo", New: func() node.Service { return &echoSvc{} }, Messages: []node.Message{ping{}, pong{}}}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Faults: consequence.Faults{Resets: 1}})
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(to, from node.ID, msg node.Message) consequence.ActorAction {
		return consequence.ActorAction{Kind: consequence.ActDeliver, Node: to, Peer: from, Msg: msg}
	}
	timer := consequence.ActorAction{Kind: consequence.ActTimer, Node: 1, Timer: "again"}
	reset := consequence.ActorAction{Kind: consequence.ActReset, Node: 2}
	inFlight := []consequence.ActorAction{deliver(2, 1, ping{}), deliver(1, 2, pong{})}
	withTimer := []consequence.ActorAction{timer, deliver(2, 1, ping{}), deliver(2, 1, ping{})}
	withReset := []consequence.ActorAction{reset}
	got := []Likelihood{likelihood(m.Start(), inFlight), likelihood(m.Start(), withTimer), likelihood(m.Start(), withReset)}
	want := []Likelihood{
		{InFlight: 1, Spawned: 1, Cost: costSpawned},
		{InFlight: 1, Spawned: 1, Local: 1, Cost: costLocal + costSpawned},
		{Faults: 1, Cost: costFault},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("path %d: likelihood %+v, want %+v", i, got[i], want[i])
		}
	}
	preds := []Prediction{{Path: withReset}, {Path: withTimer}, {Path: inFlight}, {Path: inFlight[:1]}}
	rank(m.Start(), preds)
	for i, want := range []int{4, 3, 2, 1} {
		if preds[i].Rank != want {
			t.Errorf("prediction %d (%v): rank %d, want %d", i, preds[i].Path, preds[i].Rank, want)
		}
	}
	f := func(from node.ID) *Filter { return &Filter{Kind: FilterMessage, Node: 2, From: from, Type: "x"} }
	preds[0].Filter, preds[1].Filter, preds[2].Filter, preds[3].Filter = f(1), f(3), f(3), f(4)
	if got := byRank(preds, filterSet{*f(4)}); len(got) != 2 || got[0] != *f(3) || got[1] != *f(1) {
		t.Errorf("byRank = %v, want the filters from n3 then n1", got)
	}
}
