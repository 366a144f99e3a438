package webview

import (
	"bufio"
	"fmt"
	"html"
	"io"
)

// MaxGraphSteps bounds the steps WriteGraphSVG draws; a longer path's
// graph stops there, saying so.
const MaxGraphSteps = 2000

// The event graph's geometry, in SVG user units: a lane per node, a row
// per step.
const (
	graphLane   = 90
	graphRow    = 22
	graphTop    = 40
	graphLeft   = 40
	graphText   = 420 // the width of the step texts right of the lanes
	graphRadius = 5
)

// edgeColours colour the graph's edges by kind (colour-blind safe).
var edgeColours = map[string]string{
	"message":         "#0072b2",
	"datagram":        "#009e73",
	"timer":           "#e69f00",
	"transport-error": "#d55e00",
	"refused":         "#cc79a7",
}

// WriteGraphSVG draws info's event graph as SVG, MaceMC's ladder: a
// vertical lane per node, each step a dot on its node's lane (the
// critical step red and larger) with its text on the right, and each
// causal edge an arrow from the step that caused it (a send, a timer's
// setting) to the step it caused. An edge from the start state starts at
// the top of the receiving lane. The output is a pure function of info.
func WriteGraphSVG(w io.Writer, info TraceInfo) error {
	steps := info.Steps
	cutShort := len(steps) > MaxGraphSteps
	if cutShort {
		steps = steps[:MaxGraphSteps]
	}
	lane := make(map[string]int, len(info.Nodes))
	for i, n := range info.Nodes {
		lane[n] = i
	}
	g := graphDrawing{w: bufio.NewWriter(w), lane: lane, steps: steps}
	width := graphLeft + len(info.Nodes)*graphLane + graphText
	height := graphTop + (len(steps)+2)*graphRow
	fmt.Fprintf(g.w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintln(g.w, `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="context-stroke"/></marker></defs>`)
	fmt.Fprintf(g.w, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	for i, n := range info.Nodes {
		x := g.x(i)
		fmt.Fprintf(g.w, `<text x="%d" y="%d" text-anchor="middle">%s</text><path d="M%d %dV%d" stroke="#bbb"/>`+"\n",
			x, graphTop-16, html.EscapeString(n), x, graphTop-8, height-graphRow)
	}
	for _, e := range info.Edges {
		g.edge(e)
	}
	for i, s := range steps {
		g.step(i+1, s, i+1 == info.Critical)
	}
	if cutShort {
		fmt.Fprintf(g.w, `<text x="%d" y="%d">… %d more steps not drawn</text>`+"\n", graphLeft, height-4, len(info.Steps)-MaxGraphSteps)
	}
	fmt.Fprintln(g.w, "</svg>")
	return g.w.Flush()
}

// graphDrawing maps steps and lanes to coordinates.
type graphDrawing struct {
	w     *bufio.Writer
	lane  map[string]int
	steps []Step
}

func (g graphDrawing) x(lane int) int { return graphLeft + lane*graphLane + graphLane/2 }
func (g graphDrawing) y(step int) int { return graphTop + step*graphRow }

// at is the position of step i's dot (0: the start row, on lane l).
func (g graphDrawing) at(i, l int) (int, int, bool) {
	if i < 0 || i > len(g.steps) {
		return 0, 0, false
	}
	if i > 0 {
		var ok bool
		if l, ok = g.lane[g.steps[i-1].Node]; !ok {
			return 0, 0, false
		}
	}
	return g.x(l), g.y(i), true
}

// edge draws one causal edge, skipping one whose ends are not drawn.
func (g graphDrawing) edge(e Edge) {
	if e.To < 1 || e.To > len(g.steps) {
		return
	}
	toLane, ok := g.lane[g.steps[e.To-1].Node]
	if !ok {
		return
	}
	x1, y1, ok1 := g.at(e.From, toLane)
	x2, y2, ok2 := g.at(e.To, toLane)
	if !ok1 || !ok2 {
		return
	}
	colour, ok := edgeColours[e.Kind]
	if !ok {
		colour = "#555"
	}
	dash := ""
	if e.Dropped {
		dash = ` stroke-dasharray="4 3"`
	}
	fmt.Fprintf(g.w, `<path class="edge" d="M%d %dL%d %d" stroke="%s"%s fill="none" marker-end="url(#arrow)"><title>%s %s: step %d → %d</title></path>`+"\n",
		x1, y1, x2, y2-graphRadius, colour, dash, html.EscapeString(e.Kind), html.EscapeString(e.Label), e.From, e.To)
}

// step draws step i's dot and text.
func (g graphDrawing) step(i int, s Step, critical bool) {
	x, y, ok := g.at(i, 0)
	if !ok {
		return
	}
	fill, r, mark := "#333", graphRadius, ""
	if critical {
		fill, r, mark = "#d00", graphRadius+2, "  ← critical transition"
	}
	tx := graphLeft + len(g.lane)*graphLane + 10
	fmt.Fprintf(g.w, `<circle class="step" cx="%d" cy="%d" r="%d" fill="%s"/><text x="%d" y="%d">%d. %s%s</text>`+"\n",
		x, y, r, fill, tx, y+4, i, html.EscapeString(s.Text), mark)
}
