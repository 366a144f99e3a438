package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// myTree is a service of a program's own: the paper's RandTree under another name,
// with no corrections, join call, summary or options of its own.
func myTree() Service {
	return Service{
		Name: "mytree",
		Spec: randtree.NewSpec(randtree.DefaultOptions()),
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
	}
}

func runWith(services []Service, args ...string) (code int, stdout, stderr string) {
	return runProgram(Program{Services: services}, args...)
}

// runProgram runs the command line args for p, check without its
// wall-time budget (withoutWallBudget).
func runProgram(p Program, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = p.Run(withoutWallBudget(args), &out, &errb)
	return code, out.String(), errb.String()
}

func TestMainRejectsInvalidServices(t *testing.T) {
	noNew := myTree()
	noNew.Spec.New = nil
	noWorkload := myTree()
	noWorkload.Workload = nil
	spaced := myTree()
	spaced.Name = "my tree"
	cases := []struct {
		services []Service
		want     string
	}{
		{nil, "no service given"},
		{[]Service{noNew}, `cli: service "mytree": node: service "randtree": Spec.New is required`},
		{[]Service{noWorkload}, "Workload is nil"},
		{[]Service{spaced}, `name "my tree"`},
		{[]Service{myTree(), myTree()}, `"mytree" is given twice`},
	}
	for _, c := range cases {
		code, stdout, stderr := runWith(c.services, "check")
		if code != exitFailure || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%d services: exit %d, stderr %q, want exit %d and one line with %q", len(c.services), code, stderr, exitFailure, c.want)
		}
	}
}

// A program's own service gets every subcommand; its reports replay in
// that program and name it, with the known services, in another.
func TestOwnServiceThroughMain(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	own := []Service{myTree()}
	code, stdout, _ := runWith(own, "help")
	if code != exitOK || strings.Contains(stdout, "experiment") || !strings.Contains(stdout, "node") {
		t.Errorf("help: exit %d, %q; want every command but experiment", code, stdout)
	}
	if code, _, stderr := runWith(own, "experiment", "randtree-churn"); code != exitUsage || !strings.Contains(stderr, `unknown command "experiment"`) {
		t.Errorf("experiment in a program without the built-in services: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runWith(own, "check", "--fix", "all"); code != exitUsage || !strings.Contains(stderr, "service mytree takes no corrections") {
		t.Errorf("--fix for a service without corrections: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runWith(own, "emulate", "--service", "randtree"); code != exitUsage || !strings.Contains(stderr, `unknown service "randtree" (known: mytree)`) {
		t.Errorf("a service the program does not serve: exit %d, %q", code, stderr)
	}
	code, stdout, stderr := runWith(own, "emulate", "--nodes", "4", "--duration", "2m", "--churn", "0")
	if code != exitOK || !strings.Contains(stdout, "mytree emulation: 4 nodes") || !strings.Contains(stdout, "final:     nodes=4") ||
		!strings.Contains(stdout, "options:   default") {
		t.Errorf("emulate (the default service is the only one): exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	// A connection break besides the silent reset: a violation comes
	// within 3,000 states (the reset alone took a search of 30,000).
	code, report, stderr := runWith(own, "check", "--nodes", "3", "--resets", "1", "--silent", "--breaks", "1", "--max-states", "3000", "--budget", "0", "--json")
	if code != exitOK || !strings.Contains(report, `"format":"crystalball-check/1","target":"mytree"`) {
		t.Fatalf("check --json: exit %d, stderr %q, stdout %.300s", code, stderr, report)
	}
	file := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(file, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report, `"reports":[`) {
		t.Fatalf("check found no violation of the paper's RandTree to replay: %.500s", report)
	}
	code, stdout, stderr = runWith(own, "trace", "show", file)
	if code != exitOK || !strings.HasPrefix(stdout, "mytree (default), 3 nodes") {
		t.Errorf("trace show in the program: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	code, _, stderr = runWith(testProgram.Services, "trace", "show", file)
	if code != exitUsage || !strings.Contains(stderr, `a report of service "mytree", which this program does not serve (known: bullet, chord, macetransport, pastry, paxos, randtree)`) {
		t.Errorf("trace show in another program: exit %d, %q", code, stderr)
	}
}

func TestTraceShowRejectsOtherFormats(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"future.json":   `{"format":"crystalball-check/2"}`,
		"notjson.json":  `report`,
		"snapshot.json": `{"format":"crystalball-snapshot/1"}`,
	} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI("trace", "show", file)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, %q", name, code, stderr)
		}
	}
}

// Configure's errors are usage errors that say which service refused.
func TestLookupWrapsConfigureErrors(t *testing.T) {
	s := myTree()
	s.Configure = func(fixes []string, nodes int) (Service, error) { return Service{}, errors.New("unknown fix \"x\"") }
	cat, err := newCatalog(Program{Services: []Service{s}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cat.lookup("mytree", []string{"x"}, 3)
	var ue usageError
	if !errors.As(err, &ue) || err.Error() != `service mytree: unknown fix "x"` {
		t.Errorf("lookup: %v", err)
	}
	s.Configure = func([]string, int) (Service, error) { return Service{Name: "mytree", Workload: s.Workload}, nil }
	cat, _ = newCatalog(Program{Services: []Service{s}})
	if _, err := cat.lookup("mytree", nil, 3); err == nil || errors.As(err, &ue) {
		t.Errorf("Configure without Spec.New: %v, want a programming error", err)
	}
}

// The optional fields default as Service documents.
func TestResolveDefaults(t *testing.T) {
	r := resolve("mytree", myTree())
	if got := r.join(3, []node.ID{1, 2}); len(got) != 1 || got[0].(randtree.JoinOverlay).Targets[0] != 1 {
		t.Errorf("join: %v, want the workload's calls", got)
	}
	v := fakeView{1, 2, 3}
	if got := r.summarize(v); len(got) != 1 || got[0] != (Figure{"nodes", 3}) {
		t.Errorf("summarize: %v", got)
	}
	if got := r.describe(v); got != "nodes=3" {
		t.Errorf("describe: %q", got)
	}
	if r.options != "default" || r.name != "mytree" {
		t.Errorf("options %q, name %q", r.options, r.name)
	}
}

// fakeView is a view of nodes without states.
type fakeView []node.ID

func (v fakeView) Nodes() []node.ID                    { return v }
func (v fakeView) Service(node.ID) node.Service        { return nil }
func (v fakeView) TimerScheduled(node.ID, string) bool { return false }

// A program's own service gets deep online debugging too: 'emulate --mode
// debug --reports DIR' writes its predictions as reports that name the
// service, and 'trace show' replays them in that program (from the
// snapshot each holds) and refuses them, naming the known services, in
// another. Five nodes for 12 s, rounds of 1,000 states without liveness
// walks, predict RandTree's bugs from the predictors' first snapshots
// (two distinct predictions; 13 nodes for 30 s at --mode debug's 50,000
// states and 32 walks predicted seven, for 7.4 s of CPU under the race
// detector, where this run takes 0.3 s).
func TestOwnServicePredictionReportsReplay(t *testing.T) {
	own := []Service{myTree()}
	dir := t.TempDir()
	code, stdout, stderr := runWith(own, "emulate", "--nodes", "5", "--duration", "12s", "--churn", "0",
		"--mode", "debug", "--steer-states", "1000", "--walks", "0", "--reports", dir, "--json")
	if code != exitOK {
		t.Fatalf("emulate --mode debug: exit %d: %s", code, stderr)
	}
	var out EmulateOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Service != "mytree" || len(out.Predictions) == 0 {
		t.Fatalf("service %q, %d predictions; want mytree's RandTree bugs predicted: %.400s", out.Service, len(out.Predictions), stdout)
	}
	report := out.Predictions[0].Report
	b, err := os.ReadFile(report)
	if err != nil || !regexp.MustCompile(`"service":\s*"mytree"`).Match(b) {
		t.Fatalf("report %s (%v) does not name its service: %.300s", report, err, b)
	}
	code, shown, stderr := runWith(own, "trace", "show", report)
	if code != exitOK || !strings.Contains(shown, "violation of "+out.Predictions[0].Property) {
		t.Errorf("trace show of a prediction in the program: exit %d, stderr %q, stdout:\n%s", code, stderr, shown)
	}
	code, _, stderr = runWith(testProgram.Services, "trace", "show", report)
	if code != exitUsage || !strings.Contains(stderr, `service "mytree", which this program does not serve`) {
		t.Errorf("trace show of the prediction in another program: exit %d, %q", code, stderr)
	}
}

// TestServiceNameDefaultsToSpecName: a Service without a Name is served
// under its Spec's (one name for one service); Name still renames it.
func TestServiceNameDefaultsToSpecName(t *testing.T) {
	unnamed := myTree()
	unnamed.Name = ""
	code, stdout, stderr := runWith([]Service{unnamed}, "emulate", "--service", "randtree", "--nodes", "3", "--duration", "10s", "--churn", "0", "--json")
	if code != exitOK || !strings.Contains(stdout, `"service":"randtree"`) {
		t.Errorf("unnamed service under its spec's name: exit %d: %s%s", code, stdout, stderr)
	}
	code, _, stderr = runWith([]Service{unnamed}, "emulate", "--service", "mytree")
	if code != exitUsage || !strings.Contains(stderr, `unknown service "mytree" (known: randtree)`) {
		t.Errorf("the spec's name is its only name: exit %d: %s", code, stderr)
	}
	code, _, stderr = runWith([]Service{myTree()}, "emulate", "--service", "mytree", "--nodes", "3", "--duration", "10s", "--churn", "0")
	if code != exitOK {
		t.Errorf("a Name renames: exit %d: %s", code, stderr)
	}
}
