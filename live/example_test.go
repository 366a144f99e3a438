package live_test

import (
	"context"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Add is the counter service's application call: add N to the total.
type Add struct{ N int }

// MessageType names Add on the wire and in the registry.
func (Add) MessageType() string { return "counter.Add" }

// counter keeps the sum of the Add calls it was given.
type counter struct{ Total int }

func (c *counter) Init(node.Env)                                 {}
func (c *counter) HandleApp(_ node.Env, call node.Message)       { c.Total += call.(Add).N }
func (c *counter) HandleMessage(node.Env, node.ID, node.Message) {}
func (c *counter) HandleTimer(node.Env, string)                  {}
func (c *counter) HandleTransportError(node.Env, node.ID)        {}
func (c *counter) String() string                                { return fmt.Sprintf("total=%d", c.Total) }

// Running one live node: a RuntimeConfig needs only the node's ID (every
// other field's zero value is its default: a free port on 127.0.0.1, a new
// cluster, memberlist's local-network timing, no logs). The node takes two
// application calls, and Stop leaves no goroutine behind.
func Example() {
	spec := node.Spec{
		Name:     "counter",
		New:      func() node.Service { return &counter{} },
		Messages: []node.Message{Add{}},
	}
	r, err := live.NewRuntime(live.RuntimeConfig{ID: 1}, spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range []int{2, 3} {
		if err := r.Submit(Add{N: n}); err != nil {
			fmt.Println(err)
		}
	}
	// The calls run on the node's own goroutine: wait until both have.
	for r.Status().Summary != "total=5" && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println(r.Status().Summary)
	if err := r.Stop(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println("running:", r.Status().Running)
	// Output:
	// total=5
	// running: false
}
