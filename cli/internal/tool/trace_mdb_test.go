package tool

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of cli/testdata/trace")

// golden compares got with testdata/trace/name, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "trace", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (-update rewrites it):\n%s", name, firstDiff(string(want), got))
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var x, y string
		if i < len(w) {
			x = w[i]
		}
		if i < len(g) {
			y = g[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + x + "\n  got  " + y
		}
	}
	return "(equal)"
}

// The randtree walk check of the README: MaceMC's RandTree liveness bug
// (n3 resets, then takes the JoinReply to its old incarnation's Join in
// init and ignores it), C1 at step 18. The README's command takes the
// default 500 steps a walk; the tests' check takes 100 (--dmax): its
// suspect is the first 100 steps of the README's, with the same critical
// step and the same nearest live path (as at 150, 200 and 300 steps), and
// its critical-transition search, the check's whole cost, took 6.3 s of
// CPU under the race detector at 500 steps, 1.3 s at 150, 0.7 s at 100.
// TestCheckWalkReportIsReplayableLong (cli_long_test.go) runs the
// README's command. Its output is a pure function of the seed.
var (
	walkReportOnce sync.Once
	walkReportFile string
	walkReportOut  checkOutput
	walkReportErr  string
)

var walkCheckArgs = []string{"check", "--service", "randtree", "--nodes", "5", "--strategy", "walk", "--resets", "1", "--silent",
	"--weights", "reset=0.02,timer=0.1", "--seed", "7", "--dmax", "100", "--budget", "0", "--json"}

// walkReport runs the walk check once per test binary and returns its
// output file.
func walkReport(t *testing.T) (string, checkOutput) {
	t.Helper()
	walkReportOnce.Do(func() {
		code, stdout, stderr := runCLI(walkCheckArgs...)
		if code != exitOK {
			walkReportErr = "check: exit " + strconv.Itoa(code) + ": " + stderr
			return
		}
		if err := json.Unmarshal([]byte(stdout), &walkReportOut); err != nil {
			walkReportErr = err.Error()
			return
		}
		dir, err := sharedTempDir("trace-walk")
		if err != nil {
			walkReportErr = err.Error()
			return
		}
		walkReportFile = filepath.Join(dir, "walk.json")
		if err := os.WriteFile(walkReportFile, []byte(stdout), 0o644); err != nil {
			walkReportErr = err.Error()
		}
	})
	if walkReportErr != "" {
		t.Fatal(walkReportErr)
	}
	return walkReportFile, walkReportOut
}

// sharedDirs are the directories sharedTempDir made, removed by TestMain.
var (
	sharedDirsMu sync.Mutex
	sharedDirs   []string
)

// sharedTempDir makes a temporary directory for a result that several
// tests share (computed once per test binary, under a sync.Once): it
// outlives the test that happens to compute it, until TestMain removes it.
func sharedTempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	sharedDirsMu.Lock()
	defer sharedDirsMu.Unlock()
	sharedDirs = append(sharedDirs, dir)
	return dir, nil
}

func TestMain(m *testing.M) {
	if os.Getenv(asProgram) != "" {
		testProgram.Main() // a node process of a multi-process test (nodeBinary)
	}
	code := m.Run()
	for _, dir := range sharedDirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// TestCheckWalkReportIsReplayable: check --strategy walk --json carries
// the suspect as a replayable report (kind liveness, the failing property
// at its end) with its dead end — the critical step, 1-based, at the step
// the summary names, and the nearest live path as records — beside the
// old string fields; trace show replays it with the critical step marked
// and the dead-vs-live comparison. Before, trace show refused the file
// ("0 replayable violations").
func TestCheckWalkReportIsReplayable(t *testing.T) {
	file, out := walkReport(t)
	checkWalkReport(t, file, out, 100, "n5 timer recovery")
}

// checkWalkReport checks the walk check's report file, whose output is
// out, as TestCheckWalkReportIsReplayable describes: a suspect of steps
// steps, the last one last.
func checkWalkReport(t *testing.T, file string, out checkOutput, steps int, last string) {
	t.Helper()
	l := out.Liveness
	if l == nil || l.Report == nil || l.DeadEnd == nil {
		t.Fatalf("no replayable suspect: %+v", l)
	}
	if l.Verdict != "C1" || l.Critical != 17 || l.Action != "n3 deliver randtree.JoinReply from n4" || len(l.Suspect) != steps {
		t.Fatalf("liveness %s at %d (%s), %d steps; want C1 at 17 (n3 deliver randtree.JoinReply from n4), %d", l.Verdict, l.Critical, l.Action, len(l.Suspect), steps)
	}
	r, d := l.Report, l.DeadEnd
	if r.Kind != "liveness" || r.Property != "ParentChildAgree" || r.Error != "n4: child n3 has parent n5" || len(r.Path) != steps || r.Depth != steps {
		t.Fatalf("report %s %s %q, %d steps", r.Kind, r.Property, r.Error, len(r.Path))
	}
	if d.Verdict != "C1" || d.CriticalStep != 18 || len(d.LivePath) != len(l.LivePath) || len(d.LivePath) != 20 || r.Path[17].Text != l.Action {
		t.Fatalf("dead end %s at %d, live path %d records (%d strings)", d.Verdict, d.CriticalStep, len(d.LivePath), len(l.LivePath))
	}
	code, shown, stderr := runCLI("trace", "show", file)
	if code != exitOK {
		t.Fatalf("trace show: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"dead end (C1): after step 18",
		fmt.Sprintf("violation of ParentChildAgree (liveness) at depth %d: n4: child n3 has parent n5", steps),
		" 18. n3 deliver randtree.JoinReply from n4   <- critical transition",
		fmt.Sprintf("%d. %s", steps, last),
		"dead path vs nearest live path after step 18 (- dead, + live):\n  - n3 deliver randtree.JoinReply from n4\n  + n3 app randtree.JoinOverlay",
		"    - Status: init\n    + Status: joining",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("trace show lacks %q", want)
		}
	}
	// The comparison is printed once (it was printed twice, as a summary
	// and field by field).
	if n := strings.Count(shown, "nearest live path"); n != 1 {
		t.Errorf("trace show names the nearest live path %d times, want once", n)
	}
}

// TestTraceShowMdbGolden pins the Mdb views of the walk report: a node's
// state at the critical step (the default step), a field diff of two
// steps, the comparison with the nearest live path, the ladder diagram of
// one node's events.
func TestTraceShowMdbGolden(t *testing.T) {
	file, _ := walkReport(t)
	cases := []struct {
		name string
		args []string
	}{
		{"step-critical-n3.txt", []string{"--step", "critical", "--node", "n3"}},
		{"step-0.txt", []string{"--step", "0", "--node", "n1"}},
		{"diff-16-18.txt", []string{"--diff", "16,18"}},
		{"live.txt", []string{"--live"}},
		{"graph-n3.txt", []string{"--graph", "text", "--node", "n3"}},
	}
	for _, c := range cases {
		code, out, stderr := runCLI(append([]string{"trace", "show", file}, c.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		golden(t, c.name, out)
	}
}

// TestTraceDebugScript drives the interactive loop with a script: stepping
// (over the followed node's events), jumping, states, diffs, the live
// comparison, find; bad commands print an error and the loop goes on;
// end of input quits.
func TestTraceDebugScript(t *testing.T) {
	file, _ := walkReport(t)
	script := strings.Join([]string{
		"n", "p", "p", "node n3", "n", "n", "node all", "j 17", "next",
		"frobnicate", "j 101", "j -1", "j x", "diff 1", "node n9", "node zz", "graph png", "find (",
		"diff 17 18", "s", "find reset", "live", "w", "help", "",
	}, "\n")
	old := traceInput
	traceInput = strings.NewReader(script)
	defer func() { traceInput = old }()
	code, out, stderr := runCLI("trace", "debug", file, "--node", "n3")
	if code != exitOK {
		t.Fatalf("trace debug: exit %d: %s", code, stderr)
	}
	golden(t, "debug-session.txt", out)
	for _, want := range []string{
		"(mdb 18)  19. n3 app randtree.JoinOverlay", // starts at the critical step
		`error: unknown command "frobnicate"`,
		"error: step \"101\": want a number in 0..100",
		"error: node n9 is not one of the run's 5 nodes",
		"error: graph format \"png\": want text, dot or svg",
		"error: find: \"(\" is not a regular expression",
		"1 matching steps",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("session lacks %q", want)
		}
	}
	if !strings.HasSuffix(out, "(mdb 18) \n") {
		t.Errorf("the session does not end at EOF with a prompt: %q", out[max(0, len(out)-80):])
	}
}

// TestTraceDebugQuitAndLongLine: q ends the loop before the rest of the
// input; a line past maxCommandBytes is discarded with an error.
func TestTraceDebugQuitAndLongLine(t *testing.T) {
	file, _ := walkReport(t)
	old := traceInput
	defer func() { traceInput = old }()
	traceInput = strings.NewReader(strings.Repeat("x", 5*maxCommandBytes) + "\nn\nq\nn\n")
	code, out, stderr := runCLI("trace", "show", "-i", file, "--step", "0")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "longer than 1024 bytes") || !strings.Contains(out, "(mdb 0)   1. n5 app randtree.JoinOverlay") || strings.Contains(out, "(mdb 1)   2.") {
		t.Errorf("session:\n%s", out)
	}
}

// TestTraceShowBadMdbInput: bad steps, nodes, ranges and graph formats
// are one-line usage errors (exit 2).
func TestTraceShowBadMdbInput(t *testing.T) {
	file, _ := walkReport(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--step", "101"}, "--step: step \"101\": want a number in 0..100"},
		{[]string{"--step", "-2"}, "want a number in 0..100"},
		{[]string{"--step", "many"}, "want a number in 0..100, critical or end"},
		{[]string{"--node", "n6"}, "--node: node n6 is not one of the run's 5 nodes"},
		{[]string{"--node", "x"}, "--node: node \"x\": want a node ID"},
		{[]string{"--diff", "3"}, "--diff: range \"3\": want two steps A,B"},
		{[]string{"--diff", "3,999"}, "--diff: step \"999\""},
		{[]string{"--graph", "png"}, "--graph \"png\": want text, svg or dot"},
		{[]string{"--out", "x.dot"}, "--out needs --graph"},
		{[]string{"-i", "--live"}, "commands of the interactive loop"},
	} {
		expectUsageError(t, append([]string{"trace", "show", file}, c.args...), c.want)
	}
	expectUsageError(t, []string{"trace", "frob"}, "usage: crystalball trace show|debug")
}
