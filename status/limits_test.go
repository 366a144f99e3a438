package status

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live"
)

// serveTest serves a test server with cfg on a loopback listener until the
// test ends; it returns the server and its address.
func serveTest(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s := newTestServer(t, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		<-served
	})
	return s, ln.Addr().String()
}

// closedBy reports whether the server closed conn within the deadline
// (a read returns EOF or a reset rather than a timeout).
func closedBy(conn net.Conn, deadline time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(deadline))
	_, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// TestSlowBodyIsCut: a POST whose body trickles in a byte at a time is
// cut within the default read timeout (main held it for as long as the
// client liked: 2,000 of them held 2,000 descriptors and goroutines).
func TestSlowBodyIsCut(t *testing.T) {
	_, addr := serveTest(t, Config{Runtime: &fakeRuntime{st: live.Status{ID: 1}}})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n")
	done := make(chan bool, 1)
	go func() { done <- closedBy(conn, time.Minute) }()
	// Trickle a byte every 100ms until the server gives up (or the
	// guard below does).
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case closed := <-done:
			if !closed {
				t.Fatal("a body trickling in a byte at a time held its connection for a minute")
			}
			return
		case <-tick.C:
			conn.Write([]byte("x"))
		}
	}
}

// TestLargeBodyIsRefused: a body over the bound gets 413 before anything
// runs; within it, the request is served.
func TestLargeBodyIsRefused(t *testing.T) {
	s, addr := serveTest(t, Config{Runtime: &fakeRuntime{st: live.Status{ID: 1}}})
	resp, err := http.Post("http://"+addr+"/snapshot", "text/plain", strings.NewReader(strings.Repeat("x", 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 1 MiB body: %s, want 413", resp.Status)
	}
	resp, err = http.Post("http://"+addr+"/snapshot", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound { // no snapshot manager: the handler ran
		t.Fatalf("a 1-byte body: %s", resp.Status)
	}
	if v, _ := value(scrape(t, s.Handler()), "crystalball_http_bodies_refused_total"); v != 1 {
		t.Errorf("bodies refused = %v", v)
	}
}

// TestConnectionCap: connections beyond MaxConns are closed as soon as
// they are accepted, and counted; a slot freed serves again.
func TestConnectionCap(t *testing.T) {
	const cap = 4
	s, addr := serveTest(t, Config{Runtime: &fakeRuntime{st: live.Status{ID: 1}}, Limits: Limits{MaxConns: cap}})
	var held []net.Conn
	for range cap {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n") // headers never finish
		held = append(held, c)
	}
	// Each held connection is accepted, and in a slot, once the server
	// answers a request that follows it on the same connection: wait for
	// the count instead.
	deadline := time.Now().Add(time.Minute)
	for s.http.open.Load() < cap {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", s.http.open.Load(), cap)
		}
		time.Sleep(time.Millisecond)
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if !closedBy(extra, time.Minute) {
		t.Fatal("a connection over the cap stayed open")
	}
	if got := s.http.connsRefused.Load(); got != 1 {
		t.Errorf("refused = %d", got)
	}
	held[0].Close()
	for s.http.open.Load() >= cap {
		if time.Now().After(deadline) {
			t.Fatal("a closed connection kept its slot")
		}
		time.Sleep(time.Millisecond)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after a slot freed: %v %v", resp, err)
	}
	resp.Body.Close()
}
