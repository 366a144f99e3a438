package tool

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// serveGet requests path of h and returns the status and body.
func serveGet(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// walkHandler is the web view of the walk report (MaceMC's RandTree dead
// end, critical at step 18).
func walkHandler(t *testing.T) (http.Handler, checkOutput) {
	t.Helper()
	file, co := walkReport(t)
	cat, err := newCatalog(testProgram)
	if err != nil {
		t.Fatal(err)
	}
	h, n, err := serveHandler(cat, []string{file})
	if err != nil || n != 1 {
		t.Fatalf("serveHandler: %d documents, %v", n, err)
	}
	return h, co
}

func TestServeStepsThroughAWalkReport(t *testing.T) {
	h, co := walkHandler(t)
	code, body := serveGet(t, h, "/api/doc/1/trace")
	var info webview.TraceInfo
	if err := json.Unmarshal([]byte(body), &info); code != http.StatusOK || err != nil {
		t.Fatalf("trace: %d %v", code, err)
	}
	d := co.Liveness.DeadEnd
	if len(info.Steps) != len(co.Liveness.Report.Path) || info.Critical != 18 || d.CriticalStep != 18 || len(info.Live) != len(d.LivePath) {
		t.Fatalf("%d steps, critical %d, %d live steps; want %d, 18, %d", len(info.Steps), info.Critical, len(info.Live), len(co.Liveness.Report.Path), len(d.LivePath))
	}
	if got, want := info.Steps[17].Text, "n3 deliver randtree.JoinReply from n4"; got != want {
		t.Errorf("critical step %q, want %q", got, want)
	}
	dead, live := serveState(t, h, "dead", 18), serveState(t, h, "live", 18)
	if len(dead) != 5 || len(live) != 5 {
		t.Fatalf("%d dead and %d live node states, want 5 each", len(dead), len(live))
	}
	if strings.Join(dead[2].Fields, "\n") == strings.Join(live[2].Fields, "\n") {
		t.Errorf("n3 after the critical step is the same on both paths: %v", dead[2].Fields)
	}
	// The paths share their first 17 steps: every node agrees after them.
	dead, live = serveState(t, h, "dead", 17), serveState(t, h, "live", 17)
	for i := range dead {
		if strings.Join(dead[i].Fields, "\n") != strings.Join(live[i].Fields, "\n") {
			t.Errorf("%s differs between the paths after step 17, which they share", dead[i].Node)
		}
	}
	code, svg := serveGet(t, h, "/doc/1/graph.svg")
	if code != http.StatusOK || strings.Count(svg, `class="edge"`) != len(info.Edges) || len(info.Edges) == 0 || !strings.Contains(svg, "18. n3 deliver randtree.JoinReply from n4  ← critical transition") {
		t.Errorf("graph: %d, %d edges drawn of %d", code, strings.Count(svg, `class="edge"`), len(info.Edges))
	}
	if code, body := serveGet(t, h, "/"); code != http.StatusOK || !strings.Contains(body, "<td>ParentChildAgree</td><td>liveness</td>") {
		t.Errorf("index: %d, want the liveness violation listed:\n%s", code, body)
	}
}

// serveState gets the node states after step of path.
func serveState(t *testing.T, h http.Handler, path string, step int) []webview.NodeState {
	t.Helper()
	code, body := serveGet(t, h, "/api/doc/1/state?path="+path+"&step="+itoa(step))
	var out []webview.NodeState
	if err := json.Unmarshal([]byte(body), &out); code != http.StatusOK || err != nil {
		t.Fatalf("state %s %d: %d %v %s", path, step, code, err, body)
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestServePlotsAnExperimentResult(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bullet.json")
	doc := `{"format":"crystalball-experiment-bullet-overhead/1","without":{"download_s":{"sorted":[1,2,3]}},"with":{"download_s":{"sorted":[1.5,2.5,4]}}}`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, _ := newCatalog(testProgram)
	h, _, err := serveHandler(cat, []string{filepath.Dir(file)})
	if err != nil {
		t.Fatal(err)
	}
	code, body := serveGet(t, h, "/doc/1")
	// experiments.WriteCDFSVG's legend: the two runs' curves in one plot.
	if code != http.StatusOK || !strings.Contains(body, ">CDF of download_s</text>") || !strings.Contains(body, ">without</text>") || !strings.Contains(body, ">with</text>") {
		t.Errorf("experiment page: %d, want the CDF of both runs:\n%s", code, body)
	}
}

func TestServeBadPathsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"format":"something-else/1"}`), 0o644)
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello"), 0o644)
	for args, want := range map[string]string{
		"":                        "serve: no PATH",
		filepath.Join(dir, "nil"): "no such file or directory",
		empty:                     "a directory without a *.json file",
		other:                     `unknown report format "something-else/1"`,
		text:                      "not a JSON object",
	} {
		argv := []string{"serve", "--listen", "127.0.0.1:0"}
		if args != "" {
			argv = append(argv, args)
		}
		code, _, stderr := runCLI(argv...)
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("serve %s: exit %d, %q; want %d and %q", args, code, stderr, exitUsage, want)
		}
	}
}

func TestServeUntilStopsWhenCancelled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := webview.Handler(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveUntil(ctx, ln, h) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /: %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serveUntil: %v, want nil after the cancel", err)
	}
}

// An emulation trace opens in the stepper too: its node states come from
// re-running the emulation its header names, as 'trace show --step'.
func TestServeEmulationTraceReRunsForStates(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.trace")
	if code, _, stderr := runCLI("emulate", "--service", "randtree", "--nodes", "4", "--duration", "2m", "--churn", "2/m", "--seed", "3", "--trace", trace); code != exitOK {
		t.Fatalf("emulate: exit %d: %s", code, stderr)
	}
	cat, _ := newCatalog(testProgram)
	h, _, err := serveHandler(cat, []string{trace})
	if err != nil {
		t.Fatal(err)
	}
	_, body := serveGet(t, h, "/api/doc/1/trace")
	var info webview.TraceInfo
	if err := json.Unmarshal([]byte(body), &info); err != nil || !info.States || len(info.Steps) < 170 || len(info.Edges) == 0 {
		t.Fatalf("trace info: states %v, %d steps, %d edges, %v", info.States, len(info.Steps), len(info.Edges), err)
	}
	st := serveState(t, h, "dead", 170)
	if len(st) != 4 || st[2].Node != "n3" || len(st[2].Fields) < 2 || st[2].Fields[0] != "live: true" || !strings.HasPrefix(st[2].Fields[1], "state: joined") {
		t.Errorf("n3 after step 170: %+v", st)
	}
	if code, _ := serveGet(t, h, "/api/doc/1/state?path=live&step=1"); code != http.StatusNotFound {
		t.Errorf("the live path of an emulation trace: %d, want 404", code)
	}
}

// FuzzServeDocuments: whatever a file holds, serve reads it as documents
// or says why not, without a panic (its decoders are report's, bounded).
func FuzzServeDocuments(f *testing.F) {
	f.Add([]byte(`{"format":"crystalball-emulate/1","service":"randtree","predictions":[{"property":"P","kind":"safety","node":1,"happened":{"after_prediction_s":1}}]}`))
	f.Add([]byte(`{"format":"crystalball-experiment-x/1","runs":[{"seed":1,"gap_s":2},{"seed":2,"gap_s":3}],"a":{"sorted":[1,2]}}`))
	f.Add([]byte(`{"format":"crystalball-check/1","nodes":2,"target":"randtree","reports":[]}`))
	f.Add([]byte(`{"format":"crystalball-prediction/1"}`))
	f.Add([]byte("00:00:01.000000000 n1 init\n"))
	cat, err := newCatalog(testProgram)
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		file := filepath.Join(dir, "doc.json")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		docs, err := serveDocuments(cat, file)
		if err == nil && len(docs) == 0 {
			t.Fatal("no error and no document")
		}
	})
}

func TestServeListsAnEmulatedRunsPredictions(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.json")
	doc := `{"format":"crystalball-emulate/1","service":"randtree","nodes":5,"duration":"2m0s","seed":3,"predictors":[1],"predictions":[
	 {"property":"RootHasNoSiblings","kind":"safety","node":1,"first_predicted_s":8.9,"depth":2,"happened":{"after_prediction_s":1.5,"node":2},"report":"` + filepath.Join(dir, "run.json") + `"},
	 {"property":"ParentChildAgree","kind":"liveness","node":3,"first_predicted_s":20,"depth":7,"violated_before":true}]}`
	if err := os.WriteFile(run, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, _ := newCatalog(testProgram)
	h, _, err := serveHandler(cat, []string{run})
	if err != nil {
		t.Fatal(err)
	}
	_, body := serveGet(t, h, "/")
	for _, want := range []string{
		// the report a prediction names links to its document when served (here the run itself)
		`<tr class="prediction"><td><a href="/doc/1">RootHasNoSiblings</a></td><td>safety</td><td>n1</td><td>2</td><td>8.9 s into the run</td><td>happened 1.5 s later (n2)</td></tr>`,
		`<tr class="prediction"><td>ParentChildAgree</td><td>liveness</td><td>n3</td><td>7</td><td>20.0 s into the run</td><td>never happened after it (violated before)</td></tr>`,
		"randtree (), 5 nodes, 2m0s, churn 0/min, seed 3",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %q:\n%s", want, body)
		}
	}
}
