package webview_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// historyDoc is a path's history: n3's write acknowledged, then its read
// of the value before it; n4's read invoked before the history began and
// still open.
var historyDoc = webview.Document{Name: "stale.json", Format: "crystalball-check/1", History: &webview.History{
	Title:    "the path's history",
	Verdicts: []string{"Linearizable: history is not linearizable"},
	Clients:  []string{"n3", "n4"},
	Events:   5,
	Ops: []webview.HistoryOp{
		{Client: 0, Label: "Write{V:1} -> ok", Call: 0, Return: 1, When: "(0s–1ms)"},
		{Client: 0, Label: "Read{} -> Value{V:0} <&>", Call: 2, Return: 4},
		{Client: 1, Label: "Read{} -> ?", Call: -1, Return: -1},
	},
}}

func TestHistoryPage(t *testing.T) {
	h, err := webview.Handler([]webview.Document{historyDoc, {Name: "plain.json"}})
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, h, "/doc/1")
	for _, want := range []string{"<h2>Client history</h2>", "the path&#39;s history: 3 operations", "Linearizable: history is not linearizable", `src="/doc/1/history.svg"`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("history page: %d, lacks %q:\n%s", code, want, body)
		}
	}
	code, svg := get(t, h, "/doc/1/history.svg")
	if code != http.StatusOK || !strings.HasPrefix(svg, "<svg") || strings.Count(svg, "<rect ") != 4 ||
		!strings.Contains(svg, "Read{} -&gt; Value{V:0} &lt;&amp;&gt;") || !strings.Contains(svg, `stroke-dasharray`) {
		t.Errorf("history.svg: %d, want a background and three escaped bars, the open one dashed:\n%s", code, svg)
	}
	if code, _ := get(t, h, "/doc/2/history.svg"); code != http.StatusNotFound {
		t.Errorf("history.svg of a document without a history: %d, want 404", code)
	}
	if _, body := get(t, h, "/doc/2"); strings.Contains(body, "Client history") {
		t.Errorf("a document without a history shows one:\n%s", body)
	}
}
