package node_test

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Ping is the only message of the pinger service.
type Ping struct{ Seq int }

func (Ping) MessageType() string { return "ping" }

// pinger sends a Ping to its peer every second and counts the pings it gets.
type pinger struct {
	Peer     node.ID
	Received int
}

func (p *pinger) Init(env node.Env) { env.SetTimer("tick", time.Second) }
func (p *pinger) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	if _, ok := msg.(Ping); ok {
		p.Received++
	}
}
func (p *pinger) HandleTimer(env node.Env, name string) {
	env.Send(p.Peer, Ping{Seq: p.Received})
	env.SetTimer("tick", time.Second)
}
func (p *pinger) HandleApp(env node.Env, call node.Message)       {}
func (p *pinger) HandleTransportError(env node.Env, peer node.ID) {}

// A minimal service driven by hand: the caller plays the role of the shell,
// feeding events in and carrying effects out.
func Example() {
	core, err := node.NewCore(node.CoreConfig{
		ID:      1,
		Factory: func() node.Service { return &pinger{Peer: 2} },
		Seed:    42,
	})
	if err != nil {
		panic(err)
	}
	t0 := time.Unix(0, 0).UTC()
	fx, _ := core.Step(node.Event{Kind: node.EventInit, At: t0})
	fmt.Println("timer set for", fx.Timers[0].Name, fx.Timers[0].At.Sub(t0))

	fx, _ = core.Step(node.Event{Kind: node.EventTimer, At: fx.Timers[0].At, Timer: "tick"})
	fmt.Printf("send %s to %s\n", fx.Sends[0].Msg.MessageType(), fx.Sends[0].To)

	core.Step(node.Event{Kind: node.EventMessage, At: t0.Add(1500 * time.Millisecond), From: 2, Msg: Ping{Seq: 0}})
	fmt.Println("received", core.Service().(*pinger).Received)

	h1, _ := core.Hash()
	cp, _ := core.Checkpoint()
	restored, _ := node.NewCore(node.CoreConfig{ID: 1, Factory: func() node.Service { return &pinger{} }})
	if err := restored.Restore(cp); err != nil {
		panic(err)
	}
	h2, _ := restored.Hash()
	fmt.Println("restored state has the same hash:", h1 == h2)
	// Output:
	// timer set for tick 1s
	// send ping to n2
	// received 1
	// restored state has the same hash: true
}
