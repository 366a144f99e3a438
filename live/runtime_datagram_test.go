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

// TestRuntimeDatagrams: a datagram reaches a peer over loopback (on the
// connection messages use, so it arrives with the datagram flag set) and
// the node itself; when the peer stops, the node that only ever sent it
// datagrams hears of no broken connection.
func TestRuntimeDatagrams(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNode(t, 1, zap.NewNop())
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())
	if err := n1.Submit(sendNote{To: 2, Text: "dg", Datagram: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to get the datagram", gotNote(t, n2, "n1:dg"))
	if err := n1.Submit(sendNote{To: 1, Text: "self", Datagram: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get its own datagram", gotNote(t, n1, "n1:self"))
	if c := n1.Status().Counters; c.DatagramsQueued != 1 || c.DatagramsDropped != 0 {
		t.Errorf("n1 counters %+v: want one datagram queued (the one to self is not counted), none dropped", c)
	}
	if err := n2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to close its connection to n2", func() bool { out, _ := n1.tr.connections(); return len(out) == 0 })
	// An absence check: the sleep gives a wrong report time to arrive. A
	// loaded machine can only make it miss one, never fail spuriously.
	time.Sleep(200 * time.Millisecond)
	if b := noteState(t, n1).Broken; len(b) != 0 {
		t.Errorf("transport errors for %v after sending datagrams only", b)
	}
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRuntimeDatagramDecodesFlag: the receiving runtime sees a datagram's
// flag (the wire format carries it), which is how its layers tell it from
// a message.
func TestRuntimeDatagramDecodesFlag(t *testing.T) {
	r := testRegistry(t)
	for _, dg := range []bool{false, true} {
		b, err := r.AppendEnvelope(nil, node.Envelope{From: 3, To: 4, CN: 5, Msg: note{"x"}, Datagram: dg})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.DecodeEnvelope(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Datagram != dg || got.From != 3 || got.To != 4 || got.CN != 5 || got.Msg != (note{"x"}) {
			t.Errorf("datagram=%v: decoded %v", dg, got)
		}
	}
}

// TestRuntimeDatagramToUnreachablePeer: datagrams to a peer that refuses
// connections and to a peer nobody knows the address of are dropped
// silently — no transport error, however long we wait, and later
// datagrams are dropped at once while the redial backoff runs — whereas a
// message to a peer without an address does become a transport error.
func TestRuntimeDatagramToUnreachablePeer(t *testing.T) {
	defer livetest.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) {
		c.Transport.DialTimeout = 300 * time.Millisecond
		c.Transport.RedialBackoff = time.Minute
		c.Transport.MaxRedialBackoff = time.Minute
	})
	n1.dir.learn(99, dead, "")
	for _, to := range []node.ID{99, 77} { // 77: no address at all
		if err := n1.Submit(sendNote{To: to, Text: "anyone?", Datagram: true}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both dials to fail", func() bool { return n1.Status().Counters.DialFailures == 2 })
	// Within the backoff: dropped at once, no new dial.
	for _, to := range []node.ID{99, 77} {
		if err := n1.Submit(sendNote{To: to, Text: "still?", Datagram: true}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the datagrams within the backoff to be dropped", func() bool { return n1.Status().Counters.DatagramsDropped == 2 })
	// An absence check, as above: no transport error and no further dial
	// (the backoff is a minute) however long it waits.
	time.Sleep(500 * time.Millisecond)
	st := n1.Status()
	if b := noteState(t, n1).Broken; len(b) != 0 {
		t.Errorf("transport errors for %v from datagrams", b)
	}
	if c := st.Counters; c.DatagramsQueued != 2 || c.DialFailures != 2 || c.TransportErrors != 0 {
		t.Errorf("counters %+v: want 2 datagrams queued on dials that failed, 2 dropped, no transport error", c)
	}
	// A message to another peer without an address is reported.
	if err := n1.Submit(sendNote{To: 55, Text: "message"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the message to fail", func() bool { return slices.Equal(noteState(t, n1).Broken, []node.ID{55}) })
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}
