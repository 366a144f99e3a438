package live

import (
	"encoding/binary"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"

	"go.uber.org/zap"
)

// waitClosed reads conn until the node closes it; it fails the test if the
// node keeps it open for 10s.
func waitClosed(t *testing.T, conn net.Conn, what string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	_, err := conn.Read(b[:])
	if err == nil {
		t.Fatalf("%s: the node sent data on an inbound connection", what)
	}
	if isTimeout(err) {
		t.Fatalf("%s: the node kept the connection open", what)
	}
}

// TestRuntimeBoundsInboundConns: idle connections after a hello are held
// only up to MaxInboundConnsPerHost: each one past it evicts the oldest
// admitted connection of an unconfirmed peer (these all are), so 4 stay
// open and the other 16 are closed and counted. Which 4 is not asserted:
// the node answers a hello before it admits the connection, so the next
// connection may arrive while the previous one is not yet a candidate,
// and under load the survivors need not be the last four.
func TestRuntimeBoundsInboundConns(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Limits.MaxInboundConnsPerHost = 4 })
	defer stopNodes(t, n1)
	var conns []net.Conn
	for i := range 20 {
		conn, err := spoofHello(t, n1.Addr(), 100+node.ID(i), "")
		if err != nil {
			t.Fatalf("connection %d refused: %v", i, err)
		}
		defer conn.Close()
		conns = append(conns, conn)
	}
	waitFor(t, "16 evictions", func() bool { return n1.Status().Counters.ConnsEvicted >= 16 })
	// Every eviction has closed its socket: a read on a closed one ends at
	// once, on an open one at the deadline. The reads run side by side,
	// since a read past its deadline reports the timeout even on a socket
	// whose end has arrived.
	open := make([]bool, len(conns))
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			var b [1]byte
			_, err := conn.Read(b[:])
			open[i] = err == nil || isTimeout(err)
		}()
	}
	wg.Wait()
	closed := 0
	for _, o := range open {
		if !o {
			closed++
		}
	}
	c := n1.Status().Counters
	if closed != 16 || c.ConnsEvicted != 16 || c.ConnsRefused != 0 {
		t.Errorf("%d of 20 connections closed, counters %+v: want 16 closed and evicted, none refused", closed, c)
	}
}

// TestRuntimeCutsIdlePeers: a peer that sends nothing after its hello is
// disconnected after IdleTimeout, while a real peer's quiet connection
// lives on through its keepalives.
func TestRuntimeCutsIdlePeers(t *testing.T) {
	defer livetest.VerifyNone(t)
	// Long enough that a loaded machine does not starve n2's keepalives (every
	// IdleTimeout/3) past it: at 150ms, 2 runs in 8 cut n2 under load.
	short := func(c *RuntimeConfig) { c.Limits.IdleTimeout = 2 * time.Second }
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), short)
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), short, n1.Addr())
	defer stopNodes(t, n2, n1)
	if err := n2.Submit(sendNote{To: 1, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get the note", gotNote(t, n1, "n2:hi"))
	for range 3 {
		conn, err := spoofHello(t, n1.Addr(), 99, "")
		if err != nil {
			t.Fatal(err)
		}
		waitClosed(t, conn, "idle peer")
	}
	if b := noteState(t, n1).Broken; slices.Contains(b, 2) {
		t.Errorf("n1's quiet connection from n2 was cut: broken %v", b)
	}
	if b := noteState(t, n2).Broken; len(b) != 0 {
		t.Errorf("n2 saw transport errors for %v", b)
	}
	if err := n2.Submit(sendNote{To: 1, Text: "still"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get the second note", gotNote(t, n1, "n2:still"))
}

// TestRuntimeCutsTricklingPeers: a peer that trickles a frame slower than
// FrameReadTimeout allows is disconnected before the frame is complete.
func TestRuntimeCutsTricklingPeers(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Limits.FrameReadTimeout = 200 * time.Millisecond })
	defer stopNodes(t, n1)
	conn, err := spoofHello(t, n1.Addr(), 99, "")
	if err != nil {
		t.Fatal(err)
	}
	// A 4000-byte frame at one byte per 20ms would take 80s.
	hdr := binary.BigEndian.AppendUint32(nil, 4000)
	hdr = append(hdr, 0, 0, 0, 0, 'x')
	if _, err := conn.Write(hdr); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("the trickling peer was not cut off")
		}
		time.Sleep(20 * time.Millisecond) // the attacker's pace, not an expectation
		if _, err := conn.Write([]byte{'x'}); err != nil {
			break
		}
	}
}

// The resource bounds: zero means the default, negative is an error that
// names the field.
func TestRuntimeConfigLimits(t *testing.T) {
	c := RuntimeConfig{ID: 1}.withDefaults()
	if c.Limits.MaxInboundConns != DefaultMaxInboundConns || c.Limits.MaxInboundConnsPerHost != DefaultMaxInboundConnsPerHost ||
		c.Limits.IdleTimeout != 2*time.Minute || c.Limits.FrameReadTimeout != 30*time.Second || c.Limits.UnconfirmedPeerTTL != DefaultUnconfirmedPeerTTL {
		t.Errorf("defaults: %+v", c)
	}
	for name, tune := range map[string]func(*RuntimeConfig){
		"MaxInboundConns":        func(c *RuntimeConfig) { c.Limits.MaxInboundConns = -1 },
		"MaxInboundConnsPerHost": func(c *RuntimeConfig) { c.Limits.MaxInboundConnsPerHost = -5 },
		"IdleTimeout":            func(c *RuntimeConfig) { c.Limits.IdleTimeout = -time.Second },
		"FrameReadTimeout":       func(c *RuntimeConfig) { c.Limits.FrameReadTimeout = -1 },
		"UnconfirmedPeerTTL":     func(c *RuntimeConfig) { c.Limits.UnconfirmedPeerTTL = -time.Minute },
	} {
		c := RuntimeConfig{ID: 1}
		tune(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "live: RuntimeConfig.Limits."+name+" ") {
			t.Errorf("%s negative: %v", name, err)
		}
	}
}

// The log limiter lets burst lines through per interval and reports the
// dropped ones with the next line let through.
func TestLogLimiter(t *testing.T) {
	now := time.Unix(0, 0)
	l := newLogLimiter(time.Second, 3)
	l.now = func() time.Time { return now }
	passed := 0
	for range 100 {
		if ok, _ := l.allow(); ok {
			passed++
		}
	}
	if passed != 3 {
		t.Fatalf("%d lines passed, want 3", passed)
	}
	now = now.Add(time.Second)
	if ok, dropped := l.allow(); !ok || dropped != 97 {
		t.Fatalf("next interval: %v, %d dropped", ok, dropped)
	}
}
