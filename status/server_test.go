package status

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

func TestMain(m *testing.M) { livetest.VerifyTestMain(m) }

// fakeRuntime is a Runtime whose Do runs fn at a fixed time, or fails.
type fakeRuntime struct {
	st    live.Status
	doErr error
	at    time.Time
}

func (r *fakeRuntime) Status() live.Status { return r.st }
func (r *fakeRuntime) Do(ctx context.Context, fn func(time.Time) []node.Envelope) error {
	if r.doErr != nil {
		return r.doErr
	}
	fn(r.at)
	return nil
}

// fakeSnapshots is a Snapshots with a fixed status, last snapshot and
// gather outcome; it records the gathers' times.
type fakeSnapshots struct {
	st        snapshot.LayerStatus
	last      *snapshot.Snapshot
	gatherErr error
	gathers   []time.Time
}

func (s *fakeSnapshots) Status(time.Time) snapshot.LayerStatus { return s.st }
func (s *fakeSnapshots) Last() *snapshot.Snapshot              { return s.last }
func (s *fakeSnapshots) Gather(now time.Time) ([]node.Envelope, error) {
	s.gathers = append(s.gathers, now)
	return nil, s.gatherErr
}

type fakeSteering struct{ st steering.LayerStatus }

func (s *fakeSteering) Status() steering.LayerStatus { return s.st }

var t0 = time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)

func newTestServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return t0.Add(90 * time.Second) }
		cfg.Started = t0
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func do(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = "127.0.0.1:40000" // a local client: POST needs no token
	h.ServeHTTP(w, req)
	return w
}

// GET /status is the runtime's status with the layers', the uptime from
// Config.Started by Config.Now, and its format; a layer left out (a nil
// pointer included) is absent from it.
func TestStatusDocument(t *testing.T) {
	rt := &fakeRuntime{st: live.Status{ID: 3, Service: "randtree", Running: true, Counters: live.Counters{MessagesIn: 7, SendsRefused: 5, SendQueueBytes: 300}}}
	snaps := &fakeSnapshots{st: snapshot.LayerStatus{IntervalSeconds: 10, CN: 4}}
	steer := &fakeSteering{st: steering.LayerStatus{Mode: "steer", Stats: steering.Stats{RoundStats: steering.RoundStats{Rounds: 2}}}}
	for _, c := range []struct {
		name             string
		cfg              Config
		snapshots, steer bool
	}{
		{"all layers", Config{Runtime: rt, Snapshots: snaps, Steering: steer, Options: "fix=all", SnapshotDoc: noDoc}, true, true},
		{"none", Config{Runtime: rt, Options: "fix=all"}, false, false},
		{"nil pointers", Config{Runtime: rt, Snapshots: (*snapshot.Layer)(nil), Steering: (*steering.Layer)(nil), Options: "fix=all"}, false, false},
	} {
		w := do(t, newTestServer(t, c.cfg).Handler(), "GET", "/status")
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", c.name, w.Code, w.Header())
		}
		var doc StatusDoc
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if doc.Format != StatusFormat || doc.ID != 3 || doc.Counters.MessagesIn != 7 || doc.Options != "fix=all" || doc.UptimeSeconds != 90 {
			t.Errorf("%s: %+v", c.name, doc)
		}
		if doc.Counters.SendsRefused != 5 || doc.Counters.SendQueueBytes != 300 ||
			!strings.Contains(w.Body.String(), `"sends_refused": 5`) || !strings.Contains(w.Body.String(), `"send_queue_bytes": 300`) {
			t.Errorf("%s: counters %+v in %s", c.name, doc.Counters, w.Body)
		}
		if (doc.Snapshots != nil) != c.snapshots || (doc.Steering != nil) != c.steer {
			t.Errorf("%s: snapshots %+v, steering %+v", c.name, doc.Snapshots, doc.Steering)
		}
		if c.snapshots && (doc.Snapshots.CN != 4 || doc.Steering.Rounds != 2) {
			t.Errorf("%s: snapshots %+v, steering %+v", c.name, doc.Snapshots, doc.Steering)
		}
	}
}

func noDoc(*snapshot.Snapshot, time.Time) (any, error) { return nil, errors.New("unexpected") }

// GET /status shows a lift of steering for liveness: the property, since
// when it fails and since when steering is lifted, and the counts.
func TestStatusShowsALift(t *testing.T) {
	rt := &fakeRuntime{st: live.Status{ID: 3, Service: "zoo-lockd", Running: true}}
	steer := &fakeSteering{st: steering.LayerStatus{Mode: "steer",
		Lift: &steering.LiftRecord{Property: "ClientsServed", Since: t0.Add(31 * time.Second), FailingSince: t0.Add(time.Second), FailingSeconds: 30.5},
		Stats: steering.Stats{LayerStats: steering.LayerStats{Lifts: 1, LiftedSeconds: 0.5,
			LiftsByProperty: map[string]steering.LiftCount{"ClientsServed": {Lifts: 1, LongestFailingSeconds: 30.5}}}}}}
	w := do(t, newTestServer(t, Config{Runtime: rt, Steering: steer}).Handler(), "GET", "/status")
	for _, want := range []string{
		`"lift": {
      "property": "ClientsServed",
      "since": "` + t0.Add(31*time.Second).Format(time.RFC3339Nano) + `",
      "failing_since": "` + t0.Add(time.Second).Format(time.RFC3339Nano) + `",
      "failing_seconds": 30.5
    }`, `"lifts": 1,
    "lifts_expired": 0,
    "lifted_seconds": 0.5,
    "lifts_by_property": {
      "ClientsServed": {
        "lifts": 1,
        "longest_failing_seconds": 30.5
      }
    }`,
	} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("/status lacks\n%s\nin\n%s", want, w.Body)
		}
	}
}

// The snapshot endpoints say why they have nothing to serve, and serve
// the caller's document or start a gather on the core goroutine.
func TestSnapshotEndpoints(t *testing.T) {
	at := t0.Add(time.Second + 5*time.Nanosecond)
	snap := &snapshot.Snapshot{Gatherer: 3, CN: 9}
	doc := func(s *snapshot.Snapshot, now time.Time) (any, error) {
		return map[string]any{"format": "test-snapshot/1", "cn": s.CN}, nil
	}
	bad := func(*snapshot.Snapshot, time.Time) (any, error) { return nil, errors.New("cannot decode") }
	cases := []struct {
		name   string
		rt     *fakeRuntime
		snaps  Snapshots
		docFn  func(*snapshot.Snapshot, time.Time) (any, error)
		method string
		code   int
		want   string
	}{
		{"off get", &fakeRuntime{}, nil, nil, "GET", http.StatusNotFound, "snapshots are off"},
		{"off post", &fakeRuntime{}, nil, nil, "POST", http.StatusNotFound, "snapshots are off"},
		{"none yet", &fakeRuntime{}, &fakeSnapshots{}, doc, "GET", http.StatusNotFound, "no snapshot gathered yet"},
		{"served", &fakeRuntime{}, &fakeSnapshots{last: snap}, doc, "GET", http.StatusOK, `"format": "test-snapshot/1"`},
		{"undecodable", &fakeRuntime{}, &fakeSnapshots{last: snap}, bad, "GET", http.StatusInternalServerError, "cannot decode"},
		{"not running", &fakeRuntime{doErr: errors.New("live: not running")}, &fakeSnapshots{}, doc, "POST", http.StatusServiceUnavailable, "not running"},
		{"in progress", &fakeRuntime{at: at}, &fakeSnapshots{gatherErr: snapshot.ErrGatherInProgress}, doc, "POST", http.StatusConflict, snapshot.ErrGatherInProgress.Error()},
		{"gather fails", &fakeRuntime{at: at}, &fakeSnapshots{gatherErr: errors.New("no neighbours")}, doc, "POST", http.StatusServiceUnavailable, "no neighbours"},
		{"started", &fakeRuntime{at: at}, &fakeSnapshots{}, doc, "POST", http.StatusAccepted, `"format": "` + GatherFormat + `"`},
	}
	for _, c := range cases {
		s := newTestServer(t, Config{Runtime: c.rt, Snapshots: c.snaps, SnapshotDoc: c.docFn})
		w := do(t, s.Handler(), c.method, "/snapshot")
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, w.Code, w.Body, c.code, c.want)
		}
		if w.Code >= 400 {
			var e ErrorDoc
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Format != ErrorFormat || e.Error == "" {
				t.Errorf("%s: error body %s (%v)", c.name, w.Body, err)
			}
		}
		if c.name == "started" {
			var g GatherStarted
			if err := json.Unmarshal(w.Body.Bytes(), &g); err != nil || !g.Started.Equal(at) {
				t.Errorf("started: %s (%v), want %v", w.Body, err, at)
			}
			if fs := c.snaps.(*fakeSnapshots); len(fs.gathers) != 1 || !fs.gathers[0].Equal(at) {
				t.Errorf("gathers %v, want one at %v", fs.gathers, at)
			}
		}
	}
	if w := do(t, newTestServer(t, Config{Runtime: &fakeRuntime{}}).Handler(), "PUT", "/snapshot"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT /snapshot: %d", w.Code)
	}
}

func TestNewRejectsBadConfigs(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "Runtime is required"},
		{Config{Runtime: (*live.Runtime)(nil)}, "Runtime is required"},
		{Config{Runtime: &fakeRuntime{}, Snapshots: &fakeSnapshots{}}, "Config.Spec (or Config.SnapshotDoc) is required"},
		{Config{Runtime: &fakeRuntime{}, Limits: Limits{IdleTimeout: -time.Second}}, "negative timeout"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.HasPrefix(err.Error(), "status: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
	s, err := New(Config{Runtime: &fakeRuntime{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.srv.ReadHeaderTimeout != DefaultReadHeaderTimeout || s.srv.IdleTimeout != DefaultIdleTimeout || s.cfg.Started.IsZero() {
		t.Errorf("defaults: read header %v, idle %v, started %v", s.srv.ReadHeaderTimeout, s.srv.IdleTimeout, s.cfg.Started)
	}
	s, err = New(Config{Runtime: &fakeRuntime{}, Limits: Limits{ReadHeaderTimeout: time.Second, IdleTimeout: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if s.srv.ReadHeaderTimeout != time.Second || s.srv.IdleTimeout != 3*time.Second {
		t.Errorf("set timeouts: read header %v, idle %v", s.srv.ReadHeaderTimeout, s.srv.IdleTimeout)
	}
}

// Serve answers on a real listener until Shutdown, then returns nil and
// leaves no goroutine behind (TestMain's goleak).
func TestServeUntilShutdown(t *testing.T) {
	s := newTestServer(t, Config{Runtime: &fakeRuntime{st: live.Status{ID: 1}}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "go_goroutines") {
		t.Fatalf("GET /metrics: %s\n%s", resp.Status, body)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
}

// scrape fetches /metrics as text and parses it as a scraper would.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "text/plain")
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s\n%s", w.Code, w.Header(), w.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(w.Body)
	if err != nil {
		t.Fatalf("GET /metrics does not parse: %v", err)
	}
	return fams
}

// value returns the value of the sample of family name whose labels are
// labels (alternating names and values), and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		if len(m.Label) != len(labels)/2 {
			continue
		}
		for i, l := range m.Label {
			if l.GetName() != labels[2*i] || l.GetValue() != labels[2*i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestSnapshotDefaultsToTheReportFormat: with Spec and no SnapshotDoc,
// GET /snapshot serves the gathered snapshot as a report.Snapshot, its
// checkpoints decoded and the service's properties evaluated.
func TestSnapshotDefaultsToTheReportFormat(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, err := node.NewCore(node.CoreConfig{ID: 1, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Step(node.Event{Kind: node.EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	cp, err := core.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	snap := &snapshot.Snapshot{Gatherer: 1, CN: 3, At: t0, Nodes: []snapshot.NodeCheckpoint{{Node: 1, CN: 3, State: cp}}}
	s := newTestServer(t, Config{Runtime: &fakeRuntime{}, Snapshots: &fakeSnapshots{last: snap}, Spec: spec})
	w := do(t, s.Handler(), "GET", "/snapshot")
	var doc report.Snapshot
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || w.Code != http.StatusOK {
		t.Fatalf("%d %s (%v)", w.Code, w.Body, err)
	}
	if doc.Format != report.SnapshotFormat || doc.Gatherer != 1 || len(doc.Nodes) != 1 || len(doc.Properties) != len(spec.Properties) {
		t.Errorf("document %+v", doc)
	}
}
