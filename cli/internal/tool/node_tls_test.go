package tool

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/status"
)

// TestNodeTLSFlagsAreUsageErrors: the TLS flags go together, and a
// certificate, key, CA or gossip key file that is missing, too large,
// malformed or for another node is a one-line usage error.
func TestNodeTLSFlagsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	ca := livetest.NewCA(t, "cluster")
	cert, key, cas := ca.WriteNodeFiles(t, dir, 3)
	gkey := filepath.Join(dir, "gossip.key")
	if err := os.WriteFile(gkey, []byte("# no key in here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	node3 := []string{"node", "--id", "3", "--listen", "127.0.0.1:0"}
	cases := []struct {
		args []string
		want string
	}{
		{append(node3, "--tls-cert", cert), "give all three or none"},
		{append(node3, "--tls-cert", cert, "--tls-key", key), "give all three or none"},
		{append(node3, "--tls-ca", cas), "give all three or none"},
		{append(node3, "--tls-cert", cert, "--tls-key", key, "--tls-ca", filepath.Join(dir, "nope")), "no such file"},
		{append(node3, "--tls-cert", cert, "--tls-key", key, "--tls-ca", "/dev/zero"), "larger than"},
		{append(node3, "--tls-cert", cert, "--tls-key", cas, "--tls-ca", cas), "certificate and key"},
		{append(node3, "--tls-cert", cert, "--tls-key", key, "--tls-ca", key), "want CERTIFICATE"},
		{[]string{"node", "--id", "2", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--tls-ca", cas},
			"RuntimeConfig.TLS: bad certificate: the certificate names n3, not this node (n2)"},
		{append(node3, "--gossip-key-file", gkey), "--gossip-key-file: live: bad gossip key file: " + gkey + ": no key"},
		{append(node3, "--gossip-key-file", "/dev/zero"), "larger than"},
	}
	for _, c := range cases {
		expectUsageError(t, c.args, c.want)
	}
}

// TestNodeTLSClusterInProcess runs three RandTree nodes in this process
// (runNodeUntil, the CLI's own wiring) with --tls-cert, --tls-key,
// --tls-ca and --gossip-key-file: they form a cluster and their status
// shows the messages exchanged. Then two strangers try to join through n1:
// n4 with a certificate of another CA (refused by the service transport,
// counted in n1's frames_rejected), and n5 with the cluster's certificate
// but another gossip key (refused by memberlist). Neither becomes a peer.
func TestNodeTLSClusterInProcess(t *testing.T) {
	defer verifyNoLeaks(t)()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deadline := time.Now().Add(clusterDeadline) // a hang guard
	client := &http.Client{Timeout: httpTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	dir := t.TempDir()
	ca := livetest.NewCA(t, "cluster")
	gossipKey := writeFile(t, dir, "gossip.key", "# the cluster's key\nMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n")
	otherKey := writeFile(t, dir, "other.key", "00112233445566778899aabbccddeeff\n")
	nodes := make([]*inProcNode, 5)
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range nodes {
				if n != nil {
					t.Logf("log of %v:\n%s", n.id, n.log)
				}
			}
		}
	})
	start := func(i int, ca *livetest.CA, gkey string, more ...string) *inProcNode {
		id := node.ID(i + 1)
		cert, key, cas := ca.WriteNodeFiles(t, t.TempDir(), uint64(id))
		// Every port is 0, picked by the kernel when the node binds it: a
		// port picked free and closed beforehand could be taken by another
		// test of this binary in between (n2 once never started so).
		args := append([]string{"--service", "randtree", "--id", id.String(), "--label", "tls-test", "--log", "json", "--snapshots", "0",
			"--tls-cert", cert, "--tls-key", key, "--tls-ca", cas, "--gossip-key-file", gkey}, zeroPortArgs...)
		if i > 0 {
			args = append(args, "--join", nodes[0].listen)
		}
		args = append(args, more...)
		n := &inProcNode{id: id, stdout: &syncBuffer{}, log: &syncBuffer{}, done: make(chan error, 1)}
		nctx, ncancel := context.WithCancel(ctx)
		n.cancel = ncancel
		go func() { n.done <- runNodeUntil(nctx, testCatalog(), args, n.stdout, n.log) }()
		nodes[i] = n
		return n
	}
	// serving waits for a member's addresses on its stdout.
	serving := func(n *inProcNode) *inProcNode {
		for {
			if m := zeroPortStartup.FindStringSubmatch(n.stdout.String()); m != nil {
				n.listen, n.web = m[1], m[2]
				return n
			}
			select {
			case err := <-n.done:
				t.Fatalf("%v stopped: %v", n.id, err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v reported no addresses before the deadline", n.id)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	n1 := serving(start(0, ca, gossipKey))
	waitNodeStatus(t, n1, client, deadline, func(status.StatusDoc) bool { return true })
	serving(start(1, ca, gossipKey))
	serving(start(2, ca, gossipKey))
	// A member that stops fails the test at once, with its error: the
	// others would wait for it until the deadline.
	running := func(ns ...*inProcNode) {
		for _, m := range ns {
			select {
			case err := <-m.done:
				t.Fatalf("%v stopped: %v", m.id, err)
			default:
			}
		}
	}
	for _, n := range nodes[:3] {
		waitNodeStatus(t, n, client, deadline, func(st status.StatusDoc) bool {
			running(nodes[:3]...)
			return alivePeers(st) == 2 && st.Counters.MessagesIn > 0
		})
	}
	if l := n1.log.String(); strings.Contains(l, "gossip is unencrypted") || strings.Contains(l, "plaintext") {
		t.Errorf("n1 warns of plaintext although TLS and a gossip key are set:\n%s", l)
	}

	before := waitNodeStatus(t, n1, client, deadline, func(status.StatusDoc) bool { return true }).Counters.FramesRejected
	n4 := start(3, livetest.NewCA(t, "other"), gossipKey)
	waitNodeStatus(t, n1, client, deadline, func(st status.StatusDoc) bool { return st.Counters.FramesRejected > before })
	n4.cancel()
	if err := <-n4.done; err == nil || !strings.Contains(err.Error(), "join") {
		t.Errorf("n4 with another CA's certificate: %v, want a failed join", err)
	}
	// n5 passes the service transport's handshake: wait until memberlist
	// has refused it (it retries until its JoinTimeout, 10s, otherwise).
	n5 := start(4, ca, otherKey, "--log-level", "debug")
	for !strings.Contains(n5.log.String(), "memberlist: failed to join") {
		if time.Now().After(deadline) {
			t.Fatalf("n5's memberlist join never failed:\n%s", n5.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	n5.cancel()
	if err := <-n5.done; err == nil || !strings.Contains(err.Error(), "join") {
		t.Errorf("n5 with another gossip key: %v, want a failed join", err)
	}
	st := waitNodeStatus(t, n1, client, deadline, func(status.StatusDoc) bool { return true })
	for _, p := range st.Peers {
		if p.ID > 3 {
			t.Errorf("a stranger is n1's peer: %+v", p)
		}
	}
	cancel()
	for _, n := range nodes[:3] {
		select {
		case err := <-n.done:
			if err != nil {
				t.Errorf("%v: %v", n.id, err)
			}
		case <-time.After(clusterDeadline):
			t.Fatalf("%v did not stop", n.id)
		}
	}
}

// inProcNode is a node run by runNodeUntil on a goroutine of the test.
type inProcNode struct {
	id          node.ID
	listen, web string // as the node reports them on stdout (serving)
	stdout, log *syncBuffer
	cancel      context.CancelFunc
	done        chan error
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func alivePeers(st status.StatusDoc) int {
	n := 0
	for _, p := range st.Peers {
		if p.Alive {
			n++
		}
	}
	return n
}

// waitNodeStatus polls n's /status until ok holds and returns it; it fails
// the test if n stops or the deadline passes first.
func waitNodeStatus(t *testing.T, n *inProcNode, client *http.Client, deadline time.Time, ok func(status.StatusDoc) bool) status.StatusDoc {
	t.Helper()
	var last status.StatusDoc
	for {
		select {
		case err := <-n.done:
			t.Fatalf("%v stopped: %v", n.id, err)
		default:
		}
		if st, err := getStatus(client, n.web); err == nil {
			if ok(st) {
				return st
			}
			last = st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: /status not as wanted before the deadline: %+v", n.id, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
