package live

import (
	"cmp"
	"net"
	"sync"
	"time"
)

// Resource bounds per peer: how many inbound connections the transport
// holds, how long it waits on a silent or trickling peer, and how many log
// lines a flood of bad input may cause. Each bound turns a hostile peer's
// unbounded demand (goroutines, file descriptors, memory, log volume) into
// a refused connection or a dropped line.

// Defaults of LimitsConfig.
const (
	// DefaultMaxInboundConns is LimitsConfig.MaxInboundConns's default.
	DefaultMaxInboundConns = 1024
	// DefaultMaxInboundConnsPerHost is
	// LimitsConfig.MaxInboundConnsPerHost's default: room for a cluster
	// of a hundred nodes on one host (tests, emulation) with their probes.
	DefaultMaxInboundConnsPerHost = 128
	// DefaultIdleTimeout is LimitsConfig.IdleTimeout's default.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultFrameReadTimeout is LimitsConfig.FrameReadTimeout's default.
	DefaultFrameReadTimeout = 30 * time.Second
	// DefaultUnconfirmedPeerTTL is LimitsConfig.UnconfirmedPeerTTL's
	// default.
	DefaultUnconfirmedPeerTTL = 30 * time.Second
)

// LimitsConfig bounds what one peer may cost the node's service
// transport: inbound connections, connections that stay silent or
// trickle a frame, and node IDs known only from a hello.
type LimitsConfig struct {
	// MaxInboundConns caps the open inbound connections (handshaking or
	// established) in total; a connection accepted beyond it is closed at
	// once and counted in Counters.ConnsRefused. It also caps the node IDs
	// the peer directory keeps from hellos alone. Zero means
	// DefaultMaxInboundConns (1024 connections).
	MaxInboundConns int
	// MaxInboundConnsPerHost caps the open inbound connections from one
	// remote IP address, so one host cannot take all of MaxInboundConns.
	// Zero means DefaultMaxInboundConnsPerHost (128 connections).
	MaxInboundConnsPerHost int
	// IdleTimeout is how long an established inbound connection may carry
	// nothing (not even the keepalives each dialler sends after
	// IdleTimeout/3 of silence) before it is closed. Zero means
	// DefaultIdleTimeout, 2m.
	IdleTimeout time.Duration
	// FrameReadTimeout bounds the reading of one frame, from its first
	// byte to its last: a peer trickling a frame slower than that is
	// disconnected. Zero means DefaultFrameReadTimeout, 30s (at the
	// default MaxFrameSize, a minimum rate of about 35 KB/s).
	FrameReadTimeout time.Duration
	// UnconfirmedPeerTTL is how long a node ID learned only from a hello
	// (not from memberlist) stays in the peer directory. Zero means
	// DefaultUnconfirmedPeerTTL, 30s.
	UnconfirmedPeerTTL time.Duration
}

// keepalive is the payload of the frame a dialler sends on an outbound
// connection that has been silent for IdleTimeout/3, so that the acceptor's
// idle deadline cuts only peers that are really gone or hostile. It is no
// valid envelope (those start with a format byte >= 0xE0).
const keepalive = 0x00

// withDefaults returns l with every zero field set to its default.
func (l LimitsConfig) withDefaults() LimitsConfig {
	l.MaxInboundConns = cmp.Or(l.MaxInboundConns, DefaultMaxInboundConns)
	l.MaxInboundConnsPerHost = cmp.Or(l.MaxInboundConnsPerHost, DefaultMaxInboundConnsPerHost)
	l.IdleTimeout = cmp.Or(l.IdleTimeout, DefaultIdleTimeout)
	l.FrameReadTimeout = cmp.Or(l.FrameReadTimeout, DefaultFrameReadTimeout)
	l.UnconfirmedPeerTTL = cmp.Or(l.UnconfirmedPeerTTL, DefaultUnconfirmedPeerTTL)
	return l
}

// validate checks l (defaults filled in).
func (l LimitsConfig) validate() error {
	return firstError(
		checkPositive("Limits.MaxInboundConns", l.MaxInboundConns, DefaultMaxInboundConns, "count"),
		checkPositive("Limits.MaxInboundConnsPerHost", l.MaxInboundConnsPerHost, DefaultMaxInboundConnsPerHost, "count"),
		checkPositive("Limits.IdleTimeout", l.IdleTimeout, DefaultIdleTimeout, "duration"),
		checkPositive("Limits.FrameReadTimeout", l.FrameReadTimeout, DefaultFrameReadTimeout, "duration"),
		checkPositive("Limits.UnconfirmedPeerTTL", l.UnconfirmedPeerTTL, DefaultUnconfirmedPeerTTL, "duration"),
	)
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
