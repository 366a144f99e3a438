package status

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live"
)

// TestIdleConnectionsGiveWay: 64 keep-alive connections left idle after a
// request each (the whole cap, from the operator's own address) do not
// lock a fresh client out: it closes the idlest and gets its answer.
// main refused it (the audit's curl got no answer).
func TestIdleConnectionsGiveWay(t *testing.T) {
	s, addr := serveTest(t, Config{Runtime: &fakeRuntime{st: live.Status{ID: 1}}})
	for i := range DefaultMaxConns {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		buf := make([]byte, 1)
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := conn.Read(buf); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := fresh.Get("http://" + addr + "/status")
	if err != nil {
		t.Fatalf("a fresh client after %d idle connections: %v", DefaultMaxConns, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || s.http.connsEvicted.Load() == 0 {
		t.Fatalf("status %d, %d evicted", resp.StatusCode, s.http.connsEvicted.Load())
	}
}

// TestHostAndOriginAreChecked: GET with a Host that is no IP literal, no
// localhost and not an allowed name is refused (DNS rebinding), as is a
// POST from another origin or site (CSRF); the node's own names and curl's
// requests pass. main answered both (the audit: 202 and 200).
func TestHostAndOriginAreChecked(t *testing.T) {
	_, addr := serveTest(t, Config{Runtime: &fakeRuntime{st: live.Status{ID: 1}}, Access: Access{AllowedHosts: []string{"node1.internal"}}})
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		method, host string
		headers      map[string]string
		want         int
	}{
		{"GET", "rebind.attacker.example:" + port, nil, http.StatusMisdirectedRequest},
		{"GET", "127.0.0.1:" + port, nil, http.StatusOK},
		{"GET", "localhost:" + port, nil, http.StatusOK},
		{"GET", "node1.internal:" + port, nil, http.StatusOK},
		{"POST", "127.0.0.1:" + port, map[string]string{"Origin": "http://attacker.example"}, http.StatusForbidden},
		{"POST", "127.0.0.1:" + port, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"POST", "127.0.0.1:" + port, map[string]string{"Origin": "http://127.0.0.1:" + port}, http.StatusNotFound}, // snapshots off: past the guard
		{"POST", "127.0.0.1:" + port, nil, http.StatusNotFound},
	} {
		req, err := http.NewRequest(tc.method, "http://"+addr+map[string]string{"GET": "/status", "POST": "/snapshot"}[tc.method], nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tc.host
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s Host %s %v: %d, want %d", tc.method, tc.host, tc.headers, resp.StatusCode, tc.want)
		}
	}
}

func TestAllowedHostsAreChecked(t *testing.T) {
	for _, bad := range []string{"", "a b", "host:80", "http://x"} {
		if _, err := New(Config{Runtime: &fakeRuntime{}, Access: Access{AllowedHosts: []string{bad}}}); err == nil || !strings.HasPrefix(err.Error(), "status: ") {
			t.Errorf("AllowedHosts %q: %v", bad, err)
		}
	}
}
