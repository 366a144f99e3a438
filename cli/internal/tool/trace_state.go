package tool

import (
	"fmt"
	"io"
	"slices"
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
	changed := printChangedFields(w, indent, a, ka, inB)
	added := printAddedFields(w, indent, b, kb, ka)
	return changed || added
}

// printChangedFields prints the fields of a (keyed ka) that b (inB, by
// key) does not have as they are: "-" as it was and, if b has the field,
// "+" as it is. It reports whether it printed any.
func printChangedFields(w io.Writer, indent string, a, ka []string, inB map[string]string) bool {
	changed := false
	for i, k := range ka {
		y, ok := inB[k]
		if ok && y == a[i] {
			continue
		}
		changed = true
		fmt.Fprintf(w, "%s- %s\n", indent, a[i])
		if ok {
			fmt.Fprintf(w, "%s+ %s\n", indent, y)
		}
	}
	return changed
}

// printAddedFields prints, "+", the fields of b (keyed kb) whose key is
// not among a's (ka). It reports whether it printed any.
func printAddedFields(w io.Writer, indent string, b, kb, ka []string) bool {
	inA := make(map[string]bool, len(ka))
	for _, k := range ka {
		inA[k] = true
	}
	added := false
	for i, k := range kb {
		if !inA[k] {
			added = true
			fmt.Fprintf(w, "%s+ %s\n", indent, b[i])
		}
	}
	return added
}

// repeatedFieldPrefixes begin the names of the fields a node state
// repeats besides its timers: messages in flight and pending calls.
var repeatedFieldPrefixes = []string{"in-flight from", "datagram from", "pending["}

// isRepeatedField reports whether a field called name is of a repeated
// kind (a timer, a message, a pending call), keyed by its whole line.
func isRepeatedField(name string) bool {
	return name == "timer" || slices.ContainsFunc(repeatedFieldPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
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
		if isRepeatedField(name) {
			name = f
		}
		out[i] = fmt.Sprintf("%s#%d", name, seen[name])
		seen[name]++
	}
	return out
}
