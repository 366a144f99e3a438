package tool

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// stepMark is the one-letter mark of a step's kind in the ladder diagram:
// what happened to the node of its column.
func stepMark(s tstep) string {
	switch s.kind {
	case "reset", "down", "up":
		return "R"
	case "break":
		return "B"
	case "drop-datagram", "drop", "refuse-send":
		return "x"
	case "timer":
		return "T"
	case "app":
		return "A"
	}
	return "*"
}

// writeGraphText writes the event graph as a ladder diagram: one column
// per node (only, with only >0, its events), one row per step, the step's
// causes ("<- 3 message randtree.Join") and effects ("-> 5 6").
func writeGraphText(w io.Writer, tl *timeline, g *eventGraph, only node.ID) {
	cols := tl.nodes
	if only != node.None {
		cols = []node.ID{only}
	}
	width := 4
	for _, id := range cols {
		width = max(width, len(id.String())+1)
	}
	var hdr strings.Builder
	hdr.WriteString("step ")
	for _, id := range cols {
		fmt.Fprintf(&hdr, "%-*s", width, id.String())
	}
	fmt.Fprintln(w, strings.TrimRight(hdr.String(), " "))
	in, out := g.byStep()
	for i := 1; i <= len(tl.steps); i++ {
		if only != node.None && !tl.involves(i, only) {
			continue
		}
		s := tl.steps[i-1]
		var row strings.Builder
		fmt.Fprintf(&row, "%4d ", i)
		for _, id := range cols {
			cell := "|"
			if id == s.node || (s.kind == "break" && id == s.peer) {
				cell = stepMark(s)
			}
			fmt.Fprintf(&row, "%-*s", width, cell)
		}
		row.WriteString(s.text)
		for _, e := range in[i] {
			fmt.Fprintf(&row, "  <- %s", causeText(e))
		}
		if len(out[i]) > 0 {
			row.WriteString("  ->")
			for _, e := range out[i] {
				fmt.Fprintf(&row, " %d", e.To)
			}
		}
		if n := g.lost[i]; n > 0 {
			fmt.Fprintf(&row, "  (cut %d in flight)", n)
		}
		if i == tl.critical {
			row.WriteString("  [critical transition]")
		}
		fmt.Fprintln(w, row.String())
	}
	fmt.Fprintln(w, `(* delivery, T timer, A application call, R reset, B break, x drop; "<- 16 message": the step that sent the message it delivers, or set the timer it fires; "-> 20 21": the steps that deliver what it sent or fire the timers it set)`)
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
	keep := map[int]bool{}
	for _, id := range tl.nodes {
		if only != node.None && id != only {
			continue
		}
		var mine []int
		for i := 1; i <= len(tl.steps); i++ {
			if tl.steps[i-1].node == id {
				mine = append(mine, i)
			}
		}
		if len(mine) == 0 {
			continue
		}
		fmt.Fprintf(w, "  subgraph cluster_n%d {\n    label=%s;\n", uint64(id), dotQuote(id.String()))
		for _, i := range mine {
			keep[i] = true
			fmt.Fprintf(w, "    s%d [label=%s%s];\n", i, dotQuote(fmt.Sprintf("%d. %s", i, tl.steps[i-1].text)), dotStyle(tl, i))
		}
		for k := 1; k < len(mine); k++ {
			fmt.Fprintf(w, "    s%d -> s%d [color=gray, arrowhead=none];\n", mine[k-1], mine[k])
		}
		fmt.Fprintln(w, "  }")
	}
	var edges []edge
	for _, e := range g.edges {
		if keep[e.From] || keep[e.To] {
			edges = append(edges, e)
		}
	}
	if slices.ContainsFunc(edges, func(e edge) bool { return e.From == 0 }) {
		keep[0] = true // what was in flight or set at the start
		fmt.Fprintln(w, `  s0 [label="start", shape=ellipse];`)
	}
	for _, e := range edges {
		for _, s := range []int{e.From, e.To} {
			if !keep[s] { // the other end of an edge of the chosen node
				keep[s] = true
				fmt.Fprintf(w, "  s%d [label=%s%s];\n", s, dotQuote(fmt.Sprintf("%d. %s", s, tl.steps[s-1].text)), dotStyle(tl, s))
			}
		}
		attr := fmt.Sprintf("label=%s, color=blue", dotQuote(e.Label))
		switch {
		case e.Kind == "timer":
			attr = fmt.Sprintf("label=%s, style=dashed", dotQuote(e.Label))
		case e.Dropped:
			attr = fmt.Sprintf("label=%s, color=red, style=dotted", dotQuote(e.Label+" (dropped)"))
		case e.Kind == "refused":
			attr = fmt.Sprintf("label=%s, color=red, style=dotted", dotQuote(e.Label+" (refused)"))
		case e.Kind == "datagram":
			attr = fmt.Sprintf("label=%s, color=blue, style=dotted", dotQuote(e.Label))
		}
		fmt.Fprintf(w, "  s%d -> s%d [%s];\n", e.From, e.To, attr)
	}
	fmt.Fprintln(w, "}")
}

// dotStyle is the extra attributes of step i's box.
func dotStyle(tl *timeline, i int) string {
	var s string
	switch tl.steps[i-1].kind {
	case "reset", "down", "up":
		s = ", shape=octagon"
	case "break", "drop-datagram", "drop", "refuse-send":
		s = ", shape=diamond"
	}
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
