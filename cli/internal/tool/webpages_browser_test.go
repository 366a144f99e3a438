//go:build browser

package tool

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// pageWidths are the window widths every page must fit, without a
// horizontal scroll bar: a laptop's to a desktop's.
var pageWidths = []int64{1024, 1280, 1600}

// screenshotDir is where the browser tests leave their screenshots (CI
// keeps bin/ as its artifacts): bin/webtest at the repository's root.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	out := filepath.Join(dir, "bin", "webtest")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// fits checks at each width that the page shown has no horizontal
// overflow, and saves a screenshot of it as bin/webtest/NAME-WIDTH.png.
func fits(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := screenshotDir(t)
	for _, w := range pageWidths {
		do(t, ctx, chromedp.EmulateViewport(w, 900))
		over := evaluate[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`)
		if over > 0 {
			wide := evaluate[string](t, ctx, `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 || e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === "visible").slice(0, 3).map((e) => e.tagName + "." + e.getAttribute("class") + "#" + e.id + " " + Math.round(e.getBoundingClientRect().right)).join(", ")`)
			t.Errorf("%s at %d px: %d px of horizontal overflow (widest: %s)", name, w, over, wide)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s: screenshot: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, w)), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// linksResolve fetches every link of the page shown and requires each to
// answer 200.
func linksResolve(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
	  const out = [];
	  for (const a of document.querySelectorAll("a[href]")) {
	    const r = await fetch(a.href);
	    if (r.status !== 200) out.push(a.getAttribute("href") + " " + r.status);
	  }
	  return out.join("; ");
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: following the links: %v", name, err)
	}
	if bad != "" {
		t.Errorf("%s: links that do not resolve: %s", name, bad)
	}
}

// firstHourProgram serves the papers' services and the stamp service.
func firstHourProgram() Program {
	p := testProgram
	p.Services = append(append([]Service(nil), testProgram.Services...), stampService(false))
	return p
}

// The index, a replayed report's stepper, an emulated run's predictions
// linked to their reports, an experiment's page and a directory's bad
// file fit the window at 1,024 to 1,600 px; the experiment's headline
// stands beside the paper's; the stepper names its columns; every link
// resolves.
func TestBrowserPagesFitAndLinksResolve(t *testing.T) {
	dir := stampServeDir(t)
	walk, _ := walkReport(t)
	os.WriteFile(filepath.Join(dir, "reports", "broken.json"), []byte(`{"format":"crystalball-check/1",`), 0o644)
	exp := filepath.Join(dir, "paxos.json")
	os.WriteFile(exp, []byte(`{"format":"crystalball-experiment-paxos/1","runs":10,
	 "headline":{"figure":"runs in which CrystalBall avoided the violation (by steering, by the immediate check)","measured":"10 of 10 (100%): 10 by steering, 0 by the check; 0 violated","paper":"98%: 87% by steering, 11% by the check; 2% violated (§5.4.2, bug1)"},
	 "charts":[{"title":"How the violation was avoided in 10 runs","kind":"bars","y":"runs","labels":["by steering","by the check","violated"],"values":[10,0,0]},
	           {"title":"Runs violated, by configuration","kind":"bars","y":"runs","labels":["without","check alone","steering+check"],"values":[10,10,0]}]}`), 0o644)
	cat, err := newCatalog(firstHourProgram())
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := serveHandler(cat, []string{walk, filepath.Join(dir, "run.json"), filepath.Join(dir, "reports"), exp})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := browser(t)

	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(`#documents`))
	if n := evaluate[int](t, ctx, `document.querySelectorAll("tr.error-row").length`); n != 1 {
		t.Errorf("%d error rows, want the broken file's", n)
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll("tr.prediction a").length`); n == 0 {
		t.Error("the emulated run's prediction does not link to its report")
	}
	fits(t, ctx, "index")
	linksResolve(t, ctx, "index")

	do(t, ctx, chromedp.Navigate(srv.URL+"/doc/1#step=18"), chromedp.WaitVisible(`#stepper[data-shown="18"]`))
	if got := text(t, ctx, `#dead-title`); got != "dead path" {
		t.Errorf("the path's column is titled %q, want dead path", got)
	}
	if n := evaluate[int](t, ctx, `[...document.querySelectorAll("#states .node h5")].filter((h) => h.textContent === "dead path" || h.textContent === "nearest live path").length`); n != 10 {
		t.Errorf("%d state columns titled dead path / nearest live path, want 10 (5 nodes, 2 each)", n)
	}
	fits(t, ctx, "stepper")
	linksResolve(t, ctx, "stepper")

	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(`#documents`))
	href := evaluate[string](t, ctx, `[...document.querySelectorAll("tr.document a")].find((a) => a.textContent.endsWith("paxos.json")).getAttribute("href")`)
	do(t, ctx, chromedp.Navigate(srv.URL+href), chromedp.WaitVisible(`#headline`))
	headline := text(t, ctx, `#headline`)
	for _, want := range []string{"10 of 10 (100%)", "98%: 87% by steering"} {
		if !strings.Contains(headline, want) {
			t.Errorf("headline %q lacks %q", headline, want)
		}
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll(".figure svg").length`); n != 2 {
		t.Errorf("%d charts, want the 2 declared", n)
	}
	fits(t, ctx, "experiment")
	linksResolve(t, ctx, "experiment")
}

// A live node's /ui page fits the window with a busy node's status —
// a long state, peers, filters and holds with their reasons, predictions
// linked to their reports — and every link resolves.
func TestBrowserLivePageFitsAndLinksResolve(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /ui", webview.Live())
	long := strings.Repeat("n12 n13 n14 n15 ", 12)
	status := `{"format":"crystalball-status/1","id":9,"service":"randtree","running":true,
	 "summary":"Status=joined Root=n1 Parent=n1 Children=[n13 n14 n15 n16 …+9] Siblings=[n2 n3 n4 n5 …+4] Peers=map[n13:true n14:true]",
	 "neighbors":[1,2,3,13,14,15,16,17],
	 "peers":[{"id":1,"service_addr":"127.0.0.1:7001","alive":true,"outbound":true,"inbound":true},{"id":13,"service_addr":"127.0.0.1:7013","alive":false}],
	 "counters":{"messages_in":1234,"messages_out":2345,"bytes_in":99999999,"bytes_out":88888888,"transport_errors":3,"frames_rejected":0,"conns_dialed":5,"conns_accepted":6},
	 "snapshots":{"cn":18,"interval_seconds":10,"gathering":false,"checkpoints_stored":12,"last":{"cn":14,"age_seconds":2.6,"members":[1,2,3,9,13],"dead":[17],"excluded":[{"node":16,"reason":"window"}]}},
	 "steering":{"mode":"steer","immediate":true,"rounds":42,"states_explored":123456,"predicted":{"ChildrenSiblingsDisjoint":3,"RootHasNoSiblings":0},
	  "filters":["n9: drop randtree.Join from n13"],
	  "reasons":[{"filter":"n9: drop randtree.Join from n13","why":{"source":"round","property":"ChildrenSiblingsDisjoint","kind":"safety","path":["n13 reset silent","n13 app randtree.JoinOverlay","n9 deliver randtree.Join from n13 with a very long message body ` + long + `"],"rank":1,"cut":14}}],
	  "holds":[{"event":"n9: drop randtree.Probe from n13","by":"filter","filter":"n9: drop randtree.Probe from n13","since":"2026-12-02T01:00:00Z"}],
	  "recent":[{"property":"ChildrenSiblingsDisjoint","kind":"safety","error":"n9: n13 is both a child and a sibling","path":["n13 reset silent","n9 deliver randtree.Join from n13"],"rank":1,"cut":14,"filter":"n9: drop randtree.Join from n13"}]},
	 "reports":{"written":1,"files":1,"recent":[{"name":"prediction-n9-cut14-1.json","property":"ChildrenSiblingsDisjoint","cut":14}]}}`
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, status)
	})
	mux.HandleFunc("GET /reports/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != "prediction-n9-cut14-1.json" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"format":"crystalball-prediction/1"}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(srv.URL+"/ui"), chromedp.WaitVisible(`#predictions table`))
	for sel, want := range map[string]string{
		"#summary":     "Status=joined Root=n1",
		"#filters":     "ChildrenSiblingsDisjoint",
		"#holds":       "n9: drop randtree.Probe from n13",
		"#predictions": "prediction-n9-cut14-1.json",
	} {
		if got := text(t, ctx, sel); !strings.Contains(got, want) {
			t.Errorf("%s shows %q, want %q in it", sel, got, want)
		}
	}
	fits(t, ctx, "live")
	linksResolve(t, ctx, "live")
}
