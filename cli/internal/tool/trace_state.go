package tool

import (
	"fmt"
	"io"
	"strings"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// maxChannelNodes bounds the nodes whose channels to a node are listed in
// its state (every sender is looked up, so the cost is quadratic in the
// node count); beyond it the state says the messages were not listed.
const maxChannelNodes = 256

// maxFieldBytes bounds one rendered field, so one huge value does not
// flood the terminal; a longer one is cut with a note of its length.
const maxFieldBytes = 4096

// nodeFields renders id's state in g one field per line, as Mdb prints a
// node: the service state's fields (exported or not, %+v each), its timers,
// its pending application calls, and the messages and datagrams in flight
// to it. The lines are "name: value" and sort in a stable order, so two
// states diff field by field.
func nodeFields(g *consequence.GlobalState, id node.ID) []string {
	st, _, ok := g.NodeState(id)
	if !ok {
		return []string{"(not in the state)"}
	}
	out := stateFields(st)
	for k, p := range g.Pending(id) {
		out = append(out, fmt.Sprintf("pending[%d]: %s %s", k, p.MessageType(), cut(fmt.Sprint(p))))
	}
	return append(out, inFlightTo(g, id)...)
}

// stateFields renders a node state: its summary (node.Summary: the
// service's String, or its exported fields on one line), the service
// state's fields, its timers by name.
func stateFields(st *node.State) []string {
	out := []string{"state: " + node.Summary(st.Service)}
	out = append(out, serviceFields(st.Service)...)
	for _, t := range st.Timers {
		out = append(out, "timer: "+t.Name)
	}
	return out
}

// envelopeField renders a message or datagram in flight to a node.
func envelopeField(e node.Envelope) string {
	what := "in-flight"
	if e.Datagram {
		what = "datagram"
	}
	if e.Msg == nil {
		return fmt.Sprintf("%s from %v: transport-error", what, e.From)
	}
	return fmt.Sprintf("%s from %v: %s %s", what, e.From, e.Msg.MessageType(), cut(fmt.Sprint(e.Msg)))
}

// serviceFields renders a service state's fields ("name: value", each
// node.Fields renders: exported or not, durations and IDs by their String
// methods); a state that is not a struct (or a pointer to one) is one
// "value" line.
func serviceFields(s node.Service) []string {
	fields := node.Fields(s)
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		out = append(out, f.Name+": "+cut(f.Value))
	}
	return out
}

// inFlightTo lists the messages, transport errors and datagrams in flight
// to id, by sender.
func inFlightTo(g *consequence.GlobalState, id node.ID) []string {
	nodes := g.Nodes()
	if len(nodes) > maxChannelNodes {
		return []string{fmt.Sprintf("in-flight: not listed (%d nodes, more than %d)", len(nodes), maxChannelNodes)}
	}
	var out []string
	for _, from := range nodes {
		for _, e := range g.InFlight(from, id) {
			out = append(out, envelopeField(e))
		}
		for _, e := range g.Datagrams(from, id) {
			out = append(out, envelopeField(e))
		}
	}
	return out
}

// cut bounds a rendered value to maxFieldBytes and one line.
func cut(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) <= maxFieldBytes {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:maxFieldBytes], len(s))
}

// printNodeState prints id's fields in g, indented under its name.
func printNodeState(w io.Writer, g *consequence.GlobalState, id node.ID) {
	fmt.Fprintf(w, "  %v:\n", id)
	for _, f := range nodeFields(g, id) {
		fmt.Fprintf(w, "    %s\n", f)
	}
}

// diffFields prints Mdb's field-level diff of two renderings of a node
// (nodeFields): "-" the field as it was, "+" as it is, unchanged fields
// left out. Fields are matched by name and occurrence (timers, pending
// calls and messages in flight repeat a name), so a field present on one
// side only prints on that side. It reports whether anything differed.
func diffFields(w io.Writer, indent string, a, b []string) bool {
	ka, kb := fieldKeys(a), fieldKeys(b)
	inB := make(map[string]string, len(b))
	for i, k := range kb {
		inB[k] = b[i]
	}
	inA := make(map[string]bool, len(a))
	changed := false
	for i, k := range ka {
		inA[k] = true
		if y, ok := inB[k]; ok && y == a[i] {
			continue
		}
		changed = true
		fmt.Fprintf(w, "%s- %s\n", indent, a[i])
		if y, ok := inB[k]; ok {
			fmt.Fprintf(w, "%s+ %s\n", indent, y)
		}
	}
	for i, k := range kb {
		if !inA[k] {
			changed = true
			fmt.Fprintf(w, "%s+ %s\n", indent, b[i])
		}
	}
	return changed
}

// fieldKeys names each rendered field by the text before its ": " and
// its occurrence among equal names ("timer#0", "timer#1"), except the
// repeated kinds, timers and messages, whose whole line is the key: a
// timer set or a message sent is an added line, not a changed one.
func fieldKeys(fields []string) []string {
	seen := map[string]int{}
	out := make([]string, len(fields))
	for i, f := range fields {
		name, _, _ := strings.Cut(f, ": ")
		if name == "timer" || strings.HasPrefix(name, "in-flight from") || strings.HasPrefix(name, "datagram from") || strings.HasPrefix(name, "pending[") {
			name = f
		}
		out[i] = fmt.Sprintf("%s#%d", name, seen[name])
		seen[name]++
	}
	return out
}
