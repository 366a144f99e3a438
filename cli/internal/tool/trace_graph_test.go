package tool

import (
	"bufio"
	"encoding/json"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// dotLine are the line forms writeGraphDOT writes.
var (
	dotNode  = regexp.MustCompile(`^ *s([0-9]+) \[label="((?:[^"\\]|\\.)*)"(?:, [a-z]+=(?:[a-z0-9]+|"[^"]*"))*\];$`)
	dotEdge  = regexp.MustCompile(`^ *s([0-9]+) -> s([0-9]+) \[(?:[a-z]+=(?:[a-z0-9]+|"(?:[^"\\]|\\.)*")(?:, )?)+\];$`)
	dotOther = regexp.MustCompile(`^(digraph events \{|  rankdir=TB;|  newrank=true;|  node \[shape=box, fontsize=10\];|  subgraph cluster_n[0-9]+ \{|    label="n[0-9]+";|  \}|\})$`)
)

// checkDOT parses a DOT event graph line by line: every line is one of
// the forms written, the braces balance, every node is declared once and
// every edge joins declared nodes, the causal edges (not the gray program
// order) go forward in time. It returns the nodes and the causal edges.
func checkDOT(t *testing.T, dot string) (nodes map[int]string, causal [][2]int) {
	t.Helper()
	nodes = map[int]string{}
	depth := 0
	type pending struct{ from, to int }
	var edges []pending
	sc := bufio.NewScanner(strings.NewReader(dot))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case dotOther.MatchString(line):
			depth += strings.Count(line, "{") - strings.Count(line, "}")
		case dotEdge.MatchString(line):
			m := dotEdge.FindStringSubmatch(line)
			a, _ := strconv.Atoi(m[1])
			b, _ := strconv.Atoi(m[2])
			edges = append(edges, pending{a, b})
			if !strings.Contains(line, "color=gray") {
				causal = append(causal, [2]int{a, b})
			}
		case dotNode.MatchString(line):
			m := dotNode.FindStringSubmatch(line)
			n, _ := strconv.Atoi(m[1])
			if _, dup := nodes[n]; dup {
				t.Errorf("node s%d declared twice", n)
			}
			nodes[n] = m[2]
		default:
			t.Fatalf("not a DOT line of the event graph: %q", line)
		}
		if depth < 0 {
			t.Fatalf("unbalanced braces at %q", line)
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced braces: depth %d at the end", depth)
	}
	for _, e := range edges {
		if _, ok := nodes[e.from]; !ok {
			t.Errorf("edge s%d -> s%d from an undeclared node", e.from, e.to)
		}
		if _, ok := nodes[e.to]; !ok {
			t.Errorf("edge s%d -> s%d to an undeclared node", e.from, e.to)
		}
		if e.from >= e.to {
			t.Errorf("edge s%d -> s%d goes back in time", e.from, e.to)
		}
	}
	if dotPath, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command(dotPath, "-Tsvg", "-o", os.DevNull)
		cmd.Stdin = strings.NewReader(dot)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("dot -Tsvg refuses the graph: %v\n%s", err, out)
		}
	}
	return nodes, causal
}

// TestTraceGraphDOT: the walk report's event graph as DOT parses, and
// holds MaceMC's causal chain of the RandTree bug — n3's Join (step 9)
// reaches n1 (13), n1 forwards it to n4 (16), n4's JoinReply reaches n3's
// new incarnation at the critical step (18, marked) — and the timer edge
// from the JoinReply that set n3's recovery timer (22) to its firing (28).
// --out writes the same graph to a file.
func TestTraceGraphDOT(t *testing.T) {
	file, _ := walkReport(t)
	code, dot, stderr := runCLI("trace", "show", file, "--graph", "dot")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	nodes, causal := checkDOT(t, dot)
	if len(nodes) != 100 {
		t.Errorf("%d nodes, want the 100 steps (nothing comes from the start)", len(nodes))
	}
	has := map[[2]int]bool{}
	for _, e := range causal {
		has[e] = true
	}
	for _, e := range [][2]int{{9, 13}, {13, 16}, {16, 18}, {22, 28}} {
		if !has[e] {
			t.Errorf("no causal edge s%d -> s%d", e[0], e[1])
		}
	}
	if !strings.Contains(dot, `s18 [label="18. n3 deliver randtree.JoinReply from n4", color=red, penwidth=2, xlabel="critical"];`) ||
		!strings.Contains(dot, `s17 [label="17. n3 reset silent", shape=octagon];`) ||
		!strings.Contains(dot, `s22 -> s28 [label="recovery", style=dashed];`) {
		t.Error("the critical step, the reset or the timer edge is not drawn as expected")
	}
	out := filepath.Join(t.TempDir(), "g.dot")
	code, shown, stderr := runCLI("trace", "show", file, "--graph", "dot", "--node", "n3", "--out", out)
	if code != exitOK || !strings.Contains(shown, "wrote the event graph (dot) to "+out) {
		t.Fatalf("--out: exit %d %s\n%s", code, stderr, shown)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	nodes, _ = checkDOT(t, string(b))
	if !strings.Contains(nodes[16], "n4 deliver randtree.Join from n1") {
		t.Errorf("n3's graph lacks the step that sent it the JoinReply: %q", nodes[16])
	}
}

// TestTraceShowEmulationTrace: trace show reads an emulation trace:
// stepping, the node filter, find, and the event graph from the sends and
// timers emulate --trace records — every delivery of a message has its
// send, every timer its setting, but for a few of nodes that left. Node
// states come from re-running the emulation the trace's header names,
// checked line by line against the file (an edited line is caught); a
// trace without the header shows state hashes only.
func TestTraceShowEmulationTrace(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.trace")
	code, _, stderr := runCLI("emulate", "--service", "randtree", "--nodes", "4", "--duration", "2m", "--churn", "2/m", "--seed", "3", "--trace", trace)
	if code != exitOK {
		t.Fatalf("emulate: exit %d: %s", code, stderr)
	}
	code, shown, stderr := runCLI("trace", "show", trace, "--node", "n3", "--step", "170")
	if code != exitOK {
		t.Fatalf("trace show: exit %d: %s", code, stderr)
	}
	if !strings.Contains(shown, "node states by re-running the emulation") || !strings.Contains(shown, "170. ") ||
		!strings.Contains(shown, "  n3:\n    live: true\n    state: joined") || !strings.Contains(shown, "    timer: recovery") {
		t.Errorf("trace show --step:\n%s", shown)
	}
	code, dot, stderr := runCLI("trace", "show", trace, "--graph", "dot")
	if code != exitOK {
		t.Fatalf("--graph dot: exit %d: %s", code, stderr)
	}
	nodes, causal := checkDOT(t, dot)
	caused := map[int]bool{}
	for _, e := range causal {
		caused[e[1]] = true
	}
	messages, linked := 0, 0
	for n, label := range nodes {
		if strings.Contains(label, " message randtree.") || strings.Contains(label, " timer ") {
			messages++
			if caused[n] {
				linked++
			}
		}
	}
	if messages == 0 || linked < messages*9/10 {
		t.Errorf("%d of %d deliveries and timers linked to their cause", linked, messages)
	}
	old := traceInput
	defer func() { traceInput = old }()
	traceInput = strings.NewReader("find timer recovery\nnode n2\nn\nn\ndiff 0 end\nlive\n")
	code, session, stderr := runCLI("trace", "debug", trace)
	if code != exitOK {
		t.Fatalf("trace debug: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"matching steps", "n2 init", "n2 app randtree.JoinOverlay", "diff of the states after step 0 (-) and after step 351 (+), re-run:\n  n2:\n", "    + Status: joined", "error: not a liveness report"} {
		if !strings.Contains(session, want) {
			t.Errorf("session lacks %q:\n%s", want, session)
		}
	}

	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines[50] = regexp.MustCompile(`hash=[0-9a-f]{32}`).ReplaceAllString(lines[50], "hash="+strings.Repeat("0", 32))
	edited := writeTemp(t, "edited.trace", []byte(strings.Join(lines, "")))
	if code, _, stderr := runCLI("trace", "show", edited, "--step", "100"); code != exitFailure || !strings.Contains(stderr, "the re-run diverges from the trace at step 50") {
		t.Errorf("an edited trace: exit %d, %s", code, stderr)
	}
	headless := writeTemp(t, "headless.trace", []byte(strings.Join(lines[1:], "")))
	code, shown, stderr = runCLI("trace", "show", headless, "--step", "20", "--node", "n4")
	if code != exitOK || !strings.Contains(shown, "node states are not in the trace") || !regexp.MustCompile(`n4: state hash [0-9a-f]{32} \(after step [0-9]+\)`).MatchString(shown) {
		t.Errorf("a trace without its header: exit %d %s\n%s", code, stderr, shown)
	}
	bad := writeTemp(t, "bad.trace", []byte("00:00:01.000000000 n1 init -> hash=00 sends=0\n00:00:02.000000000 zz init\n"))
	expectUsageError(t, []string{"trace", "show", bad}, "bad.trace:2: no node in")
	badHeader := writeTemp(t, "badheader.trace", []byte(traceHeaderPrefix+`["--frob"]`+"\n"))
	expectUsageError(t, []string{"trace", "show", badHeader}, "badheader.trace:1: the header's command line does not parse")
}

// TestTraceShowPredictionReport: the Mdb views work on a prediction report
// of emulate --mode debug (Chord's PredSelfImpliesSuccSelf, predicted from
// a snapshot): the last step's states, a DOT graph, a scripted session.
// The run is TestEmulateDeepOnlineDebuggingChord's (chordDebugRun, made
// once per test binary).
func TestTraceShowPredictionReport(t *testing.T) {
	stdout, _ := chordDebugRun(t)
	var out EmulateOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	p := figure10(out.Predictions)
	file := p.Report
	if file == "" {
		t.Fatalf("no %s predicted: %+v", chord.PredSelfImpliesSuccSelf, out.Predictions)
	}
	by := p.Node.String()
	code, shown, stderr := runCLI("trace", "show", file, "--step", "end", "--node", by)
	if code != exitOK || !strings.Contains(shown, "predicted by "+by) || !strings.Contains(shown, "  "+by+":\n") {
		t.Fatalf("--step end: exit %d %s\n%s", code, stderr, shown)
	}
	code, dot, stderr := runCLI("trace", "show", file, "--graph", "dot")
	if code != exitOK {
		t.Fatalf("--graph dot: exit %d %s", code, stderr)
	}
	checkDOT(t, dot)
	old := traceInput
	defer func() { traceInput = old }()
	traceInput = strings.NewReader("n\ndiff 0 end\ngraph\nlive\n")
	code, session, stderr := runCLI("trace", "debug", file)
	if code != exitOK || !strings.Contains(session, "(mdb 1) diff of the states after step 0 (-) and after step") || !strings.Contains(session, "error: not a liveness report") {
		t.Fatalf("session: exit %d %s\n%s", code, stderr, session)
	}
}
