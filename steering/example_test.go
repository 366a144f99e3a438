package steering_test

import (
	"context"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// The paper's Figure 2: from the snapshot n9 gathered of n1, n9 and n13,
// a round predicts that a silent reset of n13 followed by its rejoin
// through n9 makes n13 both n9's child and sibling, and installs the
// filter that stops it at n9; the filter then drops (and breaks the
// connection of) the Join from n13, and lets the Join from n1 through.
func ExampleController_Round() {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	snap, err := paper.Figure2Snapshot(spec)
	if err != nil {
		panic(err)
	}
	c, err := steering.New(steering.Config{
		Mode:               steering.Steer,
		Spec:               spec,
		Workload:           paper.Figure2Workload,
		Faults:             consequence.Faults{Resets: 1, SilentResets: true},
		InterventionPolicy: steering.InterventionPolicy{BreakConnection: true},
	}, 9)
	if err != nil {
		panic(err)
	}
	rep, err := c.Round(context.Background(), snap)
	if err != nil {
		panic(err)
	}
	for _, p := range rep.Predictions {
		fmt.Println(p)
	}
	for _, f := range c.Filters() {
		fmt.Println("filter", f)
	}
	for _, from := range []node.ID{13, 1} {
		ev := node.Event{Kind: node.EventMessage, From: from, Msg: randtree.Join{Joiner: from}, At: snap.At}
		fmt.Printf("Join from %v: %v\n", from, c.Intercept(ev))
	}
	// Output:
	// ChildrenSiblingsDisjoint (filter n9: drop+break randtree.Join from n13): n13 reset silent; n13 app randtree.JoinOverlay; n9 deliver randtree.Join from n13; n1 deliver randtree.Join from n9; n9 deliver randtree.UpdateSibling from n1
	// filter n9: drop+break randtree.Join from n13
	// Join from n13: drop+break
	// Join from n1: pass
}

// A dead end of Ponged predicted at 0 s: the property fails from 1 s on
// and is confirmed at 6 s, once it has failed for the 5 s grace. A second
// one, predicted at 10 s, is retracted when Ponged holds at 15 s.
func ExampleLivenessWatch() {
	w, err := steering.NewLivenessWatch(5 * time.Second)
	if err != nil {
		panic(err)
	}
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	w.Predicted("Ponged", at(0), true)
	w.Observe("Ponged", at(1), false)
	w.Observe("Ponged", at(6), false)
	w.Predicted("Ponged", at(10), false)
	w.Observe("Ponged", at(15), true)
	confirmed, retracted, pending := w.Counts()
	fmt.Println(confirmed, retracted, pending)
	// Output: 1 1 0
}
