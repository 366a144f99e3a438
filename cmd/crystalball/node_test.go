package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

func TestNodeBadFlagsAreOneLineUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"node"}, "--id is required"},
		{[]string{"node", "--id", "zero"}, "invalid node ID"},
		{[]string{"node", "--id", "0"}, "invalid node ID"},
		{[]string{"node", "--id", "1", "--service", "nope"}, `unknown service "nope"`},
		{[]string{"node", "--id", "1", "--listen", "7000"}, "RuntimeConfig.Listen"},
		{[]string{"node", "--id", "1", "--join", "127.0.0.1"}, "RuntimeConfig.Join[0]"},
		{[]string{"node", "--id", "1", "--listen", "0.0.0.0:7000"}, "RuntimeConfig.Advertise is required"},
		{[]string{"node", "--id", "1", "--gossip", "localhost"}, "RuntimeConfig.GossipBind"},
		{[]string{"node", "--id", "1", "--log", "xml"}, "--log: want json or console"},
		{[]string{"node", "--id", "1", "--log-level", "loud"}, "--log-level"},
		{[]string{"node", "--id", "1", "--fix", "everything"}, `unknown fix "everything"`},
		{[]string{"node", "--id", "1", "stray"}, `unexpected argument "stray"`},
		{[]string{"node", "--id", "1", "--label", strings.Repeat("x", 300)}, "RuntimeConfig.Label"},
		{[]string{"node", "--id", "1", "--snapshots", "-1s"}, "--snapshots must not be negative"},
		{[]string{"node", "--id", "1", "--snapshots", "often"}, "want a duration"},
		{[]string{"node", "--id", "1", "--gather", "-2s"}, "--gather must not be negative"},
		{[]string{"node", "--id", "1", "--snapshots", "0", "--gather", "5s"}, "needs a snapshot manager"},
	}
	for _, c := range cases {
		code, stdout, stderr := runCLI(c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, exitUsage, stderr)
		}
		if stdout != "" {
			t.Errorf("%v: wrote to stdout: %q", c.args, stdout)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q, want one line containing %q", c.args, stderr, c.want)
		}
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

// status fetches and decodes a node's /status.
func (p *nodeProc) status(client *http.Client) (nodeStatusOutput, *randtree.State, error) {
	var st nodeStatusOutput
	resp, err := client.Get("http://" + p.http + "/status")
	if err != nil {
		return st, nil, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
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
	client := &http.Client{Timeout: 2 * time.Second}
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
func gatherSnapshot(t *testing.T, ctx context.Context, p *nodeProc, client *http.Client) snapshotDoc {
	t.Helper()
	var started gatherStarted
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
		var doc snapshotDoc
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
func checkRootSnapshot(t *testing.T, doc snapshotDoc, root node.ID, spec node.Spec) {
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

// TestNodeProcessesFormAndRepairARandTree builds the binary, runs five
// `crystalball node` processes on loopback, waits until their status
// endpoints show one RandTree of five nodes, SIGKILLs an interior node,
// restarts it and waits for the tree of five to re-form; then the root
// gathers a neighbourhood snapshot (POST /snapshot), which must hold
// consistent checkpoints of the root's neighbours (the restarted node,
// whose checkpoint number started again at 0, among them) on which no
// safety property is violated; finally it stops every node with SIGTERM
// and checks that each exits cleanly.
func TestNodeProcessesFormAndRepairARandTree(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds the binary and runs 5 OS processes for up to a minute")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH to build the binary")
	}
	bin := filepath.Join(t.TempDir(), "crystalball")
	buildArgs := []string{"build", "-o", bin}
	if raceEnabled {
		buildArgs = append(buildArgs, "-race")
	}
	buildCtx, cancelBuild := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelBuild()
	started := time.Now()
	build := exec.CommandContext(buildCtx, goBin, append(buildArgs, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", buildArgs, err, out)
	}
	t.Logf("built %s in %v (race detector: %v)", bin, time.Since(started).Round(time.Millisecond), raceEnabled)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	const n = 5
	ports := freePorts(t, 3*n)
	procs := make([]*nodeProc, n)
	t.Cleanup(func() {
		for _, p := range procs {
			if p != nil {
				p.kill()
			}
		}
		if t.Failed() {
			for _, p := range procs {
				if p != nil && p.out != nil {
					t.Logf("output of %v:\n%s", p.id, p.out)
				}
			}
		}
	})
	for i := range n {
		p := &nodeProc{
			id:     node.ID(i + 1),
			listen: fmt.Sprintf("127.0.0.1:%d", ports[3*i]),
			gossip: fmt.Sprintf("127.0.0.1:%d", ports[3*i+1]),
			http:   fmt.Sprintf("127.0.0.1:%d", ports[3*i+2]),
		}
		p.args = []string{"node", "--service", "randtree", "--fix", "all", "--id", p.id.String(),
			"--listen", p.listen, "--gossip", p.gossip, "--http", p.http, "--label", "mp-test", "--log", "json",
			// Checkpoint numbers advance (and every node gathers) every
			// second, so the restarted node, back at number 0, has to
			// adopt its peers' numbers.
			"--snapshots", "1s"}
		if i > 0 {
			p.args = append(p.args, "--join", procs[0].listen)
		}
		procs[i] = p
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
	client := &http.Client{Timeout: 2 * time.Second}
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
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			t.Fatalf("%v did not stop within the deadline", p.id)
		}
		if p.err != nil || !strings.Contains(p.out.String(), `"msg":"stopped"`) {
			t.Errorf("%v: exit %v after SIGTERM, want a clean stop", p.id, p.err)
		}
		if strings.Contains(p.out.String(), "DATA RACE") {
			t.Errorf("%v: the race detector reported a race", p.id)
		}
	}
}

// TestNodeSnapshotEndpointsWithoutSnapshots: the status server's snapshot
// endpoints say why they have nothing to serve: no snapshot manager (404),
// no snapshot yet (404), a runtime that is not running (503).
func TestNodeSnapshotEndpointsWithoutSnapshots(t *testing.T) {
	svc, err := lookupService("randtree", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := node.DefaultRuntimeConfig()
	cfg.ID = 1
	reg, _ := svc.spec.Registry()
	live, err := snapshot.NewLive(snapshot.Config{Registry: reg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Layers = []node.Layer{live}
	withLive, err := node.NewRuntime(cfg, svc.spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Layers = nil
	without, err := node.NewRuntime(cfg, svc.spec)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		mux          *http.ServeMux
		method, path string
		code         int
		want         string
	}{
		{statusMux(without, nil, svc, time.Now()), "GET", "/snapshot", http.StatusNotFound, "snapshots are off"},
		{statusMux(without, nil, svc, time.Now()), "POST", "/snapshot", http.StatusNotFound, "snapshots are off"},
		{statusMux(without, nil, svc, time.Now()), "GET", "/status", http.StatusOK, `"counters"`},
		{statusMux(withLive, live, svc, time.Now()), "GET", "/snapshot", http.StatusNotFound, "no snapshot gathered yet"},
		{statusMux(withLive, live, svc, time.Now()), "POST", "/snapshot", http.StatusServiceUnavailable, "not running"},
		{statusMux(withLive, live, svc, time.Now()), "GET", "/status", http.StatusOK, `"interval_seconds": 10`},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		c.mux.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", c.method, c.path, w.Code, w.Body, c.code, c.want)
		}
	}
}
