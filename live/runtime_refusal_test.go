package live

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// silentPeer listens on loopback as node 99 and accepts one connection.
// With answer set it answers the handshake and then never reads, so the
// dialler's socket buffers and then its write queue fill; without, it
// never answers the handshake, so the dialler's writer waits for the
// hello (up to HandshakeTimeout) and its queue only ever grows: the bytes
// in it are exactly those the node queued. The returned function closes
// the listener and the connection.
func silentPeer(t *testing.T, answer bool) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		if !answer {
			accepted <- conn // and never read
			return
		}
		if _, err := readHelloFrame(conn); err == nil {
			writeHelloFrame(conn, hello{kind: helloData, id: 99, label: "test"})
		}
		accepted <- conn // and never read again
	}()
	return ln.Addr().String(), func() {
		// Closing the listener ends an Accept still waiting (the runtime
		// may have given up before the goroutine got to it).
		ln.Close()
		if conn, ok := <-accepted; ok {
			conn.Close()
		}
	}
}

// refusalNode starts node 1 with a 16 KiB TrySend bound, a queue of 64
// frames, and write, dial and handshake timeouts no test outlasts (a peer
// that does not read or answer must not be disconnected for it), and
// teaches it node 99's address.
func refusalNode(t *testing.T, logger *zap.Logger, peer string) *Runtime {
	t.Helper()
	n1 := startNoteNodeWith(t, 1, logger, func(c *RuntimeConfig) {
		c.Transport.TrySendQueueBytes = 16 << 10
		c.Transport.SendQueueLen = 64
		c.Transport.WriteTimeout = 10 * time.Minute
		c.Transport.DialTimeout = 10 * time.Minute
		c.Transport.HandshakeTimeout = 10 * time.Minute
	})
	n1.dir.learn(99, peer, "")
	return n1
}

// events returns what noteSvc recorded, its timers left out.
func events(t *testing.T, r *Runtime) []string {
	t.Helper()
	return slices.DeleteFunc(noteState(t, r).Got, func(g string) bool { return strings.HasPrefix(g, "timer:") })
}

// refusedSeqs returns the sequence numbers of the refused tryNotes, in
// the order the service handled their refusals.
func refusedSeqs(t *testing.T, r *Runtime) []int {
	t.Helper()
	var seqs []int
	for _, g := range events(t, r) {
		var seq int
		if _, err := fmt.Sscanf(g, "refused:n99:%d", &seq); err == nil {
			seqs = append(seqs, seq)
		}
	}
	return seqs
}

// fillUntilRefused TrySends batches of four 3.5 KB tryNotes to node 99
// until a whole batch is refused on the dialled connection, and returns
// the next sequence number. A batch (14 KB) fits in the 16 KiB bound of
// an empty queue, so a batch refused whole found more than 12 KB of
// earlier batches waiting: the writer was not keeping up (its socket
// buffers full, or only behind: on loopback they take hundreds of KB, and
// the test does not wait for them to fill).
func fillUntilRefused(t *testing.T, n1 *Runtime) int {
	t.Helper()
	// Dial first (with a small tryNote 0), so what follows is queued on
	// an established connection.
	if err := n1.Submit(trySend{To: 99, First: 0, Count: 1}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the connection to n99", func() bool { return n1.Status().Counters.ConnsDialed == 1 })
	seq := 1
	for {
		if n := len(refusedSeqs(t, n1)); n >= 4 && refusedSeqs(t, n1)[n-4] == seq-4 {
			return seq
		}
		if seq > 100000 { // 350 MB: far past any socket buffer
			t.Fatalf("%d TrySends of 3.5 KB to a peer that does not read: no batch refused", seq)
		}
		if err := n1.Submit(trySend{To: 99, First: seq, Count: 4, Pad: 3500}); err != nil {
			t.Fatal(err)
		}
		seq += 4
	}
}

// TestRuntimeTrySendRefused: TrySends to a peer whose handshake is still
// pending are queued up to TrySendQueueBytes and refused past it, each
// stepped as HandleSendRefused in the order sent; the connection stays
// open (no transport error) and the queue within the bound; a refusal is
// handled before the message the node sent itself just before the
// refused TrySend; and Send, which is never refused, still breaks the
// connection once the queue is full of frames.
func TestRuntimeTrySendRefused(t *testing.T) {
	defer livetest.VerifyNone(t)
	addr, stopPeer := silentPeer(t, false)
	defer stopPeer()
	n1 := refusalNode(t, zap.NewNop(), addr)
	// 3.5 KB notes: four fit in 16 KiB, the fifth is refused.
	if err := n1.Submit(trySend{To: 99, First: 0, Count: 8, Pad: 3500, SelfNote: "self"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the note to self", gotNote(t, n1, "n1:self"))
	want := []string{"refused:n99:4", "refused:n99:5", "refused:n99:6", "refused:n99:7", "n1:self"}
	if got := events(t, n1); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	st := n1.Status()
	c := st.Counters
	if c.SendsRefused != 4 {
		t.Errorf("SendsRefused %d, want 4", c.SendsRefused)
	}
	if c.SendQueueBytes <= 12<<10 || c.SendQueueBytes > 16<<10 {
		t.Errorf("SendQueueBytes %d: want four 3.5 KB frames", c.SendQueueBytes)
	}
	if b := noteState(t, n1).Broken; len(b) != 0 || c.TransportErrors != 0 {
		t.Errorf("transport errors %v (%d): refusals must leave the connection open", b, c.TransportErrors)
	}
	if out, _ := n1.tr.connections(); !slices.Contains(out, 99) {
		t.Errorf("outbound connections %v: the one to n99 was closed", out)
	}
	// A small TrySend that fits under the bound is still accepted.
	if err := n1.Submit(trySend{To: 99, First: 8, Count: 1, Pad: 100}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the small TrySend to be queued", func() bool { return n1.Status().Counters.SendQueueBytes > c.SendQueueBytes })
	// Send ignores the byte bound and breaks the connection once the
	// queue holds SendQueueLen (64) frames, as before TrySend existed: the
	// 60th of these, behind the five queued.
	for range 60 {
		if err := n1.Submit(sendNote{To: 99, Text: strings.Repeat("x", 3500)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the transport error", func() bool { return len(noteState(t, n1).Broken) > 0 })
	if b := noteState(t, n1).Broken; !slices.Equal(b, []node.ID{99}) {
		t.Errorf("transport errors for %v, want one for n99", b)
	}
	if c := n1.Status().Counters; c.SendsRefused != 4 {
		t.Errorf("SendsRefused %d after the Sends, want still 4", c.SendsRefused)
	}
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRuntimeTrySendRefusedByNonReader: on an established connection to a
// peer that does not read, TrySends are accepted while the write queue
// (behind the socket buffers) has room and refused when it is over its
// bound; the connection stays open and the service's count of refusals
// is the runtime's.
func TestRuntimeTrySendRefusedByNonReader(t *testing.T) {
	defer livetest.VerifyNone(t)
	addr, stopPeer := silentPeer(t, true)
	defer stopPeer()
	n1 := refusalNode(t, zap.NewNop(), addr)
	seq := fillUntilRefused(t, n1)
	t.Logf("%d TrySends of 3.5 KB until a batch of 4 was refused whole; %d queued bytes", seq-1, n1.Status().Counters.SendQueueBytes)
	c := n1.Status().Counters
	if n := len(refusedSeqs(t, n1)); c.SendsRefused != uint64(n) {
		t.Errorf("SendsRefused %d, the service handled %d refusals", c.SendsRefused, n)
	}
	// The writer may still be handing frames to the socket buffers (a
	// batch can be refused whole before they are full), so the queue is
	// anywhere up to its bound.
	if c.SendQueueBytes > 16<<10 {
		t.Errorf("SendQueueBytes %d: past the 16 KiB bound", c.SendQueueBytes)
	}
	if b := noteState(t, n1).Broken; len(b) != 0 || c.TransportErrors != 0 {
		t.Errorf("transport errors %v (%d): refusals must leave the connection open", b, c.TransportErrors)
	}
	if out, _ := n1.tr.connections(); !slices.Contains(out, 99) || c.ConnsDialed != 1 {
		t.Errorf("outbound connections %v, %d dialled: want the one to n99 open", out, c.ConnsDialed)
	}
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRuntimeRefusalRetryLoopEnds: a service that answers every refusal
// by TrySending the same message again at once does not keep the core
// goroutine spinning: after maxRefusalChain refusals in a row the runtime
// logs an error and queues the message as a Send, and the node goes on
// serving. A refusal handler's own refused TrySend is stepped right after
// it, ahead of the refusals its sender's handler still has waiting.
func TestRuntimeRefusalRetryLoopEnds(t *testing.T) {
	defer livetest.VerifyNone(t)
	addr, stopPeer := silentPeer(t, false)
	defer stopPeer()
	core, logs := observer.New(zapcore.ErrorLevel)
	n1 := refusalNode(t, zap.New(core), addr)
	// Four 3.5 KB notes are queued; the fifth is refused again and again
	// (its retries go first) until the chain is cut, then the sixth's
	// refusal, waiting all along, is stepped (its retry is queued as well).
	if err := n1.Submit(trySend{To: 99, First: 0, Count: 6, Pad: 3500, Retry: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the refusal chain to be cut", func() bool {
		return logs.FilterMessageSnippet("keeps sending again at once").Len() > 0
	})
	want := append(slices.Repeat([]string{"refused:n99:4"}, maxRefusalChain), "refused:n99:5")
	if got := events(t, n1); !slices.Equal(got, want) {
		t.Errorf("%d events, from %q to %q: want %d refusals of tryNote 4, then one of tryNote 5",
			len(got), got[:min(len(got), 3)], got[max(len(got)-3, 0):], maxRefusalChain)
	}
	c := n1.Status().Counters
	if c.SendsRefused != maxRefusalChain+1 {
		t.Errorf("SendsRefused %d, want maxRefusalChain+1 = %d", c.SendsRefused, maxRefusalChain+1)
	}
	if c.SendQueueBytes <= 16<<10 {
		t.Errorf("SendQueueBytes %d: the message the chain ended with should be queued past the bound", c.SendQueueBytes)
	}
	// Still serving: an application call is handled.
	if err := n1.Submit(sendNote{To: 1, Text: "alive"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the node to go on", gotNote(t, n1, "n1:alive"))
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRuntimeTrySendAsSend: a TrySend that is not refused is a message
// like any other (the peer gets it, in order with Sends), a TrySend to
// self is delivered, and one to a peer without an address is reported as
// a transport error, as a Send would be.
func TestRuntimeTrySendAsSend(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Transport.DialTimeout = 300 * time.Millisecond })
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())
	for _, call := range []node.Message{sendNote{To: 2, Text: "first"}, trySend{To: 2, First: 7, Count: 1}, sendNote{To: 2, Text: "last"}, trySend{To: 1, First: 8, Count: 1}} {
		if err := n1.Submit(call); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "n2 to get the last note", gotNote(t, n2, "n1:last"))
	if got, want := events(t, n2), []string{"n1:first", "n1:try:7", "n1:last"}; !slices.Equal(got, want) {
		t.Errorf("n2 got %q, want %q", got, want)
	}
	waitFor(t, "n1 to get its own TrySend", gotNote(t, n1, "n1:try:8"))
	if err := n1.Submit(trySend{To: 55, First: 9, Count: 1}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the TrySend to n55 to fail", func() bool { return slices.Equal(noteState(t, n1).Broken, []node.ID{55}) })
	if c := n1.Status().Counters; c.SendsRefused != 0 {
		t.Errorf("SendsRefused %d, want 0", c.SendsRefused)
	}
	for _, n := range []*Runtime{n2, n1} {
		if err := n.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
