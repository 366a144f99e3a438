package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/status"
	"go.uber.org/goleak"
)

// runMainEnv makes the test binary run main (cli.Main) instead of the
// tests: the tests run the program as processes without building it.
const runMainEnv = "ETCDRAFT_EXAMPLE_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Args = append([]string{"etcdraft"}, os.Args[1:]...)
		main()
		os.Exit(0) // cli.Main exits; not reached
	}
	goleak.VerifyTestMain(m)
}

// program runs the example with args and returns its standard output; it
// fails the test unless the program exits with 0 before ctx's deadline.
func program(t *testing.T, ctx context.Context, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("etcdraft %s: %v\nstderr: %s\nstdout: %s", strings.Join(args, " "), err, stderr.Bytes(), out)
	}
	return out
}

// checkDoc is the part of a check report the tests read.
type checkDoc struct {
	Format     string `json:"format"`
	Target     string `json:"target"`
	Options    string `json:"options"`
	Unique     int    `json:"unique"`
	Violations []struct {
		Property string `json:"property"`
		Depth    int    `json:"depth"`
	} `json:"violations"`
}

// TestCheckRunsTheProductionConfiguration: the program's store is raft as
// etcd configures it (PreVote, CheckQuorum, ReadIndex reads), and check
// from the three-node start finds nothing to depth 6 in 812 states: a
// pre-vote round before each election puts the planted bug at depth 10
// (TestCheckFindsTheBugAndTheFixIsClean, a long test; the package kv's
// tests find it at depth 6 in raft's zero configuration).
func TestCheckRunsTheProductionConfiguration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := program(t, ctx, "check", "--nodes", "3", "--max-depth", "6", "--json")
	var doc checkDoc
	if err := json.Unmarshal(out, &doc); err != nil || doc.Target != kv.Name || len(doc.Violations) != 0 || doc.Unique != 812 ||
		doc.Options != kv.DefaultOptions().String() {
		t.Fatalf("check: %v\n%s", err, out)
	}
}

// TestSafetyWalksFindThePlantedBug: check --strategy walk on a service
// without liveness properties takes safety walks, which reach the
// planted bug at depth 22 in the 75th walk of seed 1; with the
// correction 100 walks find nothing.
func TestSafetyWalksFindThePlantedBug(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range []struct {
		fix  []string
		want string
	}{{nil, "StateMachineSafety"}, {[]string{"--fix", "all"}, ""}} {
		args := append([]string{"check", "--nodes", "3", "--strategy", "walk", "--walks", "100", "--dmax", "300", "--budget", "0", "--json"}, c.fix...)
		out := program(t, ctx, args...)
		var doc checkDoc
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("check %v: %v\n%s", c.fix, err, out)
		}
		got := ""
		if len(doc.Violations) > 0 {
			got = doc.Violations[0].Property
		}
		if got != c.want {
			t.Errorf("check %v: violation %q, want %q\n%s", c.fix, got, c.want, out)
		}
	}
}

// proc is one `etcdraft node` process.
type proc struct {
	id, listen, gossip, http string
	dir                      string // its data directory
	args                     []string
	cmd                      *exec.Cmd
	out                      *syncBuffer
	done                     chan struct{}
	err                      error
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

func (p *proc) start(t *testing.T) {
	t.Helper()
	p.out = &syncBuffer{}
	p.cmd = exec.Command(os.Args[0], p.args...)
	p.cmd.Env = append(os.Environ(), runMainEnv+"=1")
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

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return p.cmd != nil
	}
}

func (p *proc) kill() {
	if p.running() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// observation fetches a node's /status and its store's observation.
func (p *proc) observation(client *http.Client) (status.StatusDoc, kv.Observation, error) {
	var st status.StatusDoc
	var o kv.Observation
	resp, err := client.Get("http://" + p.http + "/status")
	if err != nil {
		return st, o, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, o, err
	}
	err = json.Unmarshal(st.State, &o)
	return st, o, err
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
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

// agreed reports whether the observations show one leader followed by
// every node, and every node's store holding the keys of want.
func agreed(obs map[string]kv.Observation, want map[string]string) (bool, string) {
	var leader uint64
	for _, o := range obs {
		if o.State == "StateLeader" {
			leader = o.Lead
		}
	}
	var why []string
	for id, o := range obs {
		if leader == 0 || o.Lead != leader {
			why = append(why, fmt.Sprintf("n%s follows %d (leader %d)", id, o.Lead, leader))
		}
		for k := range want {
			if _, ok := o.App.KV[k]; !ok {
				why = append(why, fmt.Sprintf("n%s has no %s", id, k))
			}
		}
	}
	return len(why) == 0, strings.Join(why, "; ")
}

// TestLiveCluster runs three `etcdraft node` processes on loopback, each
// with its data directory: they elect a leader and replicate every node's
// first write. Node 2 is then killed (SIGKILL) and restarted: the new
// process reads its durable state back and follows the leader again. /status shows each node's observation: its
// role, leader and store. SIGTERM stops every process cleanly.
func TestLiveCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: runs 3 OS processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ports := freePorts(t, 9)
	procs := make([]*proc, 3)
	for i := range procs {
		p := &proc{id: fmt.Sprint(i + 1), listen: fmt.Sprintf("127.0.0.1:%d", ports[3*i]),
			gossip: fmt.Sprintf("127.0.0.1:%d", ports[3*i+1]), http: fmt.Sprintf("127.0.0.1:%d", ports[3*i+2]), dir: t.TempDir()}
		p.args = []string{"node", "--fix", "all", "--id", p.id, "--listen", p.listen, "--gossip", p.gossip,
			"--http", p.http, "--data-dir", p.dir, "--label", "etcdkv-test", "--log", "json"}
		if i > 0 {
			p.args = append(p.args, "--join", procs[0].listen)
		}
		procs[i] = p
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.kill()
			if t.Failed() && p.out != nil {
				t.Logf("output of n%s:\n%s", p.id, p.out)
			}
		}
	})
	client := &http.Client{Timeout: 5 * time.Second}
	want := map[string]string{"k1": "v1", "k2": "v2", "k3": "v3"}
	waitAgreed := func(what string) {
		t.Helper()
		for {
			obs := map[string]kv.Observation{}
			for _, p := range procs {
				if !p.running() {
					t.Fatalf("n%s exited: %v\n%s", p.id, p.err, p.out)
				}
				st, o, err := p.observation(client)
				if err == nil && st.Running && st.Service == kv.Name {
					obs[p.id] = o
				}
			}
			ok, why := agreed(obs, want)
			if ok && len(obs) == len(procs) {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: not agreed before the deadline: %s", what, why)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	for i, p := range procs {
		p.start(t)
		if i == 0 { // the others join through n1: wait until it serves
			for {
				if _, _, err := p.observation(client); err == nil {
					break
				}
				select {
				case <-p.done:
					t.Fatalf("n1 exited: %v", p.err)
				case <-ctx.Done():
					t.Fatal("n1 never served /status")
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}
	waitAgreed("three fresh nodes")
	_, before, err := procs[1].observation(client)
	if err != nil {
		t.Fatal(err)
	}
	procs[1].kill()
	procs[1].start(t)
	for {
		if _, o, err := procs[1].observation(client); err == nil {
			// Read back from its data directory before any message.
			if o.Term < before.Term || o.SnapIndex+uint64(len(o.Log)) < before.SnapIndex+uint64(len(before.Log)) {
				t.Errorf("restarted n2 is in term %d with %d entries; it was in term %d with %d", o.Term, len(o.Log), before.Term, len(before.Log))
			}
			break
		}
		select {
		case <-procs[1].done:
			t.Fatalf("the restarted n2 exited: %v", procs[1].err)
		case <-ctx.Done():
			t.Fatal("the restarted n2 never served /status")
		case <-time.After(20 * time.Millisecond):
		}
	}
	waitAgreed("after n2 restarted")
	for _, p := range procs {
		_, o, err := p.observation(client)
		if err != nil || len(o.App.KV) == 0 {
			t.Errorf("n%s: no key applied (%v): %+v", p.id, err, o.App)
		}
	}
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			t.Fatalf("n%s did not stop", p.id)
		}
		if p.err != nil || !strings.Contains(p.out.String(), `"msg":"stopped"`) || strings.Contains(p.out.String(), "DATA RACE") {
			t.Errorf("n%s: exit %v after SIGTERM, want a clean stop", p.id, p.err)
		}
	}
}
