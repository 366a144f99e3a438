package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/livenode"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/status"
	"github.com/seed6eee2ec7/crystalball/steering"
)

func TestNodeBadFlagsAreOneLineUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"node"}, "--id is required"},
		{[]string{"node", "--id", "zero"}, "invalid node ID"},
		{[]string{"node", "--id", "0"}, "invalid node ID"},
		{[]string{"node", "--id", "1", "--service", "nope"}, `unknown service "nope" (known: bullet, chord, macetransport, pastry, paxos, randtree)`},
		{[]string{"node", "--id", "1", "--nodes", "-1"}, "--nodes must be in 0..65536"},
		{[]string{"node", "--id", "1", "--listen", "7000"}, "RuntimeConfig.Listen"},
		{[]string{"node", "--id", "1", "--join", "127.0.0.1"}, "RuntimeConfig.Join[0]"},
		{[]string{"node", "--id", "1", "--listen", "0.0.0.0:7000"}, "RuntimeConfig.Advertise is required"},
		{[]string{"node", "--id", "1", "--gossip", "localhost"}, "RuntimeConfig.Gossip.Bind"},
		{[]string{"node", "--id", "1", "--try-send-queue", "-1"}, "RuntimeConfig.Transport.TrySendQueueBytes"},
		{[]string{"node", "--id", "1", "--log", "xml"}, "--log: want json or console"},
		{[]string{"node", "--id", "1", "--log-level", "loud"}, "--log-level"},
		{[]string{"node", "--id", "1", "--fix", "everything"}, `unknown fix "everything"`},
		{[]string{"node", "--id", "1", "stray"}, `unexpected argument "stray"`},
		{[]string{"node", "--id", "1", "--label", strings.Repeat("x", 300)}, "RuntimeConfig.Label"},
		{[]string{"node", "--id", "1", "--snapshots", "-1s"}, "--snapshots must not be negative"},
		{[]string{"node", "--id", "1", "--snapshots", "often"}, "want a duration"},
		{[]string{"node", "--id", "1", "--gather", "-2s"}, "--gather must not be negative"},
		{[]string{"node", "--id", "1", "--snapshots", "0", "--gather", "5s"}, "needs a snapshot manager"},
		{[]string{"node", "--id", "1", "--mode", "loud"}, "--mode: want off, debug or steer"},
		{[]string{"node", "--id", "1", "--mode", "steer", "--snapshots", "0"}, "--mode steer needs a snapshot manager"},
		{[]string{"node", "--id", "1", "--immediate", "--snapshots", "0"}, "--immediate needs a snapshot manager"},
		{[]string{"node", "--id", "1", "--mode", "debug", "--steer-states", "0"}, "--steer-states must be positive"},
		{[]string{"node", "--id", "1", "--mode", "debug", "--walk-warmup", "500"}, "--walk-warmup must be at least 0 and below --walk-depth"},
		{[]string{"node", "--id", "1", "--mode", "debug", "--walk-steps", "0"}, "--walk-steps must be positive"},
		{[]string{"node", "--id", "1", "--mode", "debug", "--steer-states", "lots"}, "invalid value"},
		{[]string{"node", "--id", "1", "--mode", "debug", "--steer-time", "0s"}, "--steer-time must be positive"},
		{[]string{"node", "--id", "1", "--mode", "debug", "--steer-time", "soon"}, "want a duration"},
		{[]string{"node", "--id", "1", "--mode", "debug", "--steer-resets", "-1"}, "--steer-resets must not be negative"},
		{[]string{"node", "--id", "1", "--reports", "/tmp/x"}, "--reports needs --mode debug or steer"},
		{[]string{"node", "--id", "1", "--immediate=maybe"}, "invalid boolean value"},
		{[]string{"node", "--id", "1", "--service", "paxos"}, "--service paxos keeps durable state that must survive a crash"},
		{[]string{"node", "--id", "1", "--data-dir", "/tmp/x", "--ephemeral"}, "--ephemeral and --data-dir contradict each other"},
	}
	for _, c := range cases {
		expectUsageError(t, c.args, c.want)
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var lns []net.Listener
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// nodeProc is one `crystalball node` OS process.
type nodeProc struct {
	id                   node.ID
	args                 []string
	cmd                  *exec.Cmd
	out                  *syncBuffer
	done                 chan struct{}
	err                  error // Wait's result, set before done closes
	listen, http, gossip string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (p *nodeProc) start(t *testing.T, bin string) {
	t.Helper()
	p.out = &syncBuffer{}
	p.cmd = exec.Command(bin, p.args...)
	p.cmd.Args[0] = "crystalball" // the name Main reports, as the real binary's
	p.cmd.Env = append(os.Environ(), asProgram+"=1")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
}

func (p *nodeProc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return p.cmd != nil
	}
}

func (p *nodeProc) kill() {
	if p.running() {
		p.cmd.Process.Kill()
		<-p.done
	}
}

// getStatus fetches and decodes the /status of the node serving HTTP at
// addr.
func getStatus(client *http.Client, addr string) (status.StatusDoc, error) {
	var st status.StatusDoc
	resp, err := client.Get("http://" + addr + "/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// status fetches and decodes a node's /status.
func (p *nodeProc) status(client *http.Client) (status.StatusDoc, *randtree.State, error) {
	st, err := getStatus(client, p.http)
	if err != nil {
		return st, nil, err
	}
	s := new(randtree.State)
	if err := json.Unmarshal(st.State, s); err != nil {
		return st, nil, fmt.Errorf("state %s: %w", st.State, err)
	}
	return st, s, nil
}

// liveView is a node.View over the states the status endpoints reported.
type liveView struct {
	ids    []node.ID
	states map[node.ID]*randtree.State
	timers map[node.ID]map[string]time.Time
}

func (v *liveView) Nodes() []node.ID { return v.ids }
func (v *liveView) Service(id node.ID) node.Service {
	if s, ok := v.states[id]; ok {
		return s
	}
	return nil
}
func (v *liveView) TimerScheduled(id node.ID, name string) bool {
	_, ok := v.timers[id][name]
	return ok
}

// observe reads every running node's status into a view.
func observe(procs []*nodeProc, client *http.Client) (*liveView, error) {
	v := &liveView{states: map[node.ID]*randtree.State{}, timers: map[node.ID]map[string]time.Time{}}
	for _, p := range procs {
		st, s, err := p.status(client)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", p.id, err)
		}
		v.ids = append(v.ids, p.id)
		v.states[p.id] = s
		v.timers[p.id] = st.Timers
	}
	slices.Sort(v.ids)
	return v, nil
}

// waitForTree polls the status endpoints until the nodes form one RandTree
// containing all of them, and returns its summary.
func waitForTree(t *testing.T, ctx context.Context, procs []*nodeProc, what string) randtree.Summary {
	t.Helper()
	client := &http.Client{Timeout: httpTimeout}
	var last randtree.Summary
	var lastErr error
	for {
		for _, p := range procs {
			if !p.running() {
				t.Fatalf("%s: node %v exited: %v\n%s", what, p.id, p.err, p.out)
			}
		}
		v, err := observe(procs, client)
		if err == nil {
			last = randtree.Summarize(v)
			if last.Joined == len(procs) && last.Roots == 1 && last.TreeSize == len(procs) {
				return last
			}
		}
		lastErr = err
		select {
		case <-ctx.Done():
			t.Fatalf("%s: no tree of %d nodes before the deadline: last summary %v, last error %v", what, len(procs), last, lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// gatherSnapshot asks p (POST /snapshot, retried while a periodic gather
// is in progress) for a neighbourhood snapshot and fetches it (GET
// /snapshot) once it is complete.
func gatherSnapshot(t *testing.T, ctx context.Context, p *nodeProc, client *http.Client) report.Snapshot {
	t.Helper()
	var started status.GatherStarted
	for {
		resp, err := client.Post("http://"+p.http+"/snapshot", "", nil)
		if err != nil {
			t.Fatalf("POST /snapshot at %v: %v", p.id, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusAccepted {
			if err := json.Unmarshal(body, &started); err != nil {
				t.Fatalf("POST /snapshot answered %s: %v", body, err)
			}
			break
		}
		if resp.StatusCode != http.StatusConflict {
			t.Fatalf("POST /snapshot at %v: %s %s", p.id, resp.Status, body)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("POST /snapshot at %v: still busy at the deadline: %s", p.id, body)
		case <-time.After(50 * time.Millisecond):
		}
	}
	for {
		resp, err := client.Get("http://" + p.http + "/snapshot")
		if err != nil {
			t.Fatalf("GET /snapshot at %v: %v", p.id, err)
		}
		var doc report.Snapshot
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && err != nil {
			t.Fatalf("GET /snapshot at %v: %v", p.id, err)
		}
		if resp.StatusCode == http.StatusOK && !doc.Started.Before(started.Started) {
			return doc
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GET /snapshot at %v: no snapshot started at %v before the deadline (last: %s, started %v)",
				p.id, started.Started, resp.Status, doc.Started)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkRootSnapshot checks a snapshot gathered at the root: it holds a
// checkpoint of the root and of every neighbour the root's own checkpoint
// names, all for the snapshot's cut, restorable with the service's
// factory, and no safety property is violated on its view (evaluated here
// and by the node).
func checkRootSnapshot(t *testing.T, doc report.Snapshot, root node.ID, spec node.Spec) {
	t.Helper()
	s := &snapshot.Snapshot{Gatherer: doc.Gatherer, CN: doc.CN}
	var members []node.ID
	for _, n := range doc.Nodes {
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: n.ID, CN: n.CN, State: n.Checkpoint})
		members = append(members, n.ID)
		if n.CN < doc.CN {
			t.Errorf("%v's checkpoint %d is not of the cut %d", n.ID, n.CN, doc.CN)
		}
	}
	view, err := s.Decode(spec.New)
	if err != nil {
		t.Fatalf("snapshot checkpoints: %v", err)
	}
	rs, ok := view.Service(root).(*randtree.State)
	if doc.Gatherer != root || !ok {
		t.Fatalf("snapshot gathered by %v holds no checkpoint of the root %v: members %v", doc.Gatherer, root, members)
	}
	want := append(rs.Neighbors(root), root)
	slices.Sort(want)
	if !slices.Equal(members, want) || !slices.Equal(doc.Members, want) || len(doc.Dead) != 0 || len(doc.Excluded) != 0 {
		t.Errorf("snapshot members %v (summary %v, dead %v, excluded %v); the root's checkpoint %q names neighbours %v",
			members, doc.Members, doc.Dead, doc.Excluded, rs, want)
	}
	if len(doc.Channels) != len(want)*len(want) {
		t.Errorf("%d channels recorded for %d members", len(doc.Channels), len(want))
	}
	for _, p := range spec.PropertiesOf(node.Safety) {
		if err := p.Check(view); err != nil {
			t.Errorf("safety property %s violated on the snapshot: %v", p.Name, err)
		}
	}
	for _, p := range doc.Properties {
		if p.Kind == node.Safety.String() && !p.Holds {
			t.Errorf("the node reports %s violated on its snapshot: %s", p.Name, p.Error)
		}
	}
	if len(doc.Properties) != len(spec.Properties) {
		t.Errorf("the node evaluated %d properties, the service has %d", len(doc.Properties), len(spec.Properties))
	}
}

// asProgram is the environment variable that makes the test binary run
// as the papers' program (TestMain: testProgram.Main(), what
// cmd/crystalball's main does) instead of running tests.
const asProgram = "CRYSTALBALL_TEST_BINARY_AS_PROGRAM"

// nodeBinary returns the path of the binary the multi-process tests run as
// `crystalball`: the test binary itself, which runs the papers' program
// when started with asProgram set (nodeProc.start sets it), built with the
// race detector when the tests are, so that the processes are checked for
// races too. They used to build cmd/crystalball for it (go build, once per
// test binary: 2.4 s of CPU to link under the race detector).
func nodeBinary(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestNodeProcessesFormAndRepairARandTree runs five `crystalball node`
// processes on loopback, waits until their status
// endpoints show one RandTree of five nodes, SIGKILLs an interior node,
// restarts it and waits for the tree of five to re-form; then the root
// gathers a neighbourhood snapshot (POST /snapshot), which must hold
// consistent checkpoints of the root's neighbours (the restarted node,
// whose checkpoint number started again at 0, among them) on which no
// safety property is violated; finally it stops every node with SIGTERM
// and checks that each exits cleanly.
func TestNodeProcessesFormAndRepairARandTree(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: runs 5 OS processes for up to a minute")
	}
	bin := nodeBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), clusterDeadline)
	defer cancel()

	const n = 5
	procs := clusterProcs(t, n)
	for i, p := range procs {
		p.args = []string{"node", "--service", "randtree", "--fix", "all", "--id", p.id.String(),
			"--listen", p.listen, "--gossip", p.gossip, "--http", p.http, "--label", "mp-test", "--log", "json",
			// Checkpoint numbers advance (and every node gathers) every
			// second, so the restarted node, back at number 0, has to
			// adopt its peers' numbers.
			"--snapshots", "1s"}
		if i > 0 {
			p.args = append(p.args, "--join", procs[0].listen)
		}
		p.start(t, bin)
		if i == 0 {
			// The others join through n1: wait until it serves.
			waitForTree(t, ctx, procs[:1], "n1 alone")
		}
	}
	sum := waitForTree(t, ctx, procs, "initial tree")
	t.Logf("formed: %v", sum)

	// Kill an interior node if there is one (a child of the root with
	// children of its own), so that its children must rejoin too.
	client := &http.Client{Timeout: httpTimeout}
	v, err := observe(procs, client)
	if err != nil {
		t.Fatal(err)
	}
	victim := procs[1]
	for _, p := range procs {
		s := v.states[p.id]
		if p.id != sum.Root && len(s.Children) > 0 {
			victim = p
			break
		}
	}
	t.Logf("SIGKILL %v (children %v)", victim.id, v.states[victim.id].Children)
	victim.kill()
	if victim.err == nil || !strings.Contains(victim.err.Error(), "killed") {
		t.Fatalf("%v: exit %v, want killed", victim.id, victim.err)
	}
	victim.start(t, bin)
	sum = waitForTree(t, ctx, procs, "tree after restart")
	t.Logf("re-formed: %v", sum)

	root := procs[sum.Root-1]
	doc := gatherSnapshot(t, ctx, root, client)
	t.Logf("snapshot at %v: cut %d, members %v, %d B of checkpoints, %d in flight, %d round(s) in %v",
		root.id, doc.CN, doc.Members, doc.SizeBytes, doc.InFlight, doc.Rounds, doc.At.Sub(doc.Started))
	checkRootSnapshot(t, doc, root.id, randtree.NewSpec(randtree.AllFixes()))
	if !slices.Contains(doc.Members, victim.id) {
		t.Logf("the restarted %v is not a neighbour of the root any more", victim.id)
	}
	st, _, err := root.status(client)
	if err != nil {
		t.Fatal(err)
	}
	if sn := st.Snapshots; sn == nil || sn.Last == nil || sn.Last.Gather < doc.Gather || sn.CN < doc.CN ||
		sn.Stats.Gathers == 0 || sn.CheckpointsStored == 0 || st.Counters.LayerBytesOut == 0 || st.Counters.LayerBytesIn == 0 {
		t.Errorf("root status after the snapshot: snapshots %+v, counters %+v", sn, st.Counters)
	}

	// A clean stop: SIGTERM, exit status 0, and the node says so.
	stopCluster(t, ctx, procs)
}

// TestNodeSnapshotEndpointsWithoutSnapshots: the status server's snapshot
// endpoints say why they have nothing to serve: no snapshot manager (404),
// no snapshot yet (404), a runtime that is not running (503).
func TestNodeSnapshotEndpointsWithoutSnapshots(t *testing.T) {
	svc, err := testCatalog().lookup("randtree", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	withLive, err := livenode.New(svc.spec, livenode.Config{Runtime: live.RuntimeConfig{ID: 1}, Snapshots: &snapshot.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	without, err := livenode.New(svc.spec, livenode.Config{Runtime: live.RuntimeConfig{ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	mux := func(n *livenode.Node) http.Handler {
		srv, err := newStatusServer(n, nil, nil, svc, time.Now(), "")
		if err != nil {
			t.Fatal(err)
		}
		return srv.Handler()
	}
	cases := []struct {
		mux          http.Handler
		method, path string
		code         int
		want         string
	}{
		{mux(without), "GET", "/snapshot", http.StatusNotFound, "snapshots are off"},
		{mux(without), "POST", "/snapshot", http.StatusNotFound, "snapshots are off"},
		{mux(without), "GET", "/status", http.StatusOK, `"counters"`},
		{mux(withLive), "GET", "/snapshot", http.StatusNotFound, "no snapshot gathered yet"},
		{mux(withLive), "POST", "/snapshot", http.StatusServiceUnavailable, "not running"},
		{mux(withLive), "GET", "/status", http.StatusOK, `"interval_seconds": 10`},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		req := httptest.NewRequest(c.method, c.path, nil)
		req.RemoteAddr = "127.0.0.1:40000" // POST is for loopback clients without a token
		c.mux.ServeHTTP(w, req)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", c.method, c.path, w.Code, w.Body, c.code, c.want)
		}
	}
}

// checkExposition parses a /metrics body (Prometheus text exposition) as
// a scraper would and returns its counter and gauge samples by
// "name{label="value",...}" (labels in the order the text has them), and
// each histogram's sample count as "name_count{...}". It
// fails the test if the text does not parse or lacks the Go collector's
// go_goroutines.
func checkExposition(t testing.TB, text string) map[string]float64 {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, text)
	}
	if fams["go_goroutines"] == nil {
		t.Fatalf("/metrics lacks go_goroutines:\n%s", text)
	}
	samples := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			var labels []string
			for _, l := range m.Label {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Counter != nil:
				samples[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				samples[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				samples[name+"_count{"+strings.Join(labels, ",")+"}"] = float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return samples
}

// TestNodeReportsReplay: a report --reports writes for a prediction (here
// the steering round on Figure 2's state at n9, with an in-flight message
// recorded) holds the snapshot and the path, and 'trace show' replays the
// path from it (it fails on a path that does not reach the recorded
// violation). Package report's tests cover the format itself. The round
// searches 2,000 states and takes no liveness walks: it makes the same
// one prediction (ChildrenSiblingsDisjoint at depth 5) as with the
// default 20,000 states and walks, which took 1.9 s of CPU under the race
// detector.
func TestNodeReportsReplay(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	s, err := paper.Figure2Snapshot(spec)
	if err != nil {
		t.Fatal(err)
	}
	s.Channels = []snapshot.Channel{{From: 1, To: 13, Complete: true, Messages: []node.Envelope{{From: 1, To: 13, CN: 6, Msg: randtree.Probe{Root: 1}}}}}
	faults := consequence.Faults{Resets: 1, SilentResets: true}
	ctl, err := steering.New(steering.Config{Mode: steering.Steer, Spec: spec, Faults: faults, SearchBudget: steering.SearchBudget{MaxStates: 2000}, LivenessWalks: steering.LivenessWalks{WalkOptions: steering.WalkOptions{Walks: -1}}}, 9)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ctl.Round(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Predictions) == 0 {
		t.Fatal("no prediction on Figure 2's state")
	}
	dir := t.TempDir()
	w := &report.Writer{Dir: dir, Source: report.Source{Node: 9, Service: "randtree", Options: "paper", Spec: spec, Mode: steering.Steer, Faults: faults}}
	w.Round(s, rep)
	files, _ := filepath.Glob(filepath.Join(dir, "prediction-n9-cut7-*.json"))
	if len(files) != len(rep.Predictions) {
		t.Fatalf("%d report files for %d predictions", len(files), len(rep.Predictions))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc report.Prediction
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Property == "" || doc.Report.Fingerprint == "" || len(doc.Snapshot.Nodes) != 3 || len(doc.Snapshot.Channels) != 1 {
			t.Fatalf("%s: %+v", f, doc)
		}
		t.Logf("%s: %s at depth %d, filter %q", filepath.Base(f), doc.Property, doc.Report.Depth, doc.Filter)
		// trace show replays it from the snapshot it holds.
		code, stdout, stderr := runCLI("trace", "show", f)
		if code != exitOK || !strings.Contains(stdout, "predicted by n9") || !strings.Contains(stdout, "violation of "+doc.Property) ||
			!strings.Contains(stdout, fmt.Sprintf("%3d. ", doc.Report.Depth)) {
			t.Errorf("trace show %s: exit %d, stderr %q, stdout:\n%s", filepath.Base(f), code, stderr, stdout)
		}
	}
	// A report of an unknown format is a usage error, not a crash.
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"format":"crystalball-prediction/9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI("trace", "show", other); code != exitUsage || !strings.Contains(stderr, "unknown report format") {
		t.Errorf("trace show of a future format: exit %d, %q", code, stderr)
	}
}

// Every wait on a node in these tests is a hang guard, not a timing
// assertion: the nodes run under the race detector on machines that also
// run other test binaries, which can slow them tenfold, so the bounds are
// generous and a passing test never waits for them. Every wait polls.
const (
	// clusterDeadline bounds a whole cluster test (forming, converging,
	// stopping): the longest, TestNodeProcessesFormAndRepairARandTree,
	// takes about 8 s on a quiet machine, so this is about 40 times its
	// need (go test's own -timeout of make test is 30 minutes).
	clusterDeadline = 5 * time.Minute
	// httpTimeout bounds one request to a node's status server.
	httpTimeout = 30 * time.Second
)

// verifyNoLeaks returns the check, to defer, that the goroutines the test
// starts after the call have all ended. memberlist's probe goroutine
// outlives Shutdown (and so live.Runtime.Stop) by up to a probe interval,
// until its ack timer fires, so the check (livetest.VerifyNone) waits for
// the goroutines to end before it fails.
func verifyNoLeaks(t *testing.T) func() {
	ignore := goleak.IgnoreCurrent()
	return func() {
		t.Helper()
		livetest.VerifyNone(t, ignore)
	}
}

// checkSteeringNode polls the status server at web until the node there
// has completed two steering rounds, the last from a snapshot of the node
// and a neighbour at least, and checks its /status and /metrics.
func checkSteeringNode(t testing.TB, p *zeroPortNode, deadline time.Time, client *http.Client) {
	t.Helper()
	web := p.web
	get := func(path string) ([]byte, error) {
		resp, err := client.Get("http://" + web + path)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", path, resp.Status)
		}
		return b, err
	}
	// multiCN is the first snapshot seen that holds two members: a round on
	// it or a later one has explored a neighbourhood. (Waiting for a round
	// on the newest snapshot never ends when rounds take longer than the
	// gather period, as they may under the race detector on a busy machine.)
	var multiCN uint64
	for {
		var st status.StatusDoc
		b, err := get("/status")
		if err == nil {
			err = json.Unmarshal(b, &st)
		}
		if err == nil && multiCN == 0 && st.Snapshots != nil && st.Snapshots.Last != nil && len(st.Snapshots.Last.Members) >= 2 {
			multiCN = st.Snapshots.Last.CN
		}
		if err == nil && st.Steering != nil && st.Steering.Rounds >= 2 && st.Steering.LastRound != nil &&
			multiCN != 0 && st.Steering.LastRoundCN >= multiCN {
			t.Logf("%v: %d rounds (%d cancelled), newest snapshot %d members, %d states, predicted %v, filters %v, %d events, %d checks, %d vetoes, %d filter hits",
				st.ID, st.Steering.Rounds, st.Steering.RoundsCanceled, len(st.Snapshots.Last.Members), st.Steering.StatesExplored, st.Steering.Predicted,
				st.Steering.Filters, st.Steering.Events, st.Steering.ImmediateChecks, st.Steering.Vetoes, st.Steering.FilterHits)
			if st.Steering.Mode != "steer" || !st.Steering.Immediate || st.Steering.Events == 0 || st.Snapshots.Stats.Gathers == 0 {
				t.Errorf("%v: status %+v, snapshots %+v", st.ID, st.Steering, st.Snapshots)
			}
			break
		}
		if xerr := p.exited(); xerr != nil {
			t.Fatalf("%s: the node ended: %v", web, xerr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no two steering rounds: %+v (%v)", web, st.Steering, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A round counts in crystalball_steering_rounds_total when it starts
	// and in the duration histogram when it ends, so /metrics is polled
	// until the second round has ended too.
	for {
		b, err := get("/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m := checkExposition(t, string(b))
		if m["crystalball_steering_rounds_total{}"] >= 2 && m["crystalball_steering_states_explored_total{}"] > 0 &&
			m["crystalball_steering_exploration_seconds_total{}"] > 0 && m["crystalball_snapshot_gathers_total{}"] > 0 &&
			m["crystalball_steering_immediate_checks_total{}"] > 0 &&
			m["crystalball_steering_round_duration_seconds_count{}"] >= 2 && m["crystalball_steering_immediate_check_seconds_count{}"] > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s /metrics:\n%s", web, b)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNodeSteeringInProcess runs three RandTree nodes in this process over
// loopback (runNodeUntil, the CLI's own wiring) with --mode steer and the
// immediate check, gathering every 400ms: every node's steering layer
// completes rounds, /status and /metrics show them, and cancelling the
// nodes stops them cleanly with no goroutine left behind. It asserts
// nothing about violations, so its rounds search 300 states and take no
// liveness walks (with 3,000 states and the default 32 walks the test
// took 5.3 s of CPU under the race detector, 0.9 s now).
func TestNodeSteeringInProcess(t *testing.T) {
	defer verifyNoLeaks(t)()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deadline := time.Now().Add(clusterDeadline) // a hang guard
	client := &http.Client{Timeout: httpTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	reports := t.TempDir()
	const n = 3
	procs := make([]*zeroPortNode, 0, n)
	rt := &repeatingTB{TB: t}
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("log of n%d:\n%s", i+1, p.log)
			}
			rt.repeat()
		}
	})
	for i := range n {
		args := []string{"--service", "randtree", "--id", strconv.Itoa(i + 1), "--label", "steer-test", "--log", "json",
			"--snapshots", "200ms", "--gather", "400ms", "--mode", "steer", "--immediate",
			"--steer-time", "100ms", "--steer-states", "300", "--walks", "0", "--reports", reports}
		if i > 0 {
			args = append(args, "--join", procs[0].listen)
		}
		procs = append(procs, startZeroPortNode(t, ctx, deadline, args...))
	}
	for _, p := range procs {
		checkSteeringNode(rt, p, deadline, client)
	}
	cancel()
	for i, p := range procs {
		if err := p.wait(clusterDeadline); err != nil {
			rt.Errorf("n%d: %v", i+1, err)
		}
		if !strings.Contains(p.log.String(), `"msg":"stopped"`) || !strings.Contains(p.stdout.String(), "steering steer with the immediate check") {
			rt.Errorf("n%d: stdout %q, no clean stop in the log", i+1, p.stdout)
		}
	}
	files, _ := filepath.Glob(filepath.Join(reports, "*.json"))
	t.Logf("%d prediction reports written", len(files))
}
