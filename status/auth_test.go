package status

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func post(h http.Handler, remote, auth string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/snapshot", nil)
	req.RemoteAddr = remote
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	h.ServeHTTP(w, req)
	return w
}

// Without a token, POST /snapshot is served to loopback clients only;
// GET stays open to all.
func TestPostLoopbackOnlyByDefault(t *testing.T) {
	snaps := &fakeSnapshots{}
	h := newTestServer(t, Config{Runtime: &fakeRuntime{at: t0}, Snapshots: snaps, SnapshotDoc: noDoc}).Handler()
	for _, remote := range []string{"192.0.2.1:1234", "10.0.0.7:80", "[2001:db8::1]:9"} {
		if w := post(h, remote, ""); w.Code != http.StatusForbidden {
			t.Errorf("POST from %s: %d %s", remote, w.Code, w.Body)
		}
	}
	if len(snaps.gathers) != 0 {
		t.Fatalf("remote POSTs started %d gathers", len(snaps.gathers))
	}
	for _, remote := range []string{"127.0.0.1:5", "[::1]:5"} {
		if w := post(h, remote, ""); w.Code != http.StatusAccepted {
			t.Errorf("POST from %s: %d %s", remote, w.Code, w.Body)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/status", nil))
	if w.Code != http.StatusOK {
		t.Errorf("remote GET /status: %d", w.Code)
	}
}

// With a token, POST needs it as a bearer token, from anywhere (loopback
// included).
func TestPostNeedsToken(t *testing.T) {
	snaps := &fakeSnapshots{}
	h := newTestServer(t, Config{Runtime: &fakeRuntime{at: t0}, Snapshots: snaps, SnapshotDoc: noDoc, Access: Access{Token: "s3cret"}}).Handler()
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cre", "s3cret", "Basic s3cret"} {
		for _, remote := range []string{"127.0.0.1:5", "192.0.2.1:5"} {
			if w := post(h, remote, auth); w.Code != http.StatusUnauthorized {
				t.Errorf("POST from %s with %q: %d %s", remote, auth, w.Code, w.Body)
			}
		}
	}
	if w := post(h, "192.0.2.1:5", "Bearer s3cret"); w.Code != http.StatusAccepted {
		t.Errorf("POST with the token: %d %s", w.Code, w.Body)
	}
	if len(snaps.gathers) != 1 {
		t.Errorf("%d gathers, want 1", len(snaps.gathers))
	}
	for _, bad := range []Config{{Access: Access{Token: "a b"}}, {Access: Access{Token: strings.Repeat("x", MaxTokenLen+1)}}, {Limits: Limits{MaxHeaderBytes: -1}}} {
		bad.Runtime = &fakeRuntime{}
		if _, err := New(bad); err == nil || !strings.HasPrefix(err.Error(), "status: ") {
			t.Errorf("New(%+v) = %v", bad.MaxHeaderBytes, err)
		}
	}
}

// A client whose headers exceed MaxHeaderBytes gets 431, and an idle
// keep-alive connection is closed after IdleTimeout.
func TestServerBoundsClients(t *testing.T) {
	s := newTestServer(t, Config{Runtime: &fakeRuntime{}, Limits: Limits{MaxHeaderBytes: 1024, IdleTimeout: 100 * time.Millisecond}})
	if s.srv.MaxHeaderBytes != 1024 {
		t.Fatalf("MaxHeaderBytes = %d", s.srv.MaxHeaderBytes)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() {
		s.Shutdown(t.Context())
		<-served
	}()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	big := "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n"
	conn.Write([]byte(big))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("oversized headers: %s", resp.Status)
	}

	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(idle)
	idle.Write([]byte("GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Now idle on a keep-alive connection: the server must hang up.
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("server sent data on an idle connection")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("server kept the idle keep-alive connection open")
	}
}

// ReadTokenFile trims the token and refuses empty, huge or spaced ones.
func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if tok, err := ReadTokenFile(write("ok", "  s3cret\n")); err != nil || tok != "s3cret" {
		t.Errorf("ok: %q, %v", tok, err)
	}
	for name, content := range map[string]string{"empty": " \n", "spaced": "a b", "huge": strings.Repeat("x", 1<<20)} {
		if _, err := ReadTokenFile(write(name, content)); err == nil || !strings.HasPrefix(err.Error(), "status: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ReadTokenFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file accepted")
	}
}

func FuzzReadTokenFile(f *testing.F) {
	f.Add([]byte("s3cret\n"))
	f.Add([]byte(""))
	f.Add([]byte("a b\x00"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "tok")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := ReadTokenFile(p)
		if err == nil && (tok == "" || len(tok) > MaxTokenLen || strings.ContainsAny(tok, " \t\r\n")) {
			t.Fatalf("accepted %q", tok)
		}
		if err == nil {
			if _, err := New(Config{Runtime: &fakeRuntime{}, Access: Access{Token: tok}}); err != nil {
				t.Fatalf("token %q from the file refused by New: %v", tok, err)
			}
		}
	})
}
