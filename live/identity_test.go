package live

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"

	"go.uber.org/zap"
)

// spoofHello opens a connection to addr whose hello claims id with the
// given service address and returns it after the node answered (or nil
// and the error if it refused).
func spoofHello(t *testing.T, addr string, id node.ID, service string) (net.Conn, error) {
	t.Helper()
	return spoofHelloAs(t, addr, id, service, service)
}

// spoofHelloAs is spoofHello with a gossip address of its own.
func spoofHelloAs(t *testing.T, addr string, id node.ID, service, gossip string) (net.Conn, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err := writeHelloFrame(conn, hello{kind: helloData, id: id, label: "test", service: service, gossip: gossip}); err != nil {
		conn.Close()
		t.Fatal(err)
	}
	if _, err := readHelloFrame(conn); err != nil {
		conn.Close()
		return nil, err
	}
	conn.SetDeadline(time.Time{})
	t.Cleanup(func() { conn.Close() })
	return conn, nil
}

// stopNodes stops the runtimes before goleak looks.
func stopNodes(t *testing.T, rs ...*Runtime) {
	t.Helper()
	for _, r := range rs {
		if err := r.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

func peerAddr(r *Runtime, id node.ID) string {
	for _, p := range r.Status().Peers {
		if p.ID == id {
			return p.ServiceAddr
		}
	}
	return ""
}

// TestRuntimeRefusesSpoofedHello: a connection whose hello claims n2 with
// another service address neither replaces n2's live connection nor
// redirects n1's dials to n2; n2 keeps talking to n1 undisturbed.
func TestRuntimeRefusesSpoofedHello(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNode(t, 1, zap.NewNop())
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())
	defer stopNodes(t, n2, n1)
	if err := n2.Submit(sendNote{To: 1, Text: "before"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get n2's note", gotNote(t, n1, "n2:before"))
	waitFor(t, "n1 to know n2's address", func() bool { return peerAddr(n1, 2) == n2.Addr() })

	trap, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer trap.Close()
	conn, err := spoofHello(t, n1.Addr(), 2, trap.Addr().String())
	if err == nil {
		// Refused connections may see the answer hello first: the
		// refusal is then the end of the stream.
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b [1]byte
		if _, err := conn.Read(b[:]); err == nil {
			t.Fatal("n1 sent data to the spoofer")
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("n1 kept the spoofed connection open")
		}
	}
	if got := peerAddr(n1, 2); got != n2.Addr() {
		t.Errorf("n1 has n2 at %q after the spoof, want %q", got, n2.Addr())
	}
	if st := n1.Status(); st.Counters.HelloConflicts != 1 {
		t.Errorf("hello conflicts = %d, want 1", st.Counters.HelloConflicts)
	}
	if err := n2.Submit(sendNote{To: 1, Text: "after"}); err != nil {
		t.Fatal(err)
	}
	if err := n1.Submit(sendNote{To: 2, Text: "back"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get n2's second note", gotNote(t, n1, "n2:after"))
	waitFor(t, "n2 to get n1's note", gotNote(t, n2, "n1:back"))
	if b := noteState(t, n1).Broken; slices.Contains(b, 2) {
		t.Errorf("n1 lost its connection from n2: broken %v", b)
	}
	if b := noteState(t, n2).Broken; len(b) != 0 {
		t.Errorf("n2 saw transport errors for %v", b)
	}
}

// TestRuntimeForgetsUnconfirmedIDs: an ID that only a hello claimed leaves
// the peer directory after UnconfirmedPeerTTL; memberlist's members stay.
func TestRuntimeForgetsUnconfirmedIDs(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Limits.UnconfirmedPeerTTL = 50 * time.Millisecond })
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())
	defer stopNodes(t, n2, n1)
	waitFor(t, "n1 to learn n2", func() bool { return peerAddr(n1, 2) == n2.Addr() })
	conn, err := spoofHello(t, n1.Addr(), 77, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	waitFor(t, "n1 to forget n77", func() bool { return peerAddr(n1, 77) == "" })
	if got := peerAddr(n1, 2); got != n2.Addr() {
		t.Errorf("n1 has n2 at %q, want %q", got, n2.Addr())
	}
}

// TestDirectoryHelloExpiry pins the directory's rules with a fake clock.
func TestDirectoryHelloExpiry(t *testing.T) {
	now := time.Unix(0, 0)
	d := newDirectory()
	d.now = func() time.Time { return now }
	d.setTTL(time.Minute)
	d.learn(2, "10.0.0.2:1", "10.0.0.2:2")
	d.learnHello(2, "6.6.6.6:1", "6.6.6.6:2")
	d.learnHello(9, "10.0.0.9:1", "")
	if l := d.list(); len(l) != 2 || l[0].ServiceAddr != "10.0.0.2:1" || l[1].ID != 9 {
		t.Fatalf("list = %+v", l)
	}
	now = now.Add(59 * time.Second)
	if l := d.list(); len(l) != 2 {
		t.Fatalf("n9 expired early: %+v", l)
	}
	now = now.Add(2 * time.Second)
	if l := d.list(); len(l) != 1 || l[0].ID != 2 {
		t.Fatalf("after the TTL: %+v", l)
	}
	// A hello for a dead confirmed member may move it (a restart), and a
	// member memberlist confirms no longer expires.
	d.died(2)
	d.learnHello(2, "10.0.0.2:7", "")
	d.learn(2, "10.0.0.2:7", "")
	now = now.Add(time.Hour)
	if l := d.list(); len(l) != 1 || l[0].ServiceAddr != "10.0.0.2:7" {
		t.Fatalf("after restart: %+v", l)
	}
}

// TestRuntimeSameIdentityRedialReplaces: a peer that dials again with the
// same addresses once its old connection is gone (it restarted, or closed
// it) replaces it, and a newcomer with other addresses is admitted once
// the old connection is gone.
func TestRuntimeSameIdentityRedialReplaces(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNode(t, 1, zap.NewNop())
	defer stopNodes(t, n1)
	first, err := spoofHello(t, n1.Addr(), 50, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	first.Close() // the process died: the kernel closes its connections
	second, err := spoofHello(t, n1.Addr(), 50, "127.0.0.1:1")
	if err != nil {
		t.Fatalf("same identity refused: %v", err)
	}
	inbound := func(want bool) func() bool {
		return func() bool {
			for _, p := range n1.Status().Peers {
				if p.ID == 50 {
					return p.Inbound == want
				}
			}
			return !want
		}
	}
	waitFor(t, "n1 to see the second connection from n50", inbound(true))
	second.Close()
	waitFor(t, "n1 to drop the closed connection", inbound(false))
	if _, err := spoofHello(t, n1.Addr(), 50, "127.0.0.1:2"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to admit n50 at its new address", inbound(true))
	if got := n1.Status().Counters.HelloConflicts; got != 0 {
		t.Errorf("hello conflicts = %d", got)
	}
}
