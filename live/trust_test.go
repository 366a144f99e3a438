package live

import (
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"

	"github.com/hashicorp/memberlist"
	"go.uber.org/zap"
)

// sendEnvelope writes env as one frame on conn (a spoofed data connection).
func sendEnvelope(t *testing.T, conn net.Conn, env node.Envelope) {
	t.Helper()
	reg, err := node.NewRegistry(noteSpec().Messages...)
	if err != nil {
		t.Fatal(err)
	}
	frame, start := BeginFrame(nil)
	if frame, err = reg.AppendEnvelope(frame, env); err != nil {
		t.Fatal(err)
	}
	FinishFrame(frame, start)
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
}

// TestForgedIDsCannotPoisonCheckpointNumbers: two IDs nobody confirmed
// (hellos claim them; memberlist never admitted them) each send one
// message stamped just below MaxCN. main took them for two peers agreeing
// and caught the node up: its numbers exhausted, every gather failed, and
// a restarted node was poisoned again within seconds. Now they vouch for
// nothing: the messages reach the service, the number stays.
func TestForgedIDsCannotPoisonCheckpointNumbers(t *testing.T) {
	defer livetest.VerifyNone(t)
	reg, err := node.NewRegistry(noteSpec().Messages...)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := snapshot.NewLayer(snapshot.Config{Registry: reg, Interval: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Layers = []layer.Layer{sl} })
	defer stopNodes(t, n1)
	for _, id := range []node.ID{50, 51} {
		conn, err := spoofHello(t, n1.Addr(), id, "127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		sendEnvelope(t, conn, node.Envelope{From: id, To: 1, CN: snapshot.MaxCN - 5, Msg: note{Text: "poison"}})
	}
	waitFor(t, "both forged notes to reach the service", func() bool {
		got := noteState(t, n1).Got
		return slices.Contains(got, "n50:poison") && slices.Contains(got, "n51:poison")
	})
	if st := sl.Status(time.Now()); st.CN > 10 || st.Stats.Exhausted {
		t.Fatalf("two forged IDs moved n1's checkpoint number to %d (exhausted %v)", st.CN, st.Stats.Exhausted)
	}
}

// TestGossipFloodAdmitsNoFakeMember: well-formed alive messages for 2,000
// members nobody proved (their service addresses answer for nobody, or for
// another ID) put none of them in memberlist's table; main admitted every
// one (a flood of 50,000 put ~52,000 members on every node, +113 MB, and
// blinded failure detection for 98 s). A real member joining meanwhile is
// admitted: it proves itself on the service transport.
func TestGossipFloodAdmitsNoFakeMember(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNode(t, 1, zap.NewNop())
	defer stopNodes(t, n1)
	conn, err := net.Dial("udp", n1.GossipAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const fakes = 2000
	for i := range fakes {
		id := node.ID(1000 + i)
		service := "127.0.0.1:1"
		if i%2 == 1 {
			service = n1.Addr() // an address that answers, as n1
		}
		pkt, err := livetest.AliveGossip("test", id.String(), net.IPv4(127, 0, 0, 1), uint16(40000+i%20000), encodeMeta(id, service), 1)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(pkt)
		if i%100 == 99 {
			// Let memberlist's reader keep up, so few packets are lost
			// in the socket buffer.
			waitFor(t, "memberlist to read the packets", func() bool {
				return n1.Status().Counters.MembersUnproven >= uint64(i+1)/2
			})
		}
	}
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())
	defer stopNodes(t, n2)
	waitFor(t, "n1 to admit n2", func() bool { return n1.ml.NumMembers() == 2 })
	c := n1.Status().Counters
	if got := n1.ml.NumMembers(); got != 2 {
		t.Fatalf("memberlist holds %d members after a flood of %d fakes, want n1 and n2", got, fakes)
	}
	if len(n1.Status().Peers) != 1 {
		t.Fatalf("peers %+v", n1.Status().Peers)
	}
	t.Logf("%d alive messages refused, %d proofs, %d failed", c.MembersUnproven, c.MemberProofs, c.MemberProofFailures)
}

// TestProvedMemberIsAdmittedAtOnce: a member whose one alive message was
// refused (not proved yet) is admitted as soon as its proof succeeds,
// without another alive message or memberlist's periodic push/pull (off
// here). Before, it waited for either: an alive message reaches only a
// few nodes and a refusing node does not pass it on, so after a restart
// most nodes learned the member only at a push/pull up to 15 s later, and
// could not send to it meanwhile (bench/crash's five-node RandTree
// clusters took more than a minute to re-form).
func TestProvedMemberIsAdmittedAtOnce(t *testing.T) {
	defer livetest.VerifyNone(t)
	noPushPull := func(c *RuntimeConfig) {
		c.Gossip.Tune = func(mc *memberlist.Config) { mc.PushPullInterval = 0 }
	}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), noPushPull)
	n3 := startNoteNodeWith(t, 3, zap.NewNop(), noPushPull) // on its own: joins nobody
	defer stopNodes(t, n1, n3)
	host, port, err := net.SplitHostPort(n3.GossipAddr())
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	pkt, err := livetest.AliveGossip("test", "n3", net.ParseIP(host), uint16(p), encodeMeta(3, n3.Addr()), 1)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("udp", n1.GossipAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(pkt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to admit n3 after proving it", func() bool {
		_, ok := n1.dir.confirmed(3)
		return n1.ml.NumMembers() == 2 && ok
	})
	waitFor(t, "n3 to learn n1 from the exchange", func() bool { return n3.ml.NumMembers() == 2 })
	if c := n1.Status().Counters; c.MembersUnproven == 0 || c.MemberProofs == 0 || c.MemberPushPulls == 0 {
		t.Fatalf("counters %+v: want a refusal, a proof and a push/pull", c)
	}
}

// freeAddr returns a loopback address nothing listens on (free a moment
// ago).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestFailedProofIsRetriedAfterTheBackoff: a member whose proof failed
// (it was down) and whose alive message comes again within the backoff
// (it is back) is proved once the backoff ends, and admitted. Before, a
// request within the backoff was dropped, so a node that dialled a killed
// peer a moment before it restarted refused the peer's own alive messages
// and admitted it only at memberlist's next push/pull (off here).
func TestFailedProofIsRetriedAfterTheBackoff(t *testing.T) {
	defer livetest.VerifyNone(t)
	noPushPull := func(c *RuntimeConfig) {
		c.Gossip.Tune = func(mc *memberlist.Config) { mc.PushPullInterval = 0 }
	}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), noPushPull)
	defer stopNodes(t, n1)
	const backoff = 5 * time.Second // long enough that the second alive message surely falls within it
	n1.prover.mu.Lock()
	n1.prover.backoff = backoff
	n1.prover.mu.Unlock()
	service, gossip := freeAddr(t), freeAddr(t)
	host, port, _ := net.SplitHostPort(gossip)
	p, _ := strconv.Atoi(port)
	pkt, err := livetest.AliveGossip("test", "n3", net.ParseIP(host), uint16(p), encodeMeta(3, service), 1)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("udp", n1.GossipAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(pkt) // n3 is down: the proof fails
	waitFor(t, "n1's proof of n3 to fail", func() bool { return n1.Status().Counters.MemberProofFailures == 1 })
	failed := time.Now()
	n3 := startNoteNodeWith(t, 3, zap.NewNop(), func(c *RuntimeConfig) {
		noPushPull(c)
		c.Listen, c.Gossip.Bind = service, gossip
	})
	defer stopNodes(t, n3)
	conn.Write(pkt) // n3's alive message now that it is back
	if time.Since(failed) >= backoff {
		t.Logf("n3 started %v after the failed proof, past the backoff: the retry is not exercised", time.Since(failed))
	}
	waitFor(t, "n1 to admit n3 once the backoff ended", func() bool {
		_, ok := n1.dir.confirmed(3)
		return n1.ml.NumMembers() == 2 && ok
	})
	if c := n1.Status().Counters; c.MemberProofFailures != 1 || c.MemberProofs != 1 || c.MemberPushPulls != 1 {
		t.Fatalf("counters %+v: want one failed proof, then one proof and one push/pull", c)
	}
}

// TestCopiedHelloDoesNotReplaceALiveConnection: without TLS, a hello that
// copies a live peer's exact addresses and ID is the peer redialling or a
// spoofer, and only the peer can close (or silence) its old connection:
// the spoofer is refused, the peer's connection stays, and n1's service
// sees no transport error for it. main replaced the live connection at
// once, so a spoofer repeating the hello kept the edge broken.
func TestCopiedHelloDoesNotReplaceALiveConnection(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Transport.HandshakeTimeout = 300 * time.Millisecond })
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())
	defer stopNodes(t, n1, n2)
	if err := n2.Submit(sendNote{To: 1, Text: "before"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to hear n2", func() bool { return slices.Contains(noteState(t, n1).Got, "n2:before") })
	for range 3 {
		conn, err := spoofHelloAs(t, n1.Addr(), 2, n2.Addr(), n2.GossipAddr())
		if err != nil {
			t.Fatal(err)
		}
		waitClosed(t, conn, "the spoofer's connection")
	}
	if err := n2.Submit(sendNote{To: 1, Text: "after"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to hear n2 again", func() bool { return slices.Contains(noteState(t, n1).Got, "n2:after") })
	if st := noteState(t, n1); len(st.Broken) != 0 {
		t.Fatalf("n1's service saw its connection from n2 break %d times", len(st.Broken))
	}
	c := n1.Status().Counters
	if c.HelloConflicts != 3 {
		t.Fatalf("counters %+v: want 3 conflicts", c)
	}
}
