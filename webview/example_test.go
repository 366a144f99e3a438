package webview_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// A program that embeds crystalball can serve its own documents: here an
// emulated run's one prediction and an experiment's bar chart (a stepper
// needs a Trace: 'crystalball serve' adapts its replay of a report).
func ExampleHandler() {
	figs, err := webview.Figures([]byte(`{"runs":[{"seed":1,"rounds":12},{"seed":2,"rounds":9}]}`), nil)
	if err != nil {
		panic(err)
	}
	h, err := webview.Handler([]webview.Document{
		{Name: "run.json", Format: "crystalball-emulate/1",
			Predictions: []webview.Prediction{{Property: "ParentChildAgree", Kind: "liveness", Node: "n3", Depth: 4, At: "12.0 s into the run"}}},
		{Name: "churn.json", Format: "crystalball-experiment-randtree-churn/1", Figures: figs},
	})
	if err != nil {
		panic(err)
	}
	// An http.Server would serve h (crystalball serve listens on
	// 127.0.0.1:8070); a recorder shows what it answers.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), "<td>ParentChildAgree</td><td>liveness</td><td>n3</td>"))
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/doc/2", nil))
	fmt.Println(figs[0].Title, strings.Count(rec.Body.String(), `<rect class="bar"`))
	// Output:
	// 200 true
	// rounds by run 2
}
