//go:build browser

package tool

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// chromiumPath is the browser the test drives: CHROMIUM, else Debian's.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// browser starts a headless Chromium with the flags this machine needs
// (no sandbox as root, no GPU, no background networking: the network is
// closed) in a fresh profile, and returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath()); err != nil {
		t.Fatalf("no browser: %v (install Debian's chromium, or set CHROMIUM)", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	// A bound on the whole test, not a measure of its speed: a page that
	// never shows what it should fails here rather than hang CI.
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// evaluate runs a script in the page and returns its value.
func evaluate[T any](t *testing.T, ctx context.Context, script string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script))
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return v
}

// text returns the text of the element sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return v
}

// do runs actions, failing the test on an error.
func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// The page loads, lists the walk report, opens its stepper, steps with
// the buttons, jumps to the critical step and shows the dead path's node
// states against the nearest live path's, the difference marked.
func TestBrowserStepsThroughAReport(t *testing.T) {
	h, co := walkHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := browser(t)

	do(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(`#documents`))
	if rows := evaluate[int](t, ctx, `document.querySelectorAll("tr.document").length`); rows != 1 {
		t.Errorf("the index lists %d documents, want 1", rows)
	}
	do(t, ctx,
		chromedp.Click(`a[href="/doc/1"]`),
		chromedp.WaitVisible(`#stepper[data-shown="0"]`),
		chromedp.Click(`#next`), chromedp.WaitVisible(`#stepper[data-shown="1"]`),
		chromedp.Click(`#next`), chromedp.WaitVisible(`#stepper[data-shown="2"]`),
		chromedp.Click(`#prev`), chromedp.WaitVisible(`#stepper[data-shown="1"]`),
	)
	path := co.Liveness.Report.Path
	count, stepNo, event := text(t, ctx, `#step-count`), text(t, ctx, `#step-no`), text(t, ctx, `#event`)
	if count != strconv.Itoa(len(path)) || stepNo != "1" || event != "1. "+path[0].Text {
		t.Errorf("%s steps, at step %s showing %q; want %d, 1 and %q", count, stepNo, event, len(path), "1. "+path[0].Text)
	}
	nodes := evaluate[int](t, ctx, `document.querySelectorAll("#states .node").length`)
	changed := evaluate[int](t, ctx, `document.querySelectorAll("#states .changed").length`)
	if nodes != 5 || changed == 0 {
		t.Errorf("step 1 shows %d nodes and %d changed fields, want 5 and some", nodes, changed)
	}

	do(t, ctx, chromedp.Click(`#critical`), chromedp.WaitVisible(`#stepper[data-shown="18"]`))
	event = text(t, ctx, `#event`)
	critical := evaluate[bool](t, ctx, `document.getElementById("event").classList.contains("critical")`)
	want := "18. n3 deliver randtree.JoinReply from n4 ← critical transition (live path: " + co.Liveness.DeadEnd.LivePath[17].Text + ")"
	if !critical || strings.Join(strings.Fields(event), " ") != want {
		t.Errorf("critical step shown as %q (marked %v), want %q", event, critical, want)
	}
	diffNodes := evaluate[int](t, ctx, `document.querySelectorAll("#states .node.has-diff").length`)
	differs := evaluate[int](t, ctx, `document.querySelectorAll("#states .node .differs").length`)
	if diffNodes == 0 || differs == 0 {
		t.Errorf("at the critical step %d nodes differ from the live path with %d fields marked, want some", diffNodes, differs)
	}
	if w := evaluate[int](t, ctx, `document.getElementById("graph-img").naturalWidth`); w == 0 {
		t.Error("the event graph did not load")
	}
	// The address links to the step shown: a reload opens it.
	if got := evaluate[string](t, ctx, `location.hash`); got != "#step=18" {
		t.Errorf("address hash %q, want #step=18", got)
	}
	do(t, ctx, chromedp.Navigate(srv.URL+"/doc/1#step=5"), chromedp.Reload(), chromedp.WaitVisible(`#stepper[data-shown="5"]`))
}

// A live node's page (a status server's /ui) shows the node's status and
// updates it: here a stand-in /status whose round counter grows with each
// poll.
func TestBrowserLivePageUpdates(t *testing.T) {
	var mu sync.Mutex
	polls := 0
	mux := http.NewServeMux()
	mux.Handle("GET /ui", webview.Live())
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		polls++
		n := polls
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"format":"crystalball-status/1","id":7,"service":"randtree","neighbors":[3,9],"peers":[],"counters":{"messages_in":%d},"steering":{"mode":"steer","rounds":%d,"vetoes":1}}`, n, n)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(srv.URL+"/ui"), chromedp.WaitVisible(`#steering table`))
	if got := text(t, ctx, `#node-id`); !strings.HasPrefix(got, "n7 (randtree)") {
		t.Errorf("node %q, want %q", got, "n7 (randtree)")
	}
	if got := text(t, ctx, `#neighbourhood`); !strings.Contains(got, "n3 n9") {
		t.Errorf("neighbourhood %q, want the neighbours n3 n9", got)
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll("#ring g.neighbor").length`); n != 2 {
		t.Errorf("the neighbourhood drawn with %d neighbours, want 2", n)
	}
	// The next poll's rounds (2 or more) replace the first's.
	do(t, ctx, chromedp.Poll[chromedp.Void](`[...document.querySelectorAll("#steering td")].some((td, i, all) => td.textContent === "rounds" && Number(all[i+1].textContent) >= 2)`, chromedp.WithPollingMutation()))
	if got := text(t, ctx, `#steering`); !strings.Contains(got, "vetoes") {
		t.Errorf("steering %q, want its interventions", got)
	}
}
