package nodetest_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// Hello greets a peer; Welcome answers it.
type Hello struct{}
type Welcome struct{}

// Greet is the application call "greet PEER".
type Greet struct{ Peer node.ID }

func (Hello) MessageType() string   { return "greeter.Hello" }
func (Welcome) MessageType() string { return "greeter.Welcome" }
func (Greet) MessageType() string   { return "greeter.Greet" }
func (Hello) String() string        { return "Hello" }
func (Welcome) String() string      { return "Welcome" }

// greeter greets the peers the application names, retries after a second
// until welcomed, and counts its welcomes.
type greeter struct {
	Waiting  node.ID
	Welcomes int
}

func (g *greeter) Init(node.Env) {}

func (g *greeter) HandleApp(env node.Env, call node.Message) {
	g.Waiting = call.(Greet).Peer
	env.Send(g.Waiting, Hello{})
	env.SetTimer("retry", time.Second)
}

func (g *greeter) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case Hello:
		env.Send(from, Welcome{})
	case Welcome:
		g.Welcomes++
		g.Waiting = node.None
		env.CancelTimer("retry")
	}
}

func (g *greeter) HandleTimer(env node.Env, name string) {
	env.Send(g.Waiting, Hello{})
	env.SetTimer("retry", time.Second)
}

func (g *greeter) HandleTransportError(node.Env, node.ID) {}

// A scenario driven line by line: the retry timer fires before the first
// Welcome arrives, so n1 is welcomed twice — which the property
// "welcomed-once" catches.
func Example() {
	h, err := nodetest.New(nodetest.Config{
		Spec: func() node.Spec {
			return node.Spec{
				Name:     "greeter",
				New:      func() node.Service { return &greeter{} },
				Messages: []node.Message{Hello{}, Welcome{}, Greet{}},
				Properties: []node.Property{node.Always("welcomed-once", func(v node.View) error {
					if g := v.Service(1).(*greeter); g.Welcomes > 1 {
						return errors.New("n1 was welcomed twice")
					}
					return nil
				})},
			}
		},
		App: func(_ node.ID, args []string) (node.Message, error) {
			peer, err := node.ParseID(args[len(args)-1])
			return Greet{Peer: peer}, err
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range []string{
		"start n1 n2",
		"app n1 greet n2",
		"fire n1 retry",
		"deliver-all",
		"check safety",
	} {
		out, err := h.Exec(line)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("> %s\n%s", line, out)
	}
	// Output:
	// > start n1 n2
	// ok
	// > app n1 greet n2
	// n1 -> n2 Hello
	// n1: set timer retry +1s
	// > fire n1 retry
	// n1 -> n2 Hello
	// n1: set timer retry +1s
	// > deliver-all
	// n2 <- n1 Hello
	// n2 -> n1 Welcome
	// n1 <- n2 Welcome
	// n1: cancel timer retry
	// n2 <- n1 Hello
	// n2 -> n1 Welcome
	// n1 <- n2 Welcome
	// > check safety
	// welcomed-once: n1 was welcomed twice
}
