package webview_test

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// fakeTrace is a three-step path over two nodes whose step 2 is critical,
// with a nearest live path that differs at step 2.
type fakeTrace struct{}

func (fakeTrace) Info() webview.TraceInfo {
	return webview.TraceInfo{
		Nodes: []string{"n1", "n2"},
		Steps: []webview.Step{
			{Text: "n1 app Join", Node: "n1", Kind: "app"},
			{Text: "n2 deliver Join from n1", Node: "n2", Kind: "deliver"},
			{Text: "n1 timer <retry>", Node: "n1", Kind: "timer"},
		},
		Critical: 2,
		Live: []webview.Step{
			{Text: "n1 app Join", Node: "n1", Kind: "app"},
			{Text: "n2 timer recover", Node: "n2", Kind: "timer"},
		},
		Edges:  []webview.Edge{{From: 1, To: 2, Kind: "message", Label: "Join"}, {From: 0, To: 3, Kind: "timer", Label: "<retry>"}},
		States: true,
	}
}

func (fakeTrace) State(path string, step int) ([]webview.NodeState, error) {
	n := 3
	if path == webview.PathLive {
		n = 2
	}
	if step < 0 || step > n {
		return nil, fmt.Errorf("fake: %w: step %d", webview.ErrNotFound, step)
	}
	return []webview.NodeState{
		{Node: "n1", Fields: []string{fmt.Sprintf("step: %d", step)}},
		{Node: "n2", Fields: []string{"path: " + path}},
	}, nil
}
