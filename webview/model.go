package webview

import "errors"

// ErrNotFound is wrapped by a Trace's State for a step or path it does
// not have.
var ErrNotFound = errors.New("webview: not found")

// Document is one file the web view shows. Name identifies it (the path
// as given on the command line); the other fields are what the file holds
// that the view can draw, any of them empty.
type Document struct {
	// Name is the file's name as the user gave it.
	Name string `json:"name"`
	// Format is the document's "format" field (or a description of a file
	// without one, e.g. "emulation trace").
	Format string `json:"format"`
	// Head are the lines that describe the run (trace show's first lines).
	Head []string `json:"head,omitempty"`
	// Predictions are the predictions the document holds (an emulated
	// run's, or the one of a prediction report).
	Predictions []Prediction `json:"predictions,omitempty"`
	// Headline is the figure to read first, beside the paper's (an
	// experiment's; nil: none).
	Headline *Headline `json:"headline,omitempty"`
	// Errors are why the document could not be read (a bad or foreign
	// file of a served directory: the page lists it as an error row).
	Error string `json:"error,omitempty"`
	// Figures are the plots of the document's data (Figures).
	Figures []Figure `json:"-"`
	// Trace is the document's replayed path (nil: none).
	Trace Trace `json:"-"`
	// History is the client history of the document's path or run (nil:
	// none), drawn on its page (WriteHistorySVG, /doc/N/history.svg).
	History *History `json:"history,omitempty"`
}

// Prediction is one predicted violation, as the index lists it.
type Prediction struct {
	Property string `json:"property"`
	// Kind is "safety" or "liveness".
	Kind string `json:"kind"`
	// Node is the node that predicted it ("" when a check found it).
	Node  string `json:"node,omitempty"`
	Depth int    `json:"depth"`
	Error string `json:"error,omitempty"`
	// At describes when (e.g. "12.5 s into the run"), Outcome what the
	// run did after (e.g. "happened 3.1 s later", "never happened").
	At      string `json:"at,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	// Report names the document that replays it (a --reports file), which
	// the view links to when it serves a document of that name.
	Report string `json:"report,omitempty"`
}

// Figure is one SVG plot. SVG is a complete <svg> element, drawn by this
// package or by a caller's plotter (trusted: it is embedded as is).
type Figure struct {
	Title string
	SVG   []byte
}

// Trace is a replayed path that the stepper walks: the caller replays, the
// view asks for what it shows. Its methods must be safe for concurrent use
// and must not retain the slices they return.
type Trace interface {
	// Info describes the path: its steps, nodes, critical step, nearest
	// live path and event graph.
	Info() TraceInfo
	// State is the state of every node after step (0: the start) of path
	// PathDead or PathLive, in Info's node order. A step outside the path
	// wraps ErrNotFound; a trace that holds no states (an emulation trace:
	// fingerprints only) returns an error saying so.
	State(path string, step int) ([]NodeState, error)
}

// The paths a Trace's State serves.
const (
	PathDead = "dead"
	PathLive = "live"
)

// TraceInfo describes a replayed path.
type TraceInfo struct {
	// Nodes are the run's nodes, in the order State returns them.
	Nodes []string `json:"nodes"`
	// Steps are the path's steps; step i (1-based) is Steps[i-1].
	Steps []Step `json:"steps"`
	// Critical is the critical transition's step (1-based; 0: none).
	Critical int `json:"critical"`
	// Live is the nearest live path's steps (nil: none).
	Live []Step `json:"live,omitempty"`
	// Edges are the event graph's edges; GraphError says why there are
	// none when the graph could not be built.
	Edges      []Edge `json:"edges,omitempty"`
	GraphError string `json:"graph_error,omitempty"`
	// States says whether State serves node states.
	States bool `json:"states"`
}

// Step is one step of a path.
type Step struct {
	// Text is how the step reads ("n13 deliver randtree.Join from n9").
	Text string `json:"text"`
	// Node is the node the step happens to; Kind the action's kind
	// ("deliver", "timer", "reset", ...).
	Node string `json:"node"`
	Kind string `json:"kind"`
}

// Edge is one causal edge of the event graph: from step From (0: the
// start state) to step To.
type Edge struct {
	From  int    `json:"from"`
	To    int    `json:"to"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
	// Dropped marks a datagram dropped rather than delivered.
	Dropped bool `json:"dropped,omitempty"`
}

// NodeState is one node's state: its fields one a line, "name: value", in
// a stable order so two states diff field by field.
type NodeState struct {
	Node   string   `json:"node"`
	Fields []string `json:"fields"`
}
