package livenode_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/livenode"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Spend is the budget service's application call: spend N units.
type Spend struct{ N int }

// MessageType names Spend on the wire and in the registry.
func (Spend) MessageType() string { return "budget.Spend" }

// budget is a service of one's own: it spends what it is asked to, and
// its one safety property, WithinBudget, says it never spends more than
// 10 units. Nothing in the service enforces that; steering does.
type budget struct {
	node.NopHandlers
	Spent int
}

func (b *budget) HandleApp(_ node.Env, call node.Message) { b.Spent += call.(Spend).N }
func (b *budget) String() string                          { return fmt.Sprintf("spent=%d", b.Spent) }

// budgetSpec is the service's spec: its state, its call and its property.
func budgetSpec() node.Spec {
	return node.Spec{
		Name:     "budget",
		New:      func() node.Service { return &budget{} },
		Messages: []node.Message{Spend{}},
		Properties: []node.Property{node.Always("WithinBudget", func(v node.View) error {
			for _, id := range v.Nodes() {
				if b := v.Service(id).(*budget); b.Spent > 10 {
					return fmt.Errorf("%v spent %d of 10", id, b.Spent)
				}
			}
			return nil
		})},
	}
}

// A live node of one's own service with a snapshot manager and steering,
// as 'crystalball node' runs one, on a free loopback port. The node spends
// 4 units three times as it starts (Config.Calls); the immediate safety
// check runs each call on a copy of the node first and vetoes the third,
// which would break WithinBudget (a vetoed call is put off and checked
// again, and vetoed again). Meanwhile the snapshot manager checkpoints
// the node and gathers its snapshots, from which the steering rounds
// predict. Stop leaves no goroutine behind.
func Example() {
	n, err := livenode.New(budgetSpec(), livenode.Config{
		Runtime:   live.RuntimeConfig{ID: 1},
		Snapshots: &snapshot.Config{Interval: 100 * time.Millisecond, GatherConfig: snapshot.GatherConfig{GatherInterval: 200 * time.Millisecond}},
		Steering: &steering.LayerConfig{
			Controller: steering.Config{Mode: steering.Steer, SearchBudget: steering.SearchBudget{MaxTime: 50 * time.Millisecond}},
			Immediate:  true,
		},
		Calls: func(node.ID, []node.ID) []node.Message { return []node.Message{Spend{4}, Spend{4}, Spend{4}} },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	// The node runs on goroutines of its own: wait for the veto and for
	// a gathered snapshot.
	for ctx.Err() == nil && (n.Steering().Stats().Vetoes == 0 || n.Snapshots().Status(time.Now()).Last == nil) {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println(n.Runtime().Status().Summary)
	fmt.Println("vetoed:", n.Steering().Stats().Vetoes > 0)
	fmt.Println("snapshot gathered:", n.Snapshots().Status(time.Now()).Last != nil)
	fmt.Println("stopped:", errors.Join(n.Stop(ctx), ctx.Err()) == nil)
	// Output:
	// spent=8
	// vetoed: true
	// snapshot gathered: true
	// stopped: true
}
