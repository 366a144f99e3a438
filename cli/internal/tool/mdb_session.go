package tool

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/consequence"
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

// follows reports whether step i of tl is one a command shows: every
// step, or those involving the followed node.
func (d *mdb) follows(tl *timeline, i int) bool {
	return d.only == node.None || tl.involves(i, d.only)
}

// globalStateFields returns a node's fields in the global state g.
func globalStateFields(g *consequence.GlobalState) func(node.ID) []string {
	return func(id node.ID) []string { return nodeFields(g, id) }
}

// printShownDiffs prints the field-level diff of each shown node whose
// fields differ between x and y, and reports whether they all agreed.
func (d *mdb) printShownDiffs(x, y func(node.ID) []string) (same bool) {
	same = true
	for _, id := range d.shown() {
		a, b := x(id), y(id)
		if slicesEqual(a, b) {
			continue
		}
		same = false
		fmt.Fprintf(d.w, "  %v:\n", id)
		diffFields(d.w, "    ", a, b)
	}
	return same
}

// states prints every shown node's state after step n, field by field:
// an emulation trace's by re-running it, if its header says how.
func (d *mdb) states(n int) error {
	switch {
	case d.tl.rerunCfg != nil:
		return d.rerunStates(n)
	case d.tl.states == nil:
		d.hashStates(n)
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

// rerunStates is states on an emulation trace, by re-running it to step
// n (or the end of the event that wrote it).
func (d *mdb) rerunStates(n int) error {
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

// hashStates is states on a timeline without node states: each shown
// node's last state hash up to step n.
func (d *mdb) hashStates(n int) {
	fmt.Fprintln(d.w, noStates)
	for _, id := range d.shown() {
		if h, at := d.tl.hashAt(id, n); at > 0 {
			fmt.Fprintf(d.w, "  %v: state hash %s (after step %d)\n", id, h, at)
		} else {
			fmt.Fprintf(d.w, "  %v: no step yet\n", id)
		}
	}
}

// step moves the cursor by delta steps (of the followed node, if one is)
// and prints the step with the field changes it made.
func (d *mdb) step(delta int) error {
	i, err := d.stepTarget(delta)
	if err != nil {
		return err
	}
	d.cur = i
	d.where()
	if i > 0 && d.tl.states != nil {
		d.changes(i)
	}
	return nil
}

// stepTarget is the step delta steps from the cursor, counting only the
// followed node's (the start always counts); an error past either end.
func (d *mdb) stepTarget(delta int) (int, error) {
	i := d.cur + delta
	for ; i >= 0 && i <= len(d.tl.steps); i += delta {
		if i == 0 || d.follows(d.tl, i) {
			return i, nil
		}
	}
	what := "end"
	if delta < 0 {
		what = "start"
	}
	return 0, fmt.Errorf("at the %s of the path", what)
}

// changes prints the field changes step i made to the shown nodes.
func (d *mdb) changes(i int) {
	d.printShownDiffs(globalStateFields(d.tl.states[i-1]), globalStateFields(d.tl.states[i]))
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
		d.hashDiff(a, b)
		return nil
	}
	fmt.Fprintf(d.w, "diff of the states after step %d (-) and after step %d (+):\n", a, b)
	if d.printShownDiffs(globalStateFields(d.tl.states[a]), globalStateFields(d.tl.states[b])) {
		fmt.Fprintln(d.w, "  (no difference)")
	}
	return nil
}

// hashDiff is diff on a timeline without node states: the shown nodes
// whose state hash differs between steps a and b.
func (d *mdb) hashDiff(a, b int) {
	fmt.Fprintln(d.w, noStates)
	for _, id := range d.shown() {
		x, i := d.tl.hashAt(id, a)
		y, j := d.tl.hashAt(id, b)
		if x != y {
			fmt.Fprintf(d.w, "  %v: state hash %s (step %d) -> %s (step %d)\n", id, orNone(x), i, orNone(y), j)
		}
	}
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
	if d.printShownDiffs(func(id node.ID) []string { return x.fields[id] }, func(id node.ID) []string { return y.fields[id] }) {
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
	if d.printShownDiffs(globalStateFields(tl.states[k]), globalStateFields(tl.live.states[k])) {
		fmt.Fprintln(d.w, "  (the shown node states agree)")
	}
	d.printLiveRest(k)
	return nil
}

// printLiveRest prints the nearest live path's steps after step k, to
// its live state.
func (d *mdb) printLiveRest(k int) {
	live := d.tl.live
	fmt.Fprintf(d.w, "the live path goes on for %d steps to a live state:\n", len(live.steps)-k)
	for i := k + 1; i <= len(live.steps); i++ {
		if d.follows(live, i) {
			fmt.Fprintf(d.w, "  %3d. %s\n", i, live.steps[i-1].text)
		}
	}
}

// find lists the steps whose text matches re.
func (d *mdb) find(re *regexp.Regexp) {
	n := 0
	for i := 1; i <= len(d.tl.steps); i++ {
		if re.MatchString(d.tl.steps[i-1].text) && d.follows(d.tl, i) {
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
			if d.follows(tl, i) {
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
		if d.follows(tl, i) {
			d.listStep(i)
		}
	}
}

// listStep prints step i of listing with the shown nodes it changed, in
// full, and the crash it caused.
func (d *mdb) listStep(i int) {
	tl := d.tl
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

func orNone(h string) string {
	if h == "" {
		return "none"
	}
	return h
}
