package tool

import (
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

type histOp struct {
	node.Named[histOp]
	V int
}

// TestWebHistory: a history renders as a row per client, an operation a
// bar between its events' positions (open to the end, one under way at
// a snapshot from the left edge), with the history properties' verdicts.
func TestWebHistory(t *testing.T) {
	t0 := time.Unix(0, 0)
	h := node.History{Start: historyStart{}, Events: []node.HistoryEvent{
		{Kind: node.Invoked, Node: 4, Op: histOp{V: 1}, At: t0, Outstanding: true},
		{Kind: node.Invoked, Node: 3, Op: histOp{V: 2}, At: t0.Add(time.Second)},
		{Kind: node.Returned, Node: 4, Op: histOp{V: 1}, Result: histOp{V: 9}, At: t0.Add(2 * time.Second)},
	}}
	prop := node.OnHistory("P", func(node.History) error { return errors.New("bad") })
	w := webHistory("the path's history", h, []node.Property{prop})
	if w == nil || len(w.Clients) != 2 || w.Clients[0] != "n3" || w.Events != 3 || len(w.Verdicts) != 1 || w.Verdicts[0] != "P: bad" {
		t.Fatalf("webHistory: %+v", w)
	}
	if o := w.Ops[0]; o.Client != 1 || o.Call != -1 || o.Return != 2 || o.Label != "tool.histOp{V:1} -> tool.histOp{V:9}" || o.When != "(0s–2s)" {
		t.Errorf("the operation under way at the start: %+v", o)
	}
	if o := w.Ops[1]; o.Client != 0 || o.Call != 1 || o.Return != -1 || o.Label != "tool.histOp{V:2} -> ?" || o.When != "(1s–open)" {
		t.Errorf("the open operation: %+v", o)
	}
	if webHistory("x", node.History{}, nil) != nil {
		t.Error("an empty history renders")
	}
}

type historyStart struct{}

func (historyStart) Nodes() []node.ID                    { return nil }
func (historyStart) Service(node.ID) node.Service        { return nil }
func (historyStart) TimerScheduled(node.ID, string) bool { return false }
