package live

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The service transport: framed TCP between runtimes.
//
// Each node sends to a peer on one persistent connection it dials itself
// (on its first send to that peer) and receives from the peer on the
// connection the peer dialled; so per pair of nodes there are at most two
// connections, each carrying envelopes one way, which keeps FIFO order per
// (sender, receiver) without any tie-breaking between simultaneous dials.
// The reader of an outbound connection expects nothing but the end of the
// stream, so a peer's reset is noticed on both connections.
//
// Datagrams (Env.SendDatagram) travel as frames on the same outbound
// connection as the sender's messages, so they arrive in order and at most
// once — a valid best-effort delivery. They are never queued past a failed
// dial and never reported: a datagram for an unreachable peer (last dial
// failed, redial backoff running) or a full queue is dropped at once, and a
// connection that carried datagrams only breaks without a transport error
// (enqueueDatagram).
//
// A TrySend (node.Envelope.Refusable) is a message, on the same connection,
// that enqueue refuses instead of queueing when the connection's write
// queue is over RuntimeConfig.Transport.TrySendQueueBytes (or SendQueueLen
// frames): the refusal closes nothing, and the runtime steps the service with
// node.EventSendRefused. The queue's bytes (peerConn.queued) count every
// frame from enqueue until the writer has taken it into its write buffer
// (64 KiB, in front of the socket's).
//
// Goroutines: one accept loop; per outbound connection a writer (resolve,
// dial, handshake, then write its queue) and a watcher (read until EOF);
// per inbound connection a reader (handshake, then read, decode and hand
// envelopes to the core goroutine). All are counted in the runtime's wait
// group and end when their connection closes or the runtime stops.

// netEvent is what the transport hands the core goroutine: an envelope
// received from peer (size is its frame's length, header included), or
// (err != nil) the news that a connection to or from peer broke.
type netEvent struct {
	peer node.ID
	env  node.Envelope
	size int
	err  error
}

// Reasons a connection is closed locally.
var (
	errClosedLocally = errors.New("live: connection closed locally")
	errSendQueueFull = errors.New("live: send queue full (peer too slow)")
	// errSendRefused is a TrySend's frame refused because the peer's
	// write queue is over its bound; nothing is closed.
	errSendRefused     = errors.New("live: send refused: the peer's write queue is over its bound")
	errPeerDead        = errors.New("live: peer left or was declared dead by memberlist")
	errSuperseded      = errors.New("live: inbound connection replaced by a new one from the same peer")
	errUnexpectedFrame = errors.New("live: frame received on an outbound connection")
	// errNoAddress is a send to a peer without a known address while
	// maxUnresolvedDials connections already wait for theirs.
	errNoAddress = errors.New("live: no address known for the peer, and too many dials already wait for one")
	// errIdle and errSlowFrame are the deadlines of limits.go.
	errIdle      = errors.New("live: peer sent nothing for IdleTimeout")
	errSlowFrame = errors.New("live: peer took longer than FrameReadTimeout to send a frame")
)

// counters are the runtime's statistics; updated atomically from any
// goroutine.
type counters struct {
	msgsIn, msgsOut, transportErrors, framesRejected       atomic.Uint64
	connsDialed, connsAccepted, dialFailures               atomic.Uint64
	bytesIn, bytesOut                                      atomic.Uint64
	layerMsgsIn, layerBytesIn, layerMsgsOut, layerBytesOut atomic.Uint64
	dgramsQueued, dgramsDropped                            atomic.Uint64
	// sendsRefused counts TrySends refused (the service stepped with
	// EventSendRefused).
	sendsRefused atomic.Uint64
	// connsRefused counts inbound connections over a limit;
	// helloConflicts hellos refused for claiming the ID of another live
	// connection.
	connsRefused, helloConflicts atomic.Uint64
	// logSuppressed counts memberlist log lines the rate limit dropped.
	logSuppressed atomic.Uint64
	// dialsRefused counts sends refused with errNoAddress; connsEvicted
	// unconfirmed peers' connections closed to make room.
	dialsRefused, connsEvicted atomic.Uint64
	// The store's commits, records, bytes and time (runtime_durable.go).
	durableCommits, durableRecords, durableBytes, durableSyncNanos atomic.Uint64
}

// peerConn is one connection to (out) or from (in) a peer.
type peerConn struct {
	t        *transport
	peer     node.ID
	outbound bool
	// service and gossip are the addresses an inbound connection's hello
	// claimed: its identity, beside the ID; remote is its remote address
	// and admitted when its hello was (evictUnconfirmed).
	service, gossip string
	remote          net.Addr
	admitted        time.Time
	// queue holds encoded frames for an outbound connection.
	queue chan []byte
	// queued is the byte size of the frames in queue plus the one the
	// writer is taking: only the core goroutine adds (push), only the
	// writer subtracts (once the frame is in its 64 KiB write buffer,
	// which a peer that does not read leaves full), so a value the core
	// goroutine reads can only have shrunk since.
	queued atomic.Int64
	// closed is closed by close; the writer and readers watch it.
	closed chan struct{}
	once   sync.Once
	// unresolved marks an outbound connection counted in
	// transport.unresolved (its peer's address was unknown when it was
	// created) until its dial has resolved or given up (resolvedOnce).
	unresolved   bool
	resolvedOnce sync.Once
	// msgs and dgrams record whether a message, and a datagram, was ever
	// queued on (outbound) or received from (inbound) the connection. One
	// that carried datagrams only breaks silently: no transport error.
	msgs, dgrams atomic.Bool
	// lastRead is when an inbound connection last delivered a frame
	// (keepalives included), in Unix nanoseconds: a live dialler sends
	// one after IdleTimeout/3 of silence at the latest.
	lastRead atomic.Int64

	mu   sync.Mutex
	conn net.Conn // nil until an outbound connection is dialled
	dead bool     // set by close; a late dial is closed at once
}

func (c *peerConn) dirName() string {
	if c.outbound {
		return "outbound"
	}
	return "inbound"
}

// datagramsOnly reports whether c has carried datagrams and no message: its
// breaking is reported to nobody (datagrams are lost silently).
func (c *peerConn) datagramsOnly() bool { return c.dgrams.Load() && !c.msgs.Load() }

// setConn records the dialled connection; false if c was closed meanwhile.
func (c *peerConn) setConn(conn net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return false
	}
	c.conn = conn
	return true
}

// close closes c once, removes it from the transport's tables and, when
// report is set, hands the core goroutine a transport error for the peer
// (blocking until it is taken or the runtime stops). It must not be called
// with report set from the core goroutine.
func (c *peerConn) close(reason error, report bool) {
	c.once.Do(func() {
		c.shut()
		// Read after forget (in shut): whatever enqueue marked on c while
		// it was in the tables (under the transport's lock) is visible
		// here.
		report = report && !c.datagramsOnly()
		c.logClosed(reason)
		if report {
			c.reportBroken(reason)
		}
	})
}

// shut marks c dead, closes its channel and its socket (if dialled) and
// removes it from the transport's tables.
func (c *peerConn) shut() {
	c.mu.Lock()
	c.dead = true
	conn := c.conn
	c.mu.Unlock()
	close(c.closed)
	if conn != nil {
		conn.Close()
	}
	c.t.forget(c)
}

// closeLevel is the level c's closing is logged at: debug for a close
// of this node's own, warn when what the peer sent is to blame, info
// otherwise.
func closeLevel(reason error) zapcore.Level {
	switch {
	case errors.Is(reason, errClosedLocally):
		return zap.DebugLevel
	case isPeerFault(reason):
		return zap.WarnLevel
	default:
		return zap.InfoLevel
	}
}

// logClosed logs c's closing at closeLevel, the lines a peer can cause
// rate-limited.
func (c *peerConn) logClosed(reason error) {
	lvl := closeLevel(reason)
	fields := []zap.Field{zap.Stringer("peer", c.peer), zap.String("dir", c.dirName()), zap.NamedError("reason", reason)}
	switch lvl {
	case zap.WarnLevel:
		// What the peer sent is to blame: a hostile peer may repeat
		// it at will, so the line is rate-limited.
		c.t.warn("live: connection closed", fields...)
	case zap.InfoLevel:
		// A peer can make connections close as fast (reconnecting, or
		// naming peers nobody runs): rate-limited too.
		c.t.limited(c.t.infos, zap.InfoLevel, "live: connection closed", fields...)
	default:
		if ce := c.t.log.Check(lvl, "live: connection closed"); ce != nil {
			ce.Write(fields...)
		}
	}
}

// reportBroken hands the core goroutine the transport error of c's
// breaking. One breakage, one transport error: the other direction to
// the same peer is closed now (so the next send redials) without being
// reported again. A connection opened after this point is not affected.
func (c *peerConn) reportBroken(reason error) {
	if sib := c.t.sibling(c); sib != nil {
		sib.close(fmt.Errorf("%w: the %s connection to the same peer broke", errClosedLocally, c.dirName()), false)
	}
	c.t.report(netEvent{peer: c.peer, err: reason})
}

// transport owns the listener and the connections. Its methods are safe
// for concurrent use unless noted.
type transport struct {
	self     node.ID
	label    string
	maxFrame int
	cfg      RuntimeConfig
	reg      *node.Registry
	log      *zap.Logger
	dir      *directory
	stats    *counters
	events   chan netEvent
	ctx      context.Context // cancelled when the runtime stops
	wg       *sync.WaitGroup
	ln       net.Listener
	// advertised addresses, for hellos; set before the accept loop starts.
	serviceAddr, gossipAddr string
	limits                  *connLimiter
	// warnings bounds the warn lines hostile input causes; infos the
	// info lines of closed connections, which a flood of dials to peers
	// nobody runs (or a peer reconnecting at will) causes as fast.
	warnings, infos *logLimiter

	mu     sync.Mutex
	closed bool
	out    map[node.ID]*peerConn
	in     map[node.ID]*peerConn
	raw    map[net.Conn]struct{}   // every open socket, closed on shutdown
	redial map[node.ID]redialState // peers whose last dial failed
	// unresolved counts the outbound connections waiting for the address
	// of a peer the directory did not know (peerConn.unresolved).
	unresolved int
}

// maxUnresolvedDials bounds the outbound connections that wait, each with
// a goroutine and a queue, for the address of a peer the directory does
// not know (it may learn it from memberlist within DialTimeout). A send to
// yet another unknown peer fails at once (errNoAddress, a transport error
// for the sender, Counters.DialsRefused): the audit's Requests naming
// 20,000 IDs nobody runs made 20,025 goroutines and 267 MB. Far above what
// a node joining a cluster has waiting at once.
const maxUnresolvedDials = 64

// maxRedialEntries bounds the backoff table of peers whose dials failed:
// past it, entries whose backoff has ended go first, then the oldest.
const maxRedialEntries = 1024

// redialState is the backoff of a peer whose last dial failed.
type redialState struct {
	notBefore time.Time
	backoff   time.Duration
}

func newTransport(ctx context.Context, cfg RuntimeConfig, reg *node.Registry, log *zap.Logger, dir *directory,
	stats *counters, events chan netEvent, wg *sync.WaitGroup) *transport {
	dir.setTTL(cfg.Limits.UnconfirmedPeerTTL)
	dir.setMaxUnconfirmed(cfg.Limits.MaxInboundConns)
	return &transport{
		limits:   newConnLimiter(cfg.Limits.MaxInboundConns, cfg.Limits.MaxInboundConnsPerHost),
		warnings: newLogLimiter(time.Second, 10), infos: newLogLimiter(time.Second, 20),
		self: cfg.ID, label: cfg.Label, maxFrame: cfg.Transport.MaxFrameSize, cfg: cfg, reg: reg, log: log,
		dir: dir, stats: stats, events: events, ctx: ctx, wg: wg,
		out: make(map[node.ID]*peerConn), in: make(map[node.ID]*peerConn), raw: make(map[net.Conn]struct{}),
		redial: make(map[node.ID]redialState),
	}
}

// listen binds the service listener.
func (t *transport) listen() error {
	var lc net.ListenConfig
	ln, err := lc.Listen(t.ctx, "tcp", t.cfg.Listen)
	if err != nil {
		return fmt.Errorf("live: listen on %s: %w", t.cfg.Listen, err)
	}
	t.ln = ln
	warnInsecure(t.cfg, t.log)
	return nil
}

// serve starts the accept loop.
func (t *transport) serve() {
	t.wg.Add(1)
	go t.acceptLoop()
}

func (t *transport) acceptLoop() {
	defer t.wg.Done()
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			if !t.pauseAfterAccept(err) {
				return
			}
			continue
		}
		if !t.reserveSlot(conn) {
			continue
		}
		if !t.track(conn) {
			t.limits.release(conn.RemoteAddr())
			conn.Close()
			return
		}
		t.stats.connsAccepted.Add(1)
		t.wg.Add(1)
		go t.serveInbound(conn)
	}
}

// pauseAfterAccept logs a failed Accept and waits a moment before the
// next one; false when the listener was closed or the runtime stops,
// which ends the accept loop.
func (t *transport) pauseAfterAccept(err error) bool {
	if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
		return false
	}
	t.log.Warn("live: accept failed", zap.Error(err))
	select {
	case <-time.After(50 * time.Millisecond):
		return true
	case <-t.ctx.Done():
		return false
	}
}

// reserveSlot takes a slot of the inbound limits for an accepted
// connection, evicting an unconfirmed peer's connection when they are
// reached (evictUnconfirmed); when there is no room, it refuses and
// closes the connection and returns false.
func (t *transport) reserveSlot(conn net.Conn) bool {
	if t.limits.acquire(conn.RemoteAddr()) {
		return true
	}
	if !t.evictUnconfirmed(conn.RemoteAddr()) {
		t.stats.connsRefused.Add(1)
		t.warn("live: inbound connection refused: connection limit reached", zap.Stringer("remote", conn.RemoteAddr()))
		conn.Close()
		return false
	}
	t.limits.force(conn.RemoteAddr())
	return true
}

// evictUnconfirmed makes room for a connection from remote that the
// limits refuse: it closes the inbound connection held longest by a peer
// nobody confirmed — an ID only its hello claims, without TLS — from
// remote's host if the per-host limit refused it, else from any host,
// and reports whether it found one (counted in Counters.ConnsEvicted).
// Confirmed members' connections, and every connection with TLS, are
// never evicted: without the rule, 1,022 of 1,024 slots held by hellos
// and keepalives from nine loopback addresses refused a new node's join
// (the audit's node exited).
func (t *transport) evictUnconfirmed(remote net.Addr) bool {
	if t.cfg.TLS != nil {
		return false
	}
	host := ""
	if t.limits.full(remote) {
		host = remoteHost(remote)
	}
	victim := t.oldestEvictable(host)
	if victim == nil {
		return false
	}
	t.stats.connsEvicted.Add(1)
	victim.close(errEvicted, false)
	return true
}

// oldestEvictable returns the inbound connection admitted first among
// the evictable ones from host (any host when host is ""), or nil.
func (t *transport) oldestEvictable(host string) *peerConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	var victim *peerConn
	for id, c := range t.in {
		if t.evictable(id, c, host) && (victim == nil || c.admitted.Before(victim.admitted)) {
			victim = c
		}
	}
	return victim
}

// evictable reports whether c, the inbound connection of id, may be
// closed to make room for a connection from host: it comes from host
// (unless host is "") and nobody confirmed its peer.
func (t *transport) evictable(id node.ID, c *peerConn, host string) bool {
	if host != "" && remoteHost(c.remote) != host {
		return false
	}
	_, confirmed := t.dir.confirmed(id)
	return !confirmed
}

// errEvicted is the reason of an unconfirmed peer's connection closed to
// make room (evictUnconfirmed).
var errEvicted = errors.New("live: inbound connection of an unconfirmed peer closed to make room under the connection limit")

// track registers a socket for closing at shutdown; false when the
// transport is already closed.
func (t *transport) track(conn net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.raw[conn] = struct{}{}
	return true
}

func (t *transport) untrack(conn net.Conn) {
	t.mu.Lock()
	delete(t.raw, conn)
	t.mu.Unlock()
	conn.Close()
}

// forget removes c from the connection tables if it is still there.
func (t *transport) forget(c *peerConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.in
	if c.outbound {
		m = t.out
	}
	if m[c.peer] == c {
		delete(m, c.peer)
	}
}

// sibling returns the open connection to c's peer in the other direction.
func (t *transport) sibling(c *peerConn) *peerConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.outbound {
		return t.in[c.peer]
	}
	return t.out[c.peer]
}

// report hands ev to the core goroutine, unless the runtime stops first.
func (t *transport) report(ev netEvent) {
	select {
	case t.events <- ev:
	case <-t.ctx.Done():
	}
}

func (t *transport) myHello(kind byte) hello {
	return hello{kind: kind, id: t.self, label: t.label, gossip: t.gossipAddr, service: t.serviceAddr}
}

// rejected counts and classifies a connection failure caused by what the
// peer sent.
func (t *transport) rejected(err error) {
	if isPeerFault(err) {
		t.stats.framesRejected.Add(1)
	}
}

// warn logs a warning caused by a peer, at most a few per second: a
// hostile peer must not be able to flood the log.
func (t *transport) warn(msg string, fields ...zap.Field) {
	t.limited(t.warnings, zap.WarnLevel, msg, fields...)
}

// limited logs at lvl through the limiter l (see warn).
func (t *transport) limited(l *logLimiter, lvl zapcore.Level, msg string, fields ...zap.Field) {
	ce := t.log.Check(lvl, msg)
	if ce == nil {
		return
	}
	fields, ok := admitLine(l, &t.stats.logSuppressed, fields)
	if !ok {
		return
	}
	ce.Write(fields...)
}

func (t *transport) serveInbound(conn net.Conn) {
	defer t.wg.Done()
	defer t.limits.release(conn.RemoteAddr())
	defer t.untrack(conn)
	conn.SetDeadline(time.Now().Add(t.cfg.Transport.HandshakeTimeout))
	conn, h, ok := t.handshakeInbound(conn)
	if !ok || h.kind == helloProbe {
		return
	}
	conn.SetDeadline(time.Time{})
	c := &peerConn{t: t, peer: h.id, service: h.service, gossip: h.gossip, conn: conn, closed: make(chan struct{}),
		remote: conn.RemoteAddr(), admitted: time.Now()}
	c.lastRead.Store(time.Now().UnixNano())
	if !t.establishInbound(c, h) {
		return
	}
	t.log.Debug("live: inbound connection", zap.Stringer("peer", h.id), zap.Stringer("remote", conn.RemoteAddr()))
	c.close(t.readEnvelopes(c, conn), true)
}

// handshakeInbound runs the acceptor's side of the handshake on an
// accepted socket: TLS (when configured), the dialler's hello, checked,
// and this node's answer. It returns the connection to read from (TLS's
// when configured) and the peer's hello; false when the handshake
// failed (logged, and counted when the peer is to blame).
func (t *transport) handshakeInbound(conn net.Conn) (net.Conn, hello, bool) {
	conn, h, err := t.readInboundHello(conn)
	if err != nil {
		t.refuseHello(conn, h, err)
		return conn, h, false
	}
	if err := writeHelloFrame(conn, t.myHello(h.kind)); err != nil {
		t.log.Info("live: inbound handshake failed", zap.Stringer("peer", h.id), zap.Error(err))
		return conn, h, false
	}
	return conn, h, true
}

// readInboundHello runs the TLS handshake (when configured) and reads the
// dialler's hello, bound to its certificate and checked (checkInbound).
func (t *transport) readInboundHello(conn net.Conn) (net.Conn, hello, error) {
	var h hello
	conn, err := t.secureAccept(conn)
	if err == nil {
		h, err = readHelloFrame(conn)
	}
	if err == nil {
		err = bindHello(conn, h)
	}
	if err == nil {
		err = t.checkInbound(h)
	}
	return conn, h, err
}

// checkInbound checks a dialler's hello: the cluster label, and no data
// connection claiming this node's own ID.
func (t *transport) checkInbound(h hello) error {
	if err := t.checkLabel(h); err != nil {
		return err
	}
	if h.kind == helloData && h.id == t.self {
		return fmt.Errorf("%w: peer claims this node's own ID %v", ErrHandshake, h.id)
	}
	return nil
}

// checkLabel checks that a peer's hello names this node's cluster.
func (t *transport) checkLabel(h hello) error {
	if h.label != t.label {
		return fmt.Errorf("%w: cluster label %q, want %q", ErrHandshake, h.label, t.label)
	}
	return nil
}

// refuseHello counts and logs an inbound handshake that failed with err.
// A well-formed hello from another cluster is answered with ours, so the
// dialler can say why it was refused.
func (t *transport) refuseHello(conn net.Conn, h hello, err error) {
	t.rejected(err)
	t.warn("live: inbound handshake failed", zap.Stringer("remote", conn.RemoteAddr()), zap.Error(err))
	if errors.Is(err, ErrHandshake) && h.id != node.None {
		writeHelloFrame(conn, t.myHello(h.kind))
	}
}

// establishInbound makes c, whose hello was h, the inbound connection of
// its peer (admitInbound), learns the addresses the hello claims, and
// reports the connection it replaced as broken before anything arrives
// on the new one (the peer dialled again while its old connection looked
// open: it restarted or lost that connection). False when c was refused
// (counted and logged) or closed meanwhile.
func (t *transport) establishInbound(c *peerConn, h hello) bool {
	old, err := t.admitInbound(c)
	if errors.Is(err, errClosedLocally) {
		return false
	}
	if err != nil {
		t.stats.helloConflicts.Add(1)
		t.rejected(err)
		t.warn("live: inbound connection refused", zap.Stringer("remote", c.remote), zap.Error(err))
		return false
	}
	if h.service != "" {
		t.dir.learnHello(h.id, h.service, h.gossip)
	}
	if old != nil {
		old.close(errSuperseded, true)
	}
	return true
}

// admitInbound makes c the inbound connection of its peer and returns the
// one it replaces. A hello proves nothing without TLS (anyone can claim any
// ID, and copy a peer's addresses), so a newcomer that claims the ID of a
// live inbound connection with other addresses is another identity and is
// refused (ErrIdentityConflict). One with the same addresses may be the
// peer redialling after a restart or a lost connection — whose old
// connection then closes (its process died, or it closed it) or has gone
// silent — or a spoofer who copied them, who can do neither: it waits up
// to HandshakeTimeout for the old connection to close, replaces it if it
// did or if it carried nothing (not even a keepalive) for IdleTimeout/2,
// and is refused otherwise. main replaced the live connection at once, so
// a spoofer repeating the hello kept a tree edge broken. With TLS the
// hello's ID is authenticated: a redial replaces the old connection at
// once.
func (t *transport) admitInbound(c *peerConn) (*peerConn, error) {
	deadline := time.Now().Add(t.cfg.Transport.HandshakeTimeout)
	for {
		old, err := t.swapInbound(c)
		if err != errHeldLive {
			return old, err
		}
		select {
		case <-old.closed:
		case <-c.closed:
			return nil, errClosedLocally
		case <-t.ctx.Done():
			return nil, errClosedLocally
		case <-time.After(time.Until(deadline)):
			return nil, fmt.Errorf("%w: hello claims %v at the addresses of its live connection (service %q), which stays",
				ErrIdentityConflict, c.peer, c.service)
		}
	}
}

// errHeldLive is swapInbound's answer while a live connection of the same
// identity holds the peer's slot.
var errHeldLive = errors.New("live: inbound slot held by a live connection")

// swapInbound makes c the inbound connection of its peer unless a live
// one holds the slot (see admitInbound).
func (t *transport) swapInbound(c *peerConn) (*peerConn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errClosedLocally
	}
	old := t.in[c.peer]
	if old != nil && !isClosed(old) {
		if old.service != c.service || old.gossip != c.gossip {
			return nil, fmt.Errorf("%w: hello claims %v at service %q, gossip %q; its live connection is at service %q, gossip %q",
				ErrIdentityConflict, c.peer, c.service, c.gossip, old.service, old.gossip)
		}
		silent := time.Since(time.Unix(0, old.lastRead.Load())) > t.cfg.Limits.IdleTimeout/2
		if t.cfg.TLS == nil && !silent {
			return old, errHeldLive
		}
	}
	t.in[c.peer] = c
	return old, nil
}

// readEnvelopes reads frames from an inbound connection until it fails and
// returns the reason.
func (t *transport) readEnvelopes(c *peerConn, conn net.Conn) error {
	br := bufio.NewReaderSize(conn, 64<<10)
	var buf []byte
	for {
		payload, err := t.readFrame(conn, br, buf)
		if err != nil {
			return t.readFailed(c, err)
		}
		if cap(payload) <= 64<<10 {
			buf = payload // reuse small buffers; let big ones go
		}
		c.lastRead.Store(time.Now().UnixNano())
		if bytes.Equal(payload, keepalivePayload) {
			continue
		}
		if err := t.deliver(c, payload); err != nil {
			return err
		}
	}
}

// keepalivePayload is the payload of a keepalive frame.
var keepalivePayload = []byte{keepalive}

// readFailed returns why reading c failed: errClosedLocally when c was
// closed meanwhile, else err, counted when the peer is to blame.
func (t *transport) readFailed(c *peerConn, err error) error {
	if isClosed(c) {
		return errClosedLocally
	}
	t.rejected(err)
	return err
}

// deliver decodes an envelope frame received on c (decodeFrom) and hands
// it to the core goroutine; an error (counted when the peer is to blame)
// ends the connection.
func (t *transport) deliver(c *peerConn, payload []byte) error {
	env, err := t.decodeFrom(c, payload)
	if err != nil {
		t.rejected(err)
		return err
	}
	c.markCarried(env.Datagram)
	t.stats.msgsIn.Add(1)
	size := node.FrameHeaderLen + len(payload)
	t.stats.bytesIn.Add(uint64(size))
	select {
	case t.events <- netEvent{peer: c.peer, env: env, size: size}:
		return nil
	case <-c.closed:
		return errClosedLocally
	case <-t.ctx.Done():
		return errClosedLocally
	}
}

// decodeFrom decodes an envelope received on c, which must come from c's
// peer and be for this node.
func (t *transport) decodeFrom(c *peerConn, payload []byte) (node.Envelope, error) {
	env, err := t.reg.DecodeEnvelope(payload)
	if err == nil && (env.From != c.peer || env.To != t.self) {
		err = fmt.Errorf("%w: envelope %v→%v on the connection from %v to %v", node.ErrBadEnvelope, env.From, env.To, c.peer, t.self)
	}
	return env, err
}

// markCarried records that c carried (or was given) a datagram, or a
// message.
func (c *peerConn) markCarried(datagram bool) {
	if datagram {
		c.dgrams.Store(true)
	} else {
		c.msgs.Store(true)
	}
}

// readFrame reads one frame under the deadlines of limits.go: its first
// byte must come within IdleTimeout, and the whole frame within
// FrameReadTimeout of that byte.
func (t *transport) readFrame(conn net.Conn, br *bufio.Reader, buf []byte) ([]byte, error) {
	conn.SetReadDeadline(time.Now().Add(t.cfg.Limits.IdleTimeout))
	if _, err := br.Peek(1); err != nil {
		if isTimeout(err) {
			return nil, errIdle
		}
		return nil, err
	}
	conn.SetReadDeadline(time.Now().Add(t.cfg.Limits.FrameReadTimeout))
	payload, err := ReadFrame(br, buf, t.maxFrame)
	if err != nil && isTimeout(err) {
		return nil, fmt.Errorf("%w: %w", errSlowFrame, err)
	}
	return payload, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isClosed(c *peerConn) bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// enqueue queues an encoded frame for peer, dialling on first use. It is
// called only from the core goroutine. For a Send (refusable unset), a
// full queue closes the connection (without reporting) and returns
// errSendQueueFull for the caller to deliver as a transport error. For a
// TrySend (refusable set), a queue over its bound — queued bytes plus the
// frame above TrySendQueueBytes while something waits, or SendQueueLen
// frames — returns errSendRefused and leaves the connection as it is.
func (t *transport) enqueue(peer node.ID, frame []byte, refusable bool) error {
	c, err := t.outbound(peer, false)
	if err != nil {
		return err
	}
	if refusable && c.overTryBound(int64(len(frame)), t.cfg.Transport.TrySendQueueBytes) {
		return errSendRefused
	}
	if !c.push(frame) {
		if refusable {
			return errSendRefused
		}
		c.close(errSendQueueFull, false)
		return errSendQueueFull
	}
	return nil
}

// overTryBound reports whether a TrySend of n bytes must be refused on
// c: something waits in its queue, and n more bytes would pass bound.
func (c *peerConn) overTryBound(n int64, bound int) bool {
	q := c.queued.Load()
	return q > 0 && q+n > int64(bound)
}

// outbound returns peer's outbound connection, created (dialOut) on
// first use, marked as carrying a datagram or a message. It fails with
// errClosedLocally once the transport is closed, errNoAddress when the
// connection cannot be created, and, for a datagram, errUnreachable while
// the peer's redial backoff runs.
func (t *transport) outbound(peer node.ID, datagram bool) (*peerConn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errClosedLocally
	}
	c := t.out[peer]
	if c == nil {
		if datagram && t.backingOff(peer) {
			return nil, errUnreachable
		}
		if c = t.dialOut(peer); c == nil {
			return nil, errNoAddress
		}
	}
	c.markCarried(datagram)
	return c, nil
}

// errUnreachable is a datagram for a peer whose last dial failed and
// whose redial backoff has not passed: dropped.
var errUnreachable = errors.New("live: peer unreachable until its redial backoff passes")

// backingOff reports whether peer's last dial failed and its redial
// backoff has not passed. t.mu must be held.
func (t *transport) backingOff(peer node.ID) bool {
	st, ok := t.redial[peer]
	return ok && time.Now().Before(st.notBefore)
}

// push queues frame on c without blocking, accounting its bytes in
// c.queued; false when the queue is full. Core goroutine only.
func (c *peerConn) push(frame []byte) bool {
	// Added before the frame is visible to the writer, whose subtraction
	// must never see it missing.
	c.queued.Add(int64(len(frame)))
	select {
	case c.queue <- frame:
		return true
	default:
		c.queued.Add(-int64(len(frame)))
		return false
	}
}

// dialOut creates the outbound connection to peer and starts its writer,
// which dials it; nil when the directory knows no address for peer and
// maxUnresolvedDials connections already wait for theirs. t.mu must be
// held.
func (t *transport) dialOut(peer node.ID) *peerConn {
	unresolved := !t.dir.knows(peer)
	if unresolved {
		if t.unresolved >= maxUnresolvedDials {
			t.stats.dialsRefused.Add(1)
			return nil
		}
		t.unresolved++
	}
	c := &peerConn{t: t, peer: peer, outbound: true, unresolved: unresolved, queue: make(chan []byte, t.cfg.Transport.SendQueueLen), closed: make(chan struct{})}
	t.out[peer] = c
	t.wg.Add(1)
	go c.runOutbound()
	return c
}

// enqueueDatagram queues an encoded datagram for peer, never blocking, and
// reports whether it did; it is called only from the core goroutine. A
// datagram goes on the connection the peer's messages use, dialled on
// first use as for a message (it waits in the queue while the connection
// is dialled, and is lost if the dial fails). It is dropped (false) when
// the transport is closed, when the peer is unreachable — its last dial
// failed and its redial backoff has not passed — or when the queue is full,
// which, unlike for a message, leaves the connection open. A connection
// that only ever carried datagrams reports no transport error when it
// fails or breaks.
func (t *transport) enqueueDatagram(peer node.ID, frame []byte) bool {
	c, err := t.outbound(peer, true)
	return err == nil && c.push(frame)
}

// closePeer closes every connection to and from peer and reports whether
// any was open (other than connections that carried datagrams only). With
// report set it then hands the core goroutine one transport error; it
// must then not be called from the core goroutine, which passes false
// and steps the error itself.
func (t *transport) closePeer(peer node.ID, reason error, report bool) (open bool) {
	t.mu.Lock()
	conns := []*peerConn{t.out[peer], t.in[peer]}
	t.mu.Unlock()
	for _, c := range conns {
		if c != nil {
			open = open || !c.datagramsOnly()
			c.close(reason, false)
		}
	}
	if open && report {
		t.report(netEvent{peer: peer, err: reason})
	}
	return open
}

// runOutbound resolves, dials and handshakes, then writes the queue.
func (c *peerConn) runOutbound() {
	t := c.t
	defer t.wg.Done()
	defer c.resolved()
	if !t.waitRedial(c) {
		return
	}
	conn, err := t.dialPeer(c)
	c.resolved()
	if err != nil {
		t.stats.dialFailures.Add(1)
		t.dialFailed(c.peer)
		c.close(err, !isClosed(c))
		return
	}
	t.mu.Lock()
	delete(t.redial, c.peer)
	t.mu.Unlock()
	defer t.untrack(conn)
	if !c.setConn(conn) {
		return
	}
	t.stats.connsDialed.Add(1)
	t.wg.Add(1)
	go c.watchOutbound(conn)
	c.writeLoop(conn)
}

// resolved ends c's count in transport.unresolved, once.
func (c *peerConn) resolved() {
	if !c.unresolved {
		return
	}
	c.resolvedOnce.Do(func() {
		c.t.mu.Lock()
		c.t.unresolved--
		c.t.mu.Unlock()
	})
}

// writeLoop writes c's queue to conn, and a keepalive whenever the
// connection has been silent for IdleTimeout/3, until c closes or a write
// fails.
func (c *peerConn) writeLoop(conn net.Conn) {
	t := c.t
	bw := bufio.NewWriterSize(conn, 64<<10)
	ka := time.NewTimer(t.cfg.Limits.IdleTimeout / 3)
	defer ka.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-ka.C:
			if err := c.writeKeepalive(conn, bw); err != nil {
				c.close(fmt.Errorf("live: write keepalive: %w", err), !isClosed(c))
				return
			}
			ka.Reset(t.cfg.Limits.IdleTimeout / 3)
		case f := <-c.queue:
			ka.Reset(t.cfg.Limits.IdleTimeout / 3)
			if err := c.writeQueued(conn, bw, f); err != nil {
				c.close(fmt.Errorf("live: write: %w", err), !isClosed(c))
				return
			}
		}
	}
}

// writeKeepalive writes and flushes a keepalive frame, under WriteTimeout.
func (c *peerConn) writeKeepalive(conn net.Conn, bw *bufio.Writer) error {
	conn.SetWriteDeadline(time.Now().Add(c.t.cfg.Transport.WriteTimeout))
	_, err := bw.Write(keepaliveFrame)
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// writeQueued writes frame f, taken from c's queue, under WriteTimeout,
// and flushes once the queue is empty.
func (c *peerConn) writeQueued(conn net.Conn, bw *bufio.Writer, f []byte) error {
	conn.SetWriteDeadline(time.Now().Add(c.t.cfg.Transport.WriteTimeout))
	_, err := bw.Write(f)
	c.queued.Add(-int64(len(f)))
	if err != nil {
		return err
	}
	c.t.stats.msgsOut.Add(1)
	c.t.stats.bytesOut.Add(uint64(len(f)))
	if len(c.queue) == 0 {
		return bw.Flush()
	}
	return nil
}

// keepaliveFrame is the frame of a keepalive.
var keepaliveFrame = AppendFrame(nil, []byte{keepalive})

// waitRedial waits out the peer's redial backoff; false if c closed or
// the runtime stopped meanwhile.
func (t *transport) waitRedial(c *peerConn) bool {
	t.mu.Lock()
	wait := time.Until(t.redial[c.peer].notBefore)
	t.mu.Unlock()
	if wait <= 0 {
		return true
	}
	tm := time.NewTimer(wait)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-c.closed:
		return false
	case <-t.ctx.Done():
		return false
	}
}

// dialFailed doubles the peer's redial backoff.
func (t *transport) dialFailed(peer node.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.redial[peer]
	if !ok {
		st.backoff = t.cfg.Transport.RedialBackoff
	} else {
		st.backoff = min(2*st.backoff, t.cfg.Transport.MaxRedialBackoff)
	}
	st.notBefore = time.Now().Add(st.backoff)
	t.redial[peer] = st
	if len(t.redial) > maxRedialEntries {
		t.pruneRedial()
	}
}

// pruneRedial bounds the backoff table (maxRedialEntries): the entries
// whose backoff ended go, then the earliest to end until it is within
// bounds. A pruned peer's next failed dial starts its backoff afresh.
// t.mu must be held.
func (t *transport) pruneRedial() {
	now := time.Now()
	maps.DeleteFunc(t.redial, func(_ node.ID, st redialState) bool { return now.After(st.notBefore) })
	for len(t.redial) > maxRedialEntries {
		delete(t.redial, t.firstRedial())
	}
}

// firstRedial returns the peer whose redial backoff ends first. t.mu
// must be held.
func (t *transport) firstRedial() node.ID {
	first, at := node.None, time.Time{}
	for id, st := range t.redial {
		if first == node.None || st.notBefore.Before(at) {
			first, at = id, st.notBefore
		}
	}
	return first
}

// watchOutbound reads an outbound connection, on which the peer sends
// nothing after its hello: any frame is a protocol error and the end of the
// stream means the peer closed or reset.
func (c *peerConn) watchOutbound(conn net.Conn) {
	defer c.t.wg.Done()
	var b [1]byte
	_, err := conn.Read(b[:])
	if isClosed(c) {
		return
	}
	if err == nil {
		err = errUnexpectedFrame
		c.t.stats.framesRejected.Add(1)
	} else {
		err = fmt.Errorf("live: read: %w", err)
	}
	c.close(err, true)
}

// dialPeer resolves peer's service address (waiting for discovery up to
// DialTimeout), dials it and exchanges hellos.
func (t *transport) dialPeer(c *peerConn) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.Transport.DialTimeout)
	defer cancel()
	addr, err := t.dir.resolve(ctx, c.peer, c.closed)
	if err != nil {
		return nil, err
	}
	conn, err := t.dialHello(ctx, addr, helloData)
	if err != nil {
		return nil, err
	}
	if conn.h.id != c.peer {
		t.untrack(conn.Conn)
		return nil, fmt.Errorf("%w: %s is %v, not %v", ErrHandshake, addr, conn.h.id, c.peer)
	}
	return conn.Conn, nil
}

type helloConn struct {
	net.Conn
	h hello
}

// dialHello dials addr and exchanges hellos of the given kind. The
// returned connection is tracked; untrack it to close it.
func (t *transport) dialHello(ctx context.Context, addr string, kind byte) (helloConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return helloConn{}, fmt.Errorf("live: dial %s: %w", addr, err)
	}
	conn = t.secureDial(conn)
	if !t.track(conn) {
		conn.Close()
		return helloConn{}, errClosedLocally
	}
	h, err := t.greet(ctx, conn, kind)
	if err != nil {
		t.untrack(conn)
		return helloConn{}, fmt.Errorf("live: handshake with %s: %w", addr, err)
	}
	conn.SetDeadline(time.Time{})
	return helloConn{Conn: conn, h: h}, nil
}

// greet sends this node's hello of the given kind on a dialled
// connection and reads the answer, bound to the peer's certificate and
// checked for the cluster label, within HandshakeTimeout (or ctx's
// deadline, if sooner).
func (t *transport) greet(ctx context.Context, conn net.Conn, kind byte) (hello, error) {
	deadline := time.Now().Add(t.cfg.Transport.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	if err := writeHelloFrame(conn, t.myHello(kind)); err != nil {
		return hello{}, err
	}
	h, err := readHelloFrame(conn)
	if err == nil {
		err = bindHello(conn, h)
	}
	if err == nil {
		err = t.checkLabel(h)
	}
	return h, err
}

// probe asks the node at a service address for its hello.
func (t *transport) probe(ctx context.Context, addr string) (hello, error) {
	c, err := t.dialHello(ctx, addr, helloProbe)
	if err != nil {
		return hello{}, err
	}
	t.untrack(c.Conn)
	return c.h, nil
}

// queuedBytes sums the bytes waiting in the outbound connections' write
// queues (peerConn.queued), for Status.
func (t *transport) queuedBytes() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sum int64
	for _, c := range t.out {
		sum += c.queued.Load()
	}
	return uint64(max(sum, 0))
}

// connections lists the peers with open connections, for Status.
func (t *transport) connections() (out, in []node.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out, in = slices.Collect(maps.Keys(t.out)), slices.Collect(maps.Keys(t.in))
	sortIDs(out)
	sortIDs(in)
	return out, in
}

// shutdown closes the listener and every connection. Goroutines end on
// their own; the runtime waits for them.
func (t *transport) shutdown() {
	t.mu.Lock()
	t.closed = true
	conns := append(slices.Collect(maps.Values(t.out)), slices.Collect(maps.Values(t.in))...)
	raw := slices.Collect(maps.Keys(t.raw))
	t.mu.Unlock()
	if t.ln != nil {
		t.ln.Close()
	}
	for _, c := range conns {
		c.close(errClosedLocally, false)
	}
	for _, c := range raw {
		c.Close()
	}
}
