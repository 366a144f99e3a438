package steering

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// A node's status lists the kinds its gate holds, with the filter that
// held each, and its newest predictions: what its /ui page shows.
func TestStatusListsHoldsAndRecentPredictions(t *testing.T) {
	l, apply := escalationLayer(t)
	probe := Filter{Kind: FilterMessage, Node: 9, From: 13, Type: "randtree.Probe"}
	t0 := time.Unix(5000, 0)
	apply([]Filter{probe}, t0)
	gate := handledAt(t, l, func(s int) node.Event {
		return node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: t0.Add(time.Duration(s) * time.Second)}
	})
	for s := 1; s <= 3; s++ {
		gate(s)
	}
	st := l.Status()
	if len(st.Holds) != 1 || st.Holds[0].Event != "n9: drop randtree.Probe from n13" || st.Holds[0].By != "filter" || st.Holds[0].Filter != probe.String() || !st.Holds[0].Since.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("holds %+v, want the Probe from n13 held by its filter since 3 s", st.Holds)
	}
	rep := &RoundReport{Predictions: []Prediction{{Property: "RootHasNoSiblings", Rank: 1, Filter: &probe,
		Report: consequence.ActorReport{Kind: "safety", Error: "n9 has siblings", Path: []consequence.ActionRecord{{Text: "n13 reset silent"}}}}}}
	for range MaxRecentPredictions + 2 {
		l.noteRecent(&snapshot.Snapshot{CN: 7}, rep)
	}
	st = l.Status()
	if len(st.Recent) != MaxRecentPredictions || st.Recent[0].Property != "RootHasNoSiblings" || st.Recent[0].Cut != 7 || st.Recent[0].Path[0] != "n13 reset silent" || st.Recent[0].Filter != probe.String() {
		t.Fatalf("recent %+v", st.Recent)
	}
}
