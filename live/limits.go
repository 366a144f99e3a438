package live

import (
	"cmp"
	"fmt"
	"net"
	"sync"
	"time"
)

// Resource bounds per peer: how many inbound connections the transport
// holds, how long it waits on a silent or trickling peer, and how many log
// lines a flood of bad input may cause. Each bound turns a hostile peer's
// unbounded demand (goroutines, file descriptors, memory, log volume) into
// a refused connection or a dropped line.

// Defaults of RuntimeConfig's connection limits.
const (
	// DefaultMaxInboundConns is RuntimeConfig.MaxInboundConns's default.
	DefaultMaxInboundConns = 1024
	// DefaultMaxInboundConnsPerHost is
	// RuntimeConfig.MaxInboundConnsPerHost's default: room for a cluster
	// of a hundred nodes on one host (tests, emulation) with their probes.
	DefaultMaxInboundConnsPerHost = 128
	// DefaultUnconfirmedPeerTTL is RuntimeConfig.UnconfirmedPeerTTL's
	// default.
	DefaultUnconfirmedPeerTTL = 30 * time.Second
)

// keepalive is the payload of the frame a dialler sends on an outbound
// connection that has been silent for IdleTimeout/3, so that the acceptor's
// idle deadline cuts only peers that are really gone or hostile. It is no
// valid envelope (those start with a format byte >= 0xE0).
const keepalive = 0x00

func (c RuntimeConfig) limitsWithDefaults(d RuntimeConfig) RuntimeConfig {
	c.MaxInboundConns = cmp.Or(c.MaxInboundConns, d.MaxInboundConns)
	c.MaxInboundConnsPerHost = cmp.Or(c.MaxInboundConnsPerHost, d.MaxInboundConnsPerHost)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, d.IdleTimeout)
	c.FrameReadTimeout = cmp.Or(c.FrameReadTimeout, d.FrameReadTimeout)
	c.UnconfirmedPeerTTL = cmp.Or(c.UnconfirmedPeerTTL, d.UnconfirmedPeerTTL)
	return c
}

// validateLimits checks the resource-bound fields (defaults filled in).
func (c RuntimeConfig) validateLimits() error {
	for _, n := range []struct {
		name string
		v    int
	}{{"MaxInboundConns", c.MaxInboundConns}, {"MaxInboundConnsPerHost", c.MaxInboundConnsPerHost}} {
		if n.v <= 0 {
			return fmt.Errorf("live: RuntimeConfig.%s is %d; want a positive count or 0 for the default", n.name, n.v)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"IdleTimeout", c.IdleTimeout}, {"FrameReadTimeout", c.FrameReadTimeout}, {"UnconfirmedPeerTTL", c.UnconfirmedPeerTTL}} {
		if d.v <= 0 {
			return fmt.Errorf("live: RuntimeConfig.%s is %v; want a positive duration or 0 for the default", d.name, d.v)
		}
	}
	return nil
}

// connLimiter counts open inbound connections, in total and per remote
// host. Safe for concurrent use.
type connLimiter struct {
	maxTotal, maxPerHost int

	mu     sync.Mutex
	total  int
	byHost map[string]int
}

func newConnLimiter(maxTotal, maxPerHost int) *connLimiter {
	return &connLimiter{maxTotal: maxTotal, maxPerHost: maxPerHost, byHost: make(map[string]int)}
}

// acquire reserves a slot for a connection from remote; false when a limit
// is reached. A true result must be paired with one release(remote).
func (l *connLimiter) acquire(remote net.Addr) bool {
	h := remoteHost(remote)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.maxTotal || l.byHost[h] >= l.maxPerHost {
		return false
	}
	l.total++
	l.byHost[h]++
	return true
}

// full reports which limit refuses a connection from remote now: the
// per-host one (perHost true) or the total.
func (l *connLimiter) full(remote net.Addr) (perHost bool) {
	h := remoteHost(remote)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byHost[h] >= l.maxPerHost
}

// force reserves a slot for remote past the limits: the transport closed
// a connection to make room for it, whose release follows shortly.
func (l *connLimiter) force(remote net.Addr) {
	h := remoteHost(remote)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	l.byHost[h]++
}

func (l *connLimiter) release(remote net.Addr) {
	h := remoteHost(remote)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.byHost[h]--; l.byHost[h] <= 0 {
		delete(l.byHost, h)
	}
}

func remoteHost(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// logLimiter lets at most burst lines through per interval and counts the
// rest, so a flood of bad input costs a bounded number of log lines. Safe
// for concurrent use.
type logLimiter struct {
	interval time.Duration
	burst    int
	now      func() time.Time

	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

func newLogLimiter(interval time.Duration, burst int) *logLimiter {
	return &logLimiter{interval: interval, burst: burst, now: time.Now}
}

// allow reports whether a line may be logged now and, when a new interval
// begins, how many lines the previous ones suppressed (to be logged with
// it).
func (l *logLimiter) allow() (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.start) >= l.interval {
		l.start, l.n = now, 0
	}
	if l.n >= l.burst {
		l.suppressed++
		return false, 0
	}
	l.n++
	suppressed, l.suppressed = l.suppressed, 0
	return true, suppressed
}
