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
// at most MaxConns connections are open at once (one more is closed as
// soon as it is accepted, and counted).
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
)

// httpCounters count what the bounds refused, for /metrics.
type httpCounters struct {
	connsRefused, bodiesRefused atomic.Uint64
	open                        atomic.Int64
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

// limitListener closes every connection accepted while max are open.
type limitListener struct {
	net.Listener
	max int64
	c   *httpCounters
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.c.open.Add(1) > l.max {
			l.c.open.Add(-1)
			l.c.connsRefused.Add(1)
			conn.Close()
			continue
		}
		return &countedConn{Conn: conn, c: l.c}, nil
	}
}

// countedConn gives its slot back when it closes (once).
type countedConn struct {
	net.Conn
	c    *httpCounters
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.c.open.Add(-1) })
	return err
}
