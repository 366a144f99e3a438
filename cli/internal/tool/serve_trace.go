package tool

import (
	"fmt"
	"io"
	"sync"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// timelineTrace is a timeline as the web view's Trace: the replay 'trace
// show' does, its node states rendered as Mdb prints them (nodeFields).
// The mutex serializes the web view's concurrent requests on the states.
type timelineTrace struct {
	mu   sync.Mutex
	tl   *timeline
	info webview.TraceInfo
}

// traceDocument makes tl a web view document, its event graph built now.
func traceDocument(name, format string, tl *timeline) webview.Document {
	t := &timelineTrace{tl: tl, info: webview.TraceInfo{Nodes: make([]string, len(tl.nodes)), Critical: tl.critical, States: tl.states != nil || tl.rerunCfg != nil}}
	for i, id := range tl.nodes {
		t.info.Nodes[i] = id.String()
	}
	t.info.Steps = webSteps(tl.steps)
	if tl.live != nil {
		t.info.Live = webSteps(tl.live.steps)
	}
	t.info.Edges, t.info.GraphError = webEdges(tl)
	return webview.Document{Name: name, Format: format, Head: tl.head, Trace: t, History: timelineHistory(tl)}
}

// webEdges renders tl's event graph's edges, or why it has none.
func webEdges(tl *timeline) (edges []webview.Edge, graphError string) {
	g, err := tl.graphOf()
	if err != nil {
		return nil, err.Error()
	}
	for _, e := range g.edges {
		edges = append(edges, webview.Edge{From: e.From, To: e.To, Kind: e.Kind, Label: e.Label, Dropped: e.Dropped})
	}
	return edges, ""
}

// webSteps renders a timeline's steps.
func webSteps(steps []tstep) []webview.Step {
	out := make([]webview.Step, len(steps))
	for i, s := range steps {
		out[i] = webview.Step{Text: s.text, Node: s.node.String(), Kind: s.kind}
	}
	return out
}

// Info describes the path (computed once: the caller must not change it).
func (t *timelineTrace) Info() webview.TraceInfo { return t.info }

// State renders every node's state after step of the dead path or of the
// nearest live path.
func (t *timelineTrace) State(path string, step int) ([]webview.NodeState, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tl := t.tl
	if path == webview.PathLive {
		tl = t.tl.live
	}
	if tl == nil {
		return nil, fmt.Errorf("cli: %w: this trace has no %s path", webview.ErrNotFound, path)
	}
	if step < 0 || step > len(tl.steps) {
		return nil, fmt.Errorf("cli: %w: step %d of a %s path of %d steps", webview.ErrNotFound, step, path, len(tl.steps))
	}
	if tl.states == nil {
		return rerunStates(tl, step)
	}
	return nodeStates(tl.states[step], tl), nil
}

// rerunStates renders an emulation trace's node states after step by
// re-running the emulation its header names, as 'trace show --step' does
// (an error without the header: the file holds state hashes only).
func rerunStates(tl *timeline, step int) ([]webview.NodeState, error) {
	v, err := tl.rerun(step)
	if err != nil {
		return nil, fmt.Errorf("cli: %v", err)
	}
	out := make([]webview.NodeState, len(tl.nodes))
	for i, id := range tl.nodes {
		out[i] = webview.NodeState{Node: id.String(), Fields: v.fields[id]}
		if v.step != step {
			out[i].Fields = append([]string{fmt.Sprintf("(the re-run's event wrote steps up to %d: the state is after it)", v.step)}, v.fields[id]...)
		}
	}
	return out, nil
}

// nodeStates renders every node of tl in g.
func nodeStates(g *consequence.GlobalState, tl *timeline) []webview.NodeState {
	out := make([]webview.NodeState, len(tl.nodes))
	for i, id := range tl.nodes {
		out[i] = webview.NodeState{Node: id.String(), Fields: nodeFields(g, id)}
	}
	return out
}

// writeGraphSVG draws tl's event graph as the web view does (trace show
// --graph svg): SVG with no program but this one.
func writeGraphSVG(w io.Writer, tl *timeline) error {
	info := traceDocument("", "", tl).Trace.Info()
	if info.GraphError != "" {
		return fmt.Errorf("no event graph: %s", info.GraphError)
	}
	webview.WriteGraphSVG(w, info)
	return nil
}
