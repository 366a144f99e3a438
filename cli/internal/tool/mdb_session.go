package tool

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// mdb is a debugging session on a timeline: MaceMC's Mdb (§5) — a cursor
// on a step, an optional node to follow, and the commands that print
// states, diffs, the live-path comparison and the event graph.
type mdb struct {
	tl *timeline
	w  io.Writer
	// cur is the step the cursor is on (0: the start state).
	cur int
	// only is the node followed (node.None: every node).
	only node.ID
}

// noStates is what a command that needs node states says on a timeline
// without them.
const noStates = "node states are not in an emulation trace (it records each step's state hash); replay a check or prediction report for them"

// parseStep parses a step argument: a number in 0..len(steps),
// "critical" (a liveness report's critical step) or "end".
func (d *mdb) parseStep(s string) (int, error) {
	switch s {
	case "critical":
		if d.tl.critical == 0 {
			return 0, fmt.Errorf("step %q: not a liveness report with a critical transition", s)
		}
		return d.tl.critical, nil
	case "end":
		return len(d.tl.steps), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > len(d.tl.steps) {
		return 0, fmt.Errorf("step %s: want a number in 0..%d, critical or end", quoteShort(s), len(d.tl.steps))
	}
	return n, nil
}

// parseNode parses a node argument: one of the run's nodes, or "all".
func (d *mdb) parseNode(s string) (node.ID, error) {
	if s == "all" {
		return node.None, nil
	}
	id, err := node.ParseID(s)
	if err != nil {
		return node.None, fmt.Errorf("node %s: want a node ID such as n3, or all", quoteShort(s))
	}
	if !d.tl.hasNode(id) {
		return node.None, fmt.Errorf("node %v is not one of the run's %d nodes", id, len(d.tl.nodes))
	}
	return id, nil
}

// parseRange parses "A,B" (or "A B" split by the caller) into two steps.
func (d *mdb) parseRange(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("range %s: want two steps A,B", quoteShort(s))
	}
	x, err := d.parseStep(strings.TrimSpace(a))
	if err != nil {
		return 0, 0, err
	}
	y, err := d.parseStep(strings.TrimSpace(b))
	if err != nil {
		return 0, 0, err
	}
	return x, y, nil
}

// quoteShort quotes at most 40 bytes of untrusted input for an error.
func quoteShort(s string) string { return quoteN(s, 40) }

// quoteN quotes at most n bytes of s.
func quoteN(s string, n int) string {
	if len(s) > n {
		return strconv.Quote(s[:n]) + "..."
	}
	return strconv.Quote(s)
}

// shown lists the nodes a command prints: the followed one, or all.
func (d *mdb) shown() []node.ID {
	if d.only != node.None {
		return []node.ID{d.only}
	}
	return d.tl.nodes
}

// prepare re-runs an emulation trace to step n ahead of printing, so that
// a re-run that fails prints its error alone.
func (d *mdb) prepare(n int) error {
	if d.tl.rerunCfg == nil {
		return nil
	}
	_, err := d.tl.rerun(n)
	return err
}

// where prints the step the cursor is on.
func (d *mdb) where() {
	if d.cur == 0 {
		fmt.Fprintf(d.w, "  0. start (%d steps)\n", len(d.tl.steps))
		return
	}
	fmt.Fprintln(d.w, d.tl.stepLine(d.cur))
}

// states prints every shown node's state after step n, field by field:
// an emulation trace's by re-running it, if its header says how.
func (d *mdb) states(n int) error {
	if d.tl.rerunCfg != nil {
		v, err := d.tl.rerun(n)
		if err != nil {
			return err
		}
		if v.step != n {
			fmt.Fprintf(d.w, "(the re-run's event wrote steps up to %d: the states are after it)\n", v.step)
		}
		for _, id := range d.shown() {
			fmt.Fprintf(d.w, "  %v:\n", id)
			for _, f := range v.fields[id] {
				fmt.Fprintf(d.w, "    %s\n", f)
			}
		}
		return nil
	}
	if d.tl.states == nil {
		fmt.Fprintln(d.w, noStates)
		for _, id := range d.shown() {
			if h, at := d.tl.hashAt(id, n); at > 0 {
				fmt.Fprintf(d.w, "  %v: state hash %s (after step %d)\n", id, h, at)
			} else {
				fmt.Fprintf(d.w, "  %v: no step yet\n", id)
			}
		}
		return nil
	}
	g := d.tl.states[n]
	for _, id := range d.shown() {
		printNodeState(d.w, g, id)
	}
	if c := g.Crash(); c != nil {
		fmt.Fprintf(d.w, "  crash: %v\n", c)
	}
	return nil
}

// step moves the cursor by delta steps (of the followed node, if one is)
// and prints the step with the field changes it made.
func (d *mdb) step(delta int) error {
	i := d.cur
	for {
		i += delta
		if i < 0 || i > len(d.tl.steps) {
			what := "end"
			if delta < 0 {
				what = "start"
			}
			return fmt.Errorf("at the %s of the path", what)
		}
		if i == 0 || d.only == node.None || d.tl.involves(i, d.only) {
			break
		}
	}
	d.cur = i
	d.where()
	if i > 0 && d.tl.states != nil {
		d.changes(i)
	}
	return nil
}

// changes prints the field changes step i made to the shown nodes.
func (d *mdb) changes(i int) {
	before, after := d.tl.states[i-1], d.tl.states[i]
	for _, id := range d.shown() {
		a, b := nodeFields(before, id), nodeFields(after, id)
		if !slicesEqual(a, b) {
			fmt.Fprintf(d.w, "  %v:\n", id)
			diffFields(d.w, "    ", a, b)
		}
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// diff prints the field-level diff of the shown nodes' states between
// steps a and b (Mdb's diff of two steps).
func (d *mdb) diff(a, b int) error {
	if d.tl.rerunCfg != nil {
		return d.rerunDiff(a, b)
	}
	if d.tl.states == nil {
		fmt.Fprintln(d.w, noStates)
		for _, id := range d.shown() {
			x, i := d.tl.hashAt(id, a)
			y, j := d.tl.hashAt(id, b)
			if x != y {
				fmt.Fprintf(d.w, "  %v: state hash %s (step %d) -> %s (step %d)\n", id, orNone(x), i, orNone(y), j)
			}
		}
		return nil
	}
	fmt.Fprintf(d.w, "diff of the states after step %d (-) and after step %d (+):\n", a, b)
	same := true
	for _, id := range d.shown() {
		x, y := nodeFields(d.tl.states[a], id), nodeFields(d.tl.states[b], id)
		if slicesEqual(x, y) {
			continue
		}
		same = false
		fmt.Fprintf(d.w, "  %v:\n", id)
		diffFields(d.w, "    ", x, y)
	}
	if same {
		fmt.Fprintln(d.w, "  (no difference)")
	}
	return nil
}

// rerunDiff is diff on an emulation trace, by re-running it to both
// steps.
func (d *mdb) rerunDiff(a, b int) error {
	x, err := d.tl.rerun(a)
	if err != nil {
		return err
	}
	y, err := d.tl.rerun(b)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "diff of the states after step %d (-) and after step %d (+), re-run:\n", x.step, y.step)
	same := true
	for _, id := range d.shown() {
		if slicesEqual(x.fields[id], y.fields[id]) {
			continue
		}
		same = false
		fmt.Fprintf(d.w, "  %v:\n", id)
		diffFields(d.w, "    ", x.fields[id], y.fields[id])
	}
	if same {
		fmt.Fprintln(d.w, "  (no difference)")
	}
	return nil
}

// live prints MaceMC's Figure 3 comparison: the dead path against the
// nearest live path after the critical step, field by field.
func (d *mdb) live() error {
	tl := d.tl
	if tl.dead == nil || tl.critical == 0 {
		return fmt.Errorf("not a liveness report with a critical transition")
	}
	if tl.live == nil {
		return fmt.Errorf("the report has no nearest live path")
	}
	k := tl.critical
	if len(tl.live.steps) < k {
		fmt.Fprintf(d.w, "nearest live path: the first %d steps; the state they reach is live (every liveness property holds), and step %d leaves it for good\n", len(tl.live.steps), k)
		return nil
	}
	fmt.Fprintf(d.w, "dead path vs nearest live path after step %d (- dead, + live):\n", k)
	fmt.Fprintf(d.w, "  - %s\n  + %s\n", tl.steps[k-1].text, tl.live.steps[k-1].text)
	same := true
	for _, id := range d.shown() {
		x, y := nodeFields(tl.states[k], id), nodeFields(tl.live.states[k], id)
		if slicesEqual(x, y) {
			continue
		}
		same = false
		fmt.Fprintf(d.w, "  %v:\n", id)
		diffFields(d.w, "    ", x, y)
	}
	if same {
		fmt.Fprintln(d.w, "  (the shown node states agree)")
	}
	fmt.Fprintf(d.w, "the live path goes on for %d steps to a live state:\n", len(tl.live.steps)-k)
	for i := k + 1; i <= len(tl.live.steps); i++ {
		if d.only == node.None || tl.live.involves(i, d.only) {
			fmt.Fprintf(d.w, "  %3d. %s\n", i, tl.live.steps[i-1].text)
		}
	}
	return nil
}

// find lists the steps whose text matches re.
func (d *mdb) find(re *regexp.Regexp) {
	n := 0
	for i := 1; i <= len(d.tl.steps); i++ {
		if re.MatchString(d.tl.steps[i-1].text) && (d.only == node.None || d.tl.involves(i, d.only)) {
			fmt.Fprintln(d.w, d.tl.stepLine(i))
			n++
		}
	}
	fmt.Fprintf(d.w, "%d matching steps\n", n)
}

// graph writes the event graph in format ("text" or "dot") to w.
func (d *mdb) graph(w io.Writer, format string) error {
	g, err := d.tl.graphOf()
	if err != nil {
		return err
	}
	switch format {
	case "text":
		writeGraphText(w, d.tl, g, d.only)
	case "dot":
		writeGraphDOT(w, d.tl, g, d.only)
	case "svg":
		return writeGraphSVG(w, d.tl)
	default:
		return fmt.Errorf("graph format %s: want text, dot or svg", quoteShort(format))
	}
	return nil
}

// listing prints the path (the steps of the followed node only, if one
// is), each step with the states it changed, in full: today's 'trace
// show' output.
func (d *mdb) listing() {
	tl := d.tl
	if tl.states == nil {
		for i := 1; i <= len(tl.steps); i++ {
			if d.only == node.None || tl.involves(i, d.only) {
				fmt.Fprintln(d.w, tl.stepLine(i))
			}
		}
		return
	}
	fmt.Fprintln(d.w, "start:")
	for _, id := range d.shown() {
		fmt.Fprintf(d.w, "    %s\n", describeNode(tl.states[0], id))
	}
	for i := 1; i <= len(tl.steps); i++ {
		if d.only != node.None && !tl.involves(i, d.only) {
			continue
		}
		fmt.Fprintln(d.w, tl.stepLine(i))
		prev, next := tl.states[i-1], tl.states[i]
		for _, id := range d.shown() {
			if before, after := describeNode(prev, id), describeNode(next, id); before != after {
				fmt.Fprintf(d.w, "    %s\n", after)
			}
		}
		if c := next.Crash(); c != nil {
			fmt.Fprintf(d.w, "    crash: %v\n", c)
		}
	}
}

func orNone(h string) string {
	if h == "" {
		return "none"
	}
	return h
}
