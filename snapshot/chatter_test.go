package snapshot_test

import (
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// chatter is a deliberately busy service for the consistency checker: every
// 20–120 ms each node sends a message to a random ring neighbour (±1, ±2),
// and answers half of what it gets, so many messages are in flight across
// every cut.
type chatter struct {
	Nodes     int `msgpack:"-"`
	Sent, Got int
}

type chat struct{ N int }

func (chat) MessageType() string { return "chatter.Chat" }

func chatterSpec(nodes int) node.Spec {
	return node.Spec{Name: "chatter", New: func() node.Service { return &chatter{Nodes: nodes} }, Messages: []node.Message{chat{}}}
}

func (c *chatter) arm(env node.Env) {
	env.SetTimer("tick", time.Duration(20+env.Rand().IntN(100))*time.Millisecond)
}

func (c *chatter) Init(env node.Env) { c.arm(env) }

func (c *chatter) HandleTimer(env node.Env, _ string) {
	nb := c.Neighbors(env.Self())
	c.Sent++
	env.Send(nb[env.Rand().IntN(len(nb))], chat{N: c.Sent})
	c.arm(env)
}

func (c *chatter) HandleMessage(env node.Env, from node.ID, m node.Message) {
	c.Got++
	if env.Rand().IntN(2) == 0 {
		c.Sent++
		env.Send(from, chat{N: c.Sent})
	}
}

func (c *chatter) HandleApp(node.Env, node.Message)       {}
func (c *chatter) HandleTransportError(node.Env, node.ID) {}

// Neighbors implements node.Neighborer: the ring neighbours ±1, ±2.
func (c *chatter) Neighbors(self node.ID) []node.ID {
	var out []node.ID
	for _, d := range []int{-2, -1, 1, 2} {
		id := node.ID((int(self)-1+d+c.Nodes)%c.Nodes + 1)
		if id != self {
			out = append(out, id)
		}
	}
	return out
}
