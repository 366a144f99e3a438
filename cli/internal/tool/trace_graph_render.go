package tool

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// stepMarks are the one-letter marks of the step kinds in the ladder
// diagram: what happened to the node of its column.
var stepMarks = map[string]string{
	"reset": "R", "down": "R", "up": "R",
	"break":         "B",
	"drop-datagram": "x", "drop": "x", "refuse-send": "x",
	"timer": "T",
	"app":   "A",
}

// stepMark is the one-letter mark of a step's kind in the ladder diagram
// (stepMarks; "*" for a delivery or any other kind).
func stepMark(s tstep) string {
	if m, ok := stepMarks[s.kind]; ok {
		return m
	}
	return "*"
}

// writeGraphText writes the event graph as a ladder diagram: one column
// per node (only, with only >0, its events), one row per step, the step's
// causes ("<- 3 message randtree.Join") and effects ("-> 5 6").
func writeGraphText(w io.Writer, tl *timeline, g *eventGraph, only node.ID) {
	cols, width := ladderColumns(tl, only)
	fmt.Fprintln(w, ladderHeader(cols, width))
	in, out := g.byStep()
	for i := 1; i <= len(tl.steps); i++ {
		if only != node.None && !tl.involves(i, only) {
			continue
		}
		var row strings.Builder
		writeLadderCells(&row, tl.steps[i-1], i, cols, width)
		writeLadderCauses(&row, in[i], out[i], g.lost[i], i == tl.critical)
		fmt.Fprintln(w, row.String())
	}
	fmt.Fprintln(w, `(* delivery, T timer, A application call, R reset, B break, x drop; "<- 16 message": the step that sent the message it delivers, or set the timer it fires; "-> 20 21": the steps that deliver what it sent or fire the timers it set)`)
}

// ladderColumns are the ladder diagram's columns (every node, or only)
// and their width: the widest node name and a space, at least 4.
func ladderColumns(tl *timeline, only node.ID) ([]node.ID, int) {
	cols := tl.nodes
	if only != node.None {
		cols = []node.ID{only}
	}
	width := 4
	for _, id := range cols {
		width = max(width, len(id.String())+1)
	}
	return cols, width
}

// ladderHeader is the ladder diagram's first line: the column names.
func ladderHeader(cols []node.ID, width int) string {
	var hdr strings.Builder
	hdr.WriteString("step ")
	for _, id := range cols {
		fmt.Fprintf(&hdr, "%-*s", width, id.String())
	}
	return strings.TrimRight(hdr.String(), " ")
}

// writeLadderCells writes the start of step i's row: its number, a cell
// per column (the step's mark on the columns it happens to, a bar on the
// others) and the step's text.
func writeLadderCells(row *strings.Builder, s tstep, i int, cols []node.ID, width int) {
	fmt.Fprintf(row, "%4d ", i)
	for _, id := range cols {
		cell := "|"
		if s.marksColumn(id) {
			cell = stepMark(s)
		}
		fmt.Fprintf(row, "%-*s", width, cell)
	}
	row.WriteString(s.text)
}

// marksColumn reports whether the step shows in id's column: it happens
// to id, or it breaks id's connection.
func (s tstep) marksColumn(id node.ID) bool {
	return id == s.node || (s.kind == "break" && id == s.peer)
}

// writeLadderCauses writes the end of a row: the step's causes (in), the
// steps its effects reach (out), what it cut in flight and whether it is
// the critical transition.
func writeLadderCauses(row *strings.Builder, in, out []edge, lost int, critical bool) {
	for _, e := range in {
		fmt.Fprintf(row, "  <- %s", causeText(e))
	}
	writeLadderEffects(row, out)
	if lost > 0 {
		fmt.Fprintf(row, "  (cut %d in flight)", lost)
	}
	if critical {
		row.WriteString("  [critical transition]")
	}
}

// writeLadderEffects writes "  -> 5 6": the steps the row's step's
// sends and timers reach (nothing when none).
func writeLadderEffects(row *strings.Builder, out []edge) {
	if len(out) == 0 {
		return
	}
	row.WriteString("  ->")
	for _, e := range out {
		fmt.Fprintf(row, " %d", e.To)
	}
}

// causeText renders the cause of a step: the step that sent its message
// or set its timer ("start": it was in flight or set at the start).
func causeText(e edge) string {
	from := fmt.Sprint(e.From)
	if e.From == 0 {
		from = "start"
	}
	switch {
	case e.Kind == "timer":
		return fmt.Sprintf("%s timer %s", from, e.Label)
	case e.Dropped:
		return fmt.Sprintf("%s %s (dropped)", from, e.Kind)
	}
	return fmt.Sprintf("%s %s", from, e.Kind)
}

// byStep indexes the edges by their target and their source.
func (g *eventGraph) byStep() (in, out map[int][]edge) {
	in, out = map[int][]edge{}, map[int][]edge{}
	for _, e := range g.edges {
		in[e.To] = append(in[e.To], e)
		out[e.From] = append(out[e.From], e)
	}
	return in, out
}

// writeGraphDOT writes the event graph as Graphviz DOT: a cluster per
// node holding its steps in order (gray program-order edges), a box per
// step, solid edges from sends to deliveries, dashed ones from timer
// settings to firings, the critical step in red, resets as octagons.
func writeGraphDOT(w io.Writer, tl *timeline, g *eventGraph, only node.ID) {
	fmt.Fprintln(w, "digraph events {")
	fmt.Fprintln(w, "  rankdir=TB;")
	fmt.Fprintln(w, "  newrank=true;") // clusters laid out in seconds, not a minute, on 500 steps
	fmt.Fprintln(w, "  node [shape=box, fontsize=10];")
	keep := writeDOTClusters(w, tl, only)
	edges := edgesTouching(g.edges, keep)
	if slices.ContainsFunc(edges, func(e edge) bool { return e.From == 0 }) {
		keep[0] = true // what was in flight or set at the start
		fmt.Fprintln(w, `  s0 [label="start", shape=ellipse];`)
	}
	for _, e := range edges {
		for _, s := range []int{e.From, e.To} {
			if !keep[s] { // the other end of an edge of the chosen node
				keep[s] = true
				fmt.Fprintf(w, "  %s;\n", dotBox(tl, s))
			}
		}
		fmt.Fprintf(w, "  s%d -> s%d [%s];\n", e.From, e.To, dotEdgeAttr(e))
	}
	fmt.Fprintln(w, "}")
}

// writeDOTClusters writes the cluster of every node (only, with only >0)
// that has steps, and returns the steps it drew.
func writeDOTClusters(w io.Writer, tl *timeline, only node.ID) map[int]bool {
	keep := map[int]bool{}
	for _, id := range tl.nodes {
		if only != node.None && id != only {
			continue
		}
		if mine := tl.stepsOf(id); len(mine) > 0 {
			writeDOTCluster(w, tl, id, mine, keep)
		}
	}
	return keep
}

// stepsOf are the steps (1-based) of node id's own events, in order.
func (tl *timeline) stepsOf(id node.ID) []int {
	var mine []int
	for i := 1; i <= len(tl.steps); i++ {
		if tl.steps[i-1].node == id {
			mine = append(mine, i)
		}
	}
	return mine
}

// writeDOTCluster writes node id's cluster: a box per step of mine, in
// program order, each recorded in keep.
func writeDOTCluster(w io.Writer, tl *timeline, id node.ID, mine []int, keep map[int]bool) {
	fmt.Fprintf(w, "  subgraph cluster_n%d {\n    label=%s;\n", uint64(id), dotQuote(id.String()))
	for _, i := range mine {
		keep[i] = true
		fmt.Fprintf(w, "    %s;\n", dotBox(tl, i))
	}
	for k := 1; k < len(mine); k++ {
		fmt.Fprintf(w, "    s%d -> s%d [color=gray, arrowhead=none];\n", mine[k-1], mine[k])
	}
	fmt.Fprintln(w, "  }")
}

// dotBox is the DOT node statement of step i (without its ";").
func dotBox(tl *timeline, i int) string {
	return fmt.Sprintf("s%d [label=%s%s]", i, dotQuote(fmt.Sprintf("%d. %s", i, tl.steps[i-1].text)), dotStyle(tl, i))
}

// edgesTouching are the edges with an end among keep's steps, in order.
func edgesTouching(all []edge, keep map[int]bool) []edge {
	var edges []edge
	for _, e := range all {
		if keep[e.From] || keep[e.To] {
			edges = append(edges, e)
		}
	}
	return edges
}

// dotEdgeAttr is the attributes of an edge's DOT statement: its label,
// and the colour and style of its kind.
func dotEdgeAttr(e edge) string {
	switch {
	case e.Kind == "timer":
		return fmt.Sprintf("label=%s, style=dashed", dotQuote(e.Label))
	case e.Dropped:
		return fmt.Sprintf("label=%s, color=red, style=dotted", dotQuote(e.Label+" (dropped)"))
	case e.Kind == "refused":
		return fmt.Sprintf("label=%s, color=red, style=dotted", dotQuote(e.Label+" (refused)"))
	case e.Kind == "datagram":
		return fmt.Sprintf("label=%s, color=blue, style=dotted", dotQuote(e.Label))
	}
	return fmt.Sprintf("label=%s, color=blue", dotQuote(e.Label))
}

// dotShapes are the box shapes of the step kinds other than a box: a
// reset's octagon, a fault's diamond.
var dotShapes = map[string]string{
	"reset": ", shape=octagon", "down": ", shape=octagon", "up": ", shape=octagon",
	"break": ", shape=diamond", "drop-datagram": ", shape=diamond", "drop": ", shape=diamond", "refuse-send": ", shape=diamond",
}

// dotStyle is the extra attributes of step i's box.
func dotStyle(tl *timeline, i int) string {
	s := dotShapes[tl.steps[i-1].kind]
	if i == tl.critical {
		s += `, color=red, penwidth=2, xlabel="critical"`
	}
	return s
}

// dotQuote quotes s as a DOT string: backslashes and quotes escaped,
// control characters dropped.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < ' ' || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
