package snapshot_test

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// A shell drives a Manager around its node's Core: Deliver before the core
// handles a message, Sent for what the core sends, and the manager's own
// protocol messages go out on the same channels. Here two nodes exchange
// messages by hand and node 1 gathers a snapshot of both.
func Example() {
	reg, _ := node.NewRegistry(chat{})
	start := time.Unix(0, 0).UTC()
	cores := map[node.ID]*node.Core{}
	mgrs := map[node.ID]*snapshot.Manager{}
	for _, id := range []node.ID{1, 2} {
		core, _ := node.NewCore(node.CoreConfig{ID: id, Factory: func() node.Service { return &chatter{Nodes: 2} }})
		core.Step(node.Event{Kind: node.EventInit, At: start})
		m, _ := snapshot.New(snapshot.Config{Registry: reg}, id, core)
		m.Start(start)
		cores[id], mgrs[id] = core, m
	}
	var wire []node.Envelope // one FIFO network, for brevity
	var got *snapshot.Snapshot
	collect := func(fx snapshot.Effects) {
		wire = append(wire, fx.Sends...)
		if len(fx.Snapshots) > 0 {
			got = fx.Snapshots[0]
		}
	}
	fx, _ := mgrs[1].Gather(start)
	collect(fx)
	for len(wire) > 0 {
		env := wire[0]
		wire = wire[1:]
		deliver, fx, _ := mgrs[env.To].Deliver(start, env)
		collect(fx)
		if deliver { // a service message: the core handles it
			out, _ := cores[env.To].Step(node.Event{Kind: node.EventMessage, At: start, From: env.From, Msg: env.Msg})
			for _, s := range out.Sends {
				mgrs[env.To].Sent(start, &s, 0)
				wire = append(wire, s)
			}
		}
	}
	fmt.Printf("cut %d: %d nodes, %d channels\n", got.CN, len(got.Nodes), len(got.Channels))
	// Output: cut 1: 2 nodes, 4 channels
}
