package tool

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/status"
)

// TestNodeProcessesRunChordAndPaxos runs, for Chord and for Paxos, three
// `crystalball node --service S` processes on loopback with snapshots,
// steering and the immediate check: node 1 starts the cluster, 2 and 3
// join through it. Node 1 gathers snapshots (POST /snapshot) until one
// shows the service converged (Chord: a correct ring of three; Paxos:
// every node learned a value) on which no safety property is violated;
// every node answers /status with completed steering rounds and /metrics
// in the Prometheus format; SIGTERM stops each cleanly. Skipped under
// -short.
func TestNodeProcessesRunChordAndPaxos(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: runs 3 OS processes per service")
	}
	bin := nodeBinary(t)
	cases := []struct {
		service string
		// converged reports whether the view of a snapshot of all three
		// nodes shows the service settled, and says how.
		converged func(v node.View) (bool, string)
	}{
		{chord.Name, func(v node.View) (bool, string) {
			s := chord.Summarize(v)
			return s.Ring == 3 && s.SuccessorsCorrect == 3 && s.PredecessorsCorrect == 3, s.String()
		}},
		{paxos.Name, func(v node.View) (bool, string) {
			s := paxos.Summarize(v)
			return s.Learned == 3 && len(s.Values) == 1, s.String()
		}},
	}
	for _, c := range cases {
		t.Run(c.service, func(t *testing.T) { runCluster(t, bin, c.service, c.converged) })
	}
}

// runCluster runs and checks the three-node cluster of
// TestNodeProcessesRunChordAndPaxos for service. The steering rounds
// search 300 states each and take no liveness walks: the test wants
// rounds run at every node, not what they find, and each process runs
// one after every gather while it lives (with 2,000 states and the
// default 32 walks Chord's three processes took 2.3 s of CPU under the
// race detector; the three tests that run clusters here, four services,
// took 10 s with the go build of the binary they used to run, 2.2 s now).
func runCluster(t *testing.T, bin, service string, converged func(node.View) (bool, string)) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterDeadline)
	defer cancel()
	procs := clusterProcs(t, 3)
	client := &http.Client{Timeout: httpTimeout}
	for i, p := range procs {
		p.args = []string{"node", "--service", service, "--fix", "all", "--id", p.id.String(),
			"--listen", p.listen, "--gossip", p.gossip, "--http", p.http, "--label", service + "-test", "--log", "json",
			"--snapshots", "300ms", "--gather", "600ms", "--mode", "steer", "--immediate",
			"--steer-time", "100ms", "--steer-states", "300", "--walks", "0", "--data-dir", t.TempDir()}
		if i > 0 {
			p.args = append(p.args, "--join", procs[0].listen)
		}
		p.start(t, bin)
		if i == 0 { // the others join through n1: wait until it serves
			waitStatus(t, ctx, p, client, func(status.StatusDoc) bool { return true })
		}
	}
	spec := procs[0].spec(t)
	var doc report.Snapshot
	for {
		doc = gatherSnapshot(t, ctx, procs[0], client)
		view, err := snapshotView(doc, spec)
		if err != nil {
			t.Fatal(err)
		}
		ok, summary := converged(view)
		if ok && len(doc.Members) == len(procs) {
			t.Logf("snapshot at n1: cut %d, members %v: %s", doc.CN, doc.Members, summary)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("not converged before the deadline: last snapshot of %v: %s", doc.Members, summary)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range doc.Properties {
		if p.Kind == node.Safety.String() && !p.Holds {
			t.Errorf("n1 reports %s violated on its snapshot: %s", p.Name, p.Error)
		}
	}
	for _, p := range procs {
		st := waitStatus(t, ctx, p, client, func(st status.StatusDoc) bool {
			return st.Steering != nil && st.Steering.Rounds > 0 && st.Snapshots != nil && st.Snapshots.Stats.Gathers > 0
		})
		if st.Service != service || !st.Running || st.Steering.Mode != "steer" || !st.Steering.Immediate {
			t.Errorf("%v: /status service %q running %v steering %+v", p.id, st.Service, st.Running, st.Steering)
		}
		m := fetchMetrics(t, p, client)
		if metricSum(m, "crystalball_steering_rounds_total") == 0 || metricSum(m, "crystalball_snapshot_gathers_total") == 0 ||
			metricSum(m, "crystalball_node_info") != 1 {
			t.Errorf("%v: /metrics has no steering rounds, gathers or node info: %v", p.id, m)
		}
	}
	stopCluster(t, ctx, procs)
}

// clusterProcs returns n node processes, IDs 1..n, with free loopback
// addresses for the service transport, memberlist and the status server,
// not started. The test's cleanup kills those still running and, if the
// test failed, logs their output.
func clusterProcs(t *testing.T, n int) []*nodeProc {
	t.Helper()
	ports := freePorts(t, 3*n)
	procs := make([]*nodeProc, n)
	for i := range procs {
		procs[i] = &nodeProc{id: node.ID(i + 1), listen: fmt.Sprintf("127.0.0.1:%d", ports[3*i]),
			gossip: fmt.Sprintf("127.0.0.1:%d", ports[3*i+1]), http: fmt.Sprintf("127.0.0.1:%d", ports[3*i+2])}
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.kill()
			if t.Failed() && p.out != nil {
				t.Logf("output of %v:\n%s", p.id, p.out)
			}
		}
	})
	return procs
}

// spec returns the built-in service's spec p runs, with its --fix.
func (p *nodeProc) spec(t *testing.T) node.Spec {
	t.Helper()
	service, fix := "", ""
	for i := 0; i+1 < len(p.args); i++ {
		switch p.args[i] {
		case "--service":
			service = p.args[i+1]
		case "--fix":
			fix = p.args[i+1]
		}
	}
	svc, err := testCatalog().lookup(service, SplitList(fix), 0)
	if err != nil {
		t.Fatal(err)
	}
	return svc.spec
}

// snapshotView decodes the checkpoints of a GET /snapshot document.
func snapshotView(doc report.Snapshot, spec node.Spec) (node.View, error) {
	reg, err := spec.Registry()
	if err != nil {
		return nil, err
	}
	s, err := doc.Restore(reg)
	if err != nil {
		return nil, err
	}
	v, err := s.Decode(spec.New)
	if err != nil {
		return nil, fmt.Errorf("snapshot of %v: %w", doc.Gatherer, err)
	}
	return v, nil
}

// waitStatus polls p's /status until ok holds and returns it; it fails
// the test if p exits or the deadline of ctx passes first.
func waitStatus(t *testing.T, ctx context.Context, p *nodeProc, client *http.Client, ok func(status.StatusDoc) bool) status.StatusDoc {
	t.Helper()
	var last status.StatusDoc
	var lastErr error
	for {
		if !p.running() {
			t.Fatalf("%v exited: %v", p.id, p.err)
		}
		st, err := getStatus(client, p.http)
		if err == nil {
			if ok(st) {
				return st
			}
			last = st
		}
		lastErr = err
		select {
		case <-ctx.Done():
			t.Fatalf("%v: /status not as wanted before the deadline: %+v (%v)", p.id, last, lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// fetchMetrics fetches and checks p's /metrics exposition.
func fetchMetrics(t *testing.T, p *nodeProc, client *http.Client) map[string]float64 {
	t.Helper()
	resp, err := client.Get("http://" + p.http + "/metrics")
	if err != nil {
		t.Fatalf("%v /metrics: %v", p.id, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%v /metrics: %s %v", p.id, resp.Status, err)
	}
	return checkExposition(t, string(b))
}

// metricSum sums the samples of the metric name in m (checkExposition's
// samples, keyed name{labels}).
func metricSum(m map[string]float64, name string) float64 {
	var sum float64
	for k, v := range m {
		if strings.HasPrefix(k, name+"{") {
			sum += v
		}
	}
	return sum
}

// stopCluster sends SIGTERM to every process and checks that each stops
// cleanly (exit status 0, "stopped" logged, no race reported) before the
// deadline of ctx.
func stopCluster(t *testing.T, ctx context.Context, procs []*nodeProc) {
	t.Helper()
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			t.Fatalf("%v did not stop within the deadline", p.id)
		}
		out := p.out.String()
		if p.err != nil || !strings.Contains(out, `"msg":"stopped"`) {
			t.Errorf("%v: exit %v after SIGTERM, want a clean stop", p.id, p.err)
		}
		if strings.Contains(out, "DATA RACE") {
			t.Errorf("%v: the race detector reported a race", p.id)
		}
	}
}
