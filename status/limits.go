package status

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The server's resource bounds. The soak's slowloris (bench/soak) held
// 2,000 POSTs whose bodies trickled in at a byte a second, each a
// descriptor and a goroutine, for as long as it liked: a request must now
// arrive whole within ReadTimeout, its body is at most MaxBodyBytes, and
// at most MaxConns connections are open at once (one more closes the
// connection idle the longest, or is closed itself, and counted; see
// connTable), at most MaxConnsPerClient from one client address.
const (
	// DefaultReadTimeout is Config.ReadTimeout's default: the whole
	// request, body included, within 5s.
	DefaultReadTimeout = 5 * time.Second
	// DefaultWriteTimeout is Config.WriteTimeout's default: a response
	// (a snapshot document, a scrape) written within 30s.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxBodyBytes is Config.MaxBodyBytes's default: no endpoint
	// reads a body, so a small one is plenty.
	DefaultMaxBodyBytes = 4 << 10
	// DefaultMaxConns is Config.MaxConns's default.
	DefaultMaxConns = 64
	// DefaultMaxConnsPerClient is Config.MaxConnsPerClient's default
	// (at most MaxConns): a browser opens six per host, a scraper one.
	DefaultMaxConnsPerClient = 32
)

// httpCounters count what the bounds refused, for /metrics.
type httpCounters struct {
	connsRefused, bodiesRefused atomic.Uint64
	// connsEvicted counts idle connections closed to make room;
	// hostsRefused requests refused for their Host or Origin (hosts.go).
	connsEvicted, hostsRefused atomic.Uint64
	open                       atomic.Int64
}

// limitBody refuses a request whose body is larger than max (413) and
// gives the handler a body it cannot read past max.
func limitBody(max int64, c *httpCounters, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			c.bodiesRefused.Add(1)
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestEntityTooLarge, "status: request body too large")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		if r.ContentLength != 0 {
			// Read what there is now, within the read deadline, rather
			// than leave net/http to drain it after the response.
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				c.bodiesRefused.Add(1)
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestEntityTooLarge, "status: request body too large or too slow")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// connTable counts the server's connections, in total and per client,
// with the state net/http reports of each (http.Server.ConnState), so
// that idle keep-alive connections give way under pressure: the audit's
// 64 idle connections held every slot, and a fresh curl got no answer.
// While max are open a new connection closes the one idle the longest
// (counted in connsEvicted) and is refused only if none is idle; the same
// within one client address past perClient (a client on the node's own
// host shares its address with the operator's curl). Safe for concurrent
// use.
type connTable struct {
	max, perClient int
	c              *httpCounters

	mu       sync.Mutex
	conns    map[net.Conn]*connEntry
	byClient map[string]int
}

type connEntry struct {
	client string
	idle   bool
	since  time.Time // when it became idle
}

func newConnTable(max, perClient int, c *httpCounters) *connTable {
	return &connTable{max: max, perClient: perClient, c: c, conns: map[net.Conn]*connEntry{}, byClient: map[string]int{}}
}

// admit records conn, evicting an idle connection when the table is full;
// false when conn must be closed instead.
func (t *connTable) admit(conn net.Conn) bool {
	client := clientOf(conn)
	t.mu.Lock()
	var evict net.Conn
	switch {
	case t.byClient[client] >= t.perClient:
		evict = t.idlestLocked(client)
	case len(t.conns) >= t.max:
		evict = t.idlestLocked("")
	default:
		goto admit
	}
	if evict == nil {
		t.mu.Unlock()
		return false
	}
	t.removeLocked(evict)
admit:
	t.conns[conn] = &connEntry{client: client}
	t.byClient[client]++
	t.c.open.Store(int64(len(t.conns)))
	t.mu.Unlock()
	if evict != nil {
		t.c.connsEvicted.Add(1)
		evict.Close()
	}
	return true
}

// idlestLocked returns the connection idle the longest, of client (all
// clients for ""), or nil if none is idle.
func (t *connTable) idlestLocked(client string) net.Conn {
	var out net.Conn
	var oldest time.Time
	for c, e := range t.conns {
		if e.idle && (client == "" || e.client == client) && (out == nil || e.since.Before(oldest)) {
			out, oldest = c, e.since
		}
	}
	return out
}

// state follows net/http's view of a connection.
func (t *connTable) state(conn net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.conns[conn]
	if e == nil {
		return
	}
	switch st {
	case http.StateIdle:
		e.idle, e.since = true, time.Now()
	case http.StateActive:
		e.idle = false
	case http.StateClosed, http.StateHijacked:
		t.removeLocked(conn)
	}
}

// remove forgets conn (it closed).
func (t *connTable) remove(conn net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(conn)
}

func (t *connTable) removeLocked(conn net.Conn) {
	e := t.conns[conn]
	if e == nil {
		return
	}
	delete(t.conns, conn)
	if t.byClient[e.client]--; t.byClient[e.client] <= 0 {
		delete(t.byClient, e.client)
	}
	t.c.open.Store(int64(len(t.conns)))
}

// clientOf is a connection's client address, without the port.
func clientOf(conn net.Conn) string {
	a := conn.RemoteAddr()
	if a == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

// limitListener admits every connection it accepts to its table, and
// closes those the table refuses.
type limitListener struct {
	net.Listener
	t *connTable
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cc := &countedConn{Conn: conn, t: l.t}
		if !l.t.admit(cc) {
			l.t.c.connsRefused.Add(1)
			conn.Close()
			continue
		}
		return cc, nil
	}
}

// countedConn leaves its table when it closes (once).
type countedConn struct {
	net.Conn
	t    *connTable
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.t.remove(c) })
	return err
}
