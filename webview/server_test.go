package webview_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/webview"
)

func testHandler(t *testing.T) http.Handler {
	t.Helper()
	h, err := webview.Handler([]webview.Document{
		{Name: "walk.json", Format: "crystalball-check/1", Head: []string{"randtree <5 nodes>"}, Trace: fakeTrace{},
			Predictions: []webview.Prediction{{Property: "ParentChildAgree", Kind: "liveness", Depth: 3}, {Property: "Linked", Kind: "safety", Report: "./run.json"}, {Property: "Unserved", Report: "gone.json"}}},
		{Name: "run.json", Format: "crystalball-emulate/1", Figures: []webview.Figure{{Title: "f", SVG: []byte(`<svg id="fig"></svg>`)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get requests path of h and returns the status and body.
func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestIndexListsDocumentsAndPredictions(t *testing.T) {
	code, body := get(t, testHandler(t), "/")
	if code != http.StatusOK {
		t.Fatalf("GET /: %d %s", code, body)
	}
	for _, want := range []string{`<a href="/doc/1">walk.json</a>`, `<a href="/doc/2">run.json</a>`, "<td>ParentChildAgree</td><td>liveness</td>", "randtree &lt;5 nodes&gt;",
		`<td><a href="/doc/2">Linked</a></td>`, "<td>Unserved</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %q:\n%s", want, body)
		}
	}
	if n := strings.Count(body, `<tr class="document">`); n != 2 {
		t.Errorf("index lists %d documents, want 2", n)
	}
}

func TestDocumentPages(t *testing.T) {
	h := testHandler(t)
	code, body := get(t, h, "/doc/1")
	if code != http.StatusOK || !strings.Contains(body, `<div id="stepper" data-doc="1">`) || !strings.Contains(body, `src="/doc/1/graph.svg"`) {
		t.Errorf("a trace's page: %d, want the stepper and the graph:\n%s", code, body)
	}
	code, body = get(t, h, "/doc/2")
	if code != http.StatusOK || strings.Contains(body, "stepper") || !strings.Contains(body, `<div class="figure"><svg id="fig"></svg></div>`) {
		t.Errorf("a run's page: %d, want its figure and no stepper:\n%s", code, body)
	}
	for _, p := range []string{"/doc/0", "/doc/3", "/doc/x", "/doc/2/graph.svg", "/api/doc/2/trace", "/nothing", "/live", "/static/index.html", "/static/"} {
		if code, _ := get(t, h, p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
}

func TestTraceAPI(t *testing.T) {
	h := testHandler(t)
	code, body := get(t, h, "/api/doc/1/trace")
	var info webview.TraceInfo
	if err := json.Unmarshal([]byte(body), &info); code != http.StatusOK || err != nil {
		t.Fatalf("trace: %d %v %s", code, err, body)
	}
	if len(info.Steps) != 3 || info.Critical != 2 || len(info.Live) != 2 || len(info.Edges) != 2 {
		t.Errorf("trace info %+v, want 3 steps, critical 2, 2 live steps, 2 edges", info)
	}
	code, body = get(t, h, "/api/doc/1/state?path=live&step=2")
	if code != http.StatusOK || body != `[{"node":"n1","fields":["step: 2"]},{"node":"n2","fields":["path: live"]}]`+"\n" {
		t.Errorf("live state at 2: %d %s", code, body)
	}
	cases := map[string]int{
		"/api/doc/1/state?step=3":           http.StatusOK,
		"/api/doc/1/state?step=4":           http.StatusNotFound,
		"/api/doc/1/state?path=live&step=3": http.StatusNotFound,
		"/api/doc/1/state?path=x&step=1":    http.StatusBadRequest,
		"/api/doc/1/state":                  http.StatusBadRequest,
	}
	for p, want := range cases {
		if code, body := get(t, h, p); code != want {
			t.Errorf("GET %s: %d %s, want %d", p, code, body, want)
		}
	}
}

func TestStaticFiles(t *testing.T) {
	h := testHandler(t)
	for p, want := range map[string]string{
		"/static/app.js":    `api + "/state?path="`,
		"/static/style.css": ".differs",
	} {
		if code, body := get(t, h, p); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, want a body with %q", p, code, want)
		}
	}
}

func TestHandlerRejectsDuplicateNames(t *testing.T) {
	_, err := webview.Handler([]webview.Document{{Name: "a"}, {Name: "a"}})
	if err == nil || !strings.Contains(err.Error(), `webview: document "a" given twice`) {
		t.Errorf("err %v, want the duplicate named", err)
	}
}

func TestLivePollsStatusRelatively(t *testing.T) {
	code, body := get(t, webview.Live(), "/ui")
	if code != http.StatusOK || !strings.Contains(body, `fetch("status"`) {
		t.Errorf("GET /ui: %d, want the page polling status", code)
	}
}
