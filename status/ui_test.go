package status

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/live"
)

// The live page is served beside /status and polls it by a relative URL,
// so it works behind any host and port the server listens on.
func TestLivePageIsServedAtUI(t *testing.T) {
	rt := &fakeRuntime{st: live.Status{ID: 3, Service: "randtree", Running: true}}
	w := do(t, newTestServer(t, Config{Runtime: rt}).Handler(), "GET", "/ui")
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /ui: %d %s", w.Code, w.Header())
	}
	for _, want := range []string{`fetch("status"`, `id="neighbourhood"`, `id="steering"`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("the live page lacks %q", want)
		}
	}
}
