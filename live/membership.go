package live

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"

	"github.com/hashicorp/memberlist"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Membership: memberlist discovers the cluster's nodes, publishes each
// node's ID and service address in its metadata, and detects failures. It
// carries no service traffic (memberlist's SendReliable dials a connection
// per message); that goes over the service transport.

// metaVersion is the first byte of a node's memberlist metadata:
//
//	0x01 | uvarint node ID | service address (host:port, the rest)
const metaVersion = 1

func encodeMeta(id node.ID, serviceAddr string) []byte {
	b := []byte{metaVersion}
	b = binary.AppendUvarint(b, uint64(id))
	return append(b, serviceAddr...)
}

func decodeMeta(b []byte) (node.ID, string, error) {
	if len(b) < 2 || b[0] != metaVersion {
		return node.None, "", errors.New("live: memberlist metadata: unknown format")
	}
	v, k := binary.Uvarint(b[1:])
	if k <= 0 || v == 0 {
		return node.None, "", errors.New("live: memberlist metadata: bad node ID")
	}
	addr := string(b[1+k:])
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return node.None, "", fmt.Errorf("live: memberlist metadata: service address: %w", err)
	}
	return node.ID(v), addr, nil
}

// PeerStatus is what a node knows of one peer, for Status.
type PeerStatus struct {
	// ID is the peer's node ID.
	ID node.ID `json:"id"`
	// ServiceAddr is the peer's service-transport address.
	ServiceAddr string `json:"service_addr"`
	// GossipAddr is the peer's memberlist address, when known.
	GossipAddr string `json:"gossip_addr,omitempty"`
	// Alive is memberlist's view: false once it left or was declared dead.
	Alive bool `json:"alive"`
	// Outbound and Inbound report open service connections to and from it.
	Outbound bool `json:"outbound"`
	Inbound  bool `json:"inbound"`
}

// directory maps node IDs to service addresses. memberlist's callbacks and
// hellos write it; the transport reads it when dialling. Safe for
// concurrent use.
//
// Entries learned from memberlist (or a Join probe) are confirmed. An ID
// learned only from a hello is not: anyone who reaches the service port can
// claim any ID in a hello, so such an entry expires after ttl unless
// memberlist confirms it meanwhile, and a hello never overwrites the
// addresses of a confirmed, alive entry (else a spoofed hello would
// redirect this node's dials to the spoofer).
type directory struct {
	mu      sync.Mutex
	peers   map[node.ID]*PeerStatus
	changed chan struct{} // closed and replaced on every change
	// expires holds the deadline of every unconfirmed entry.
	expires map[node.ID]time.Time
	ttl     time.Duration
	// maxUnconfirmed bounds the entries learned only from hellos: an
	// attacker reconnecting with a new ID each time (evicted, then
	// back) would otherwise add one per connection within ttl, and
	// every one is in Status.Peers. Past it the entry that expires
	// first goes.
	maxUnconfirmed int
	now            func() time.Time
}

func newDirectory() *directory {
	return &directory{
		peers: make(map[node.ID]*PeerStatus), changed: make(chan struct{}),
		expires: make(map[node.ID]time.Time), ttl: DefaultUnconfirmedPeerTTL, now: time.Now,
	}
}

// setTTL sets how long an entry learned only from hellos lives; it must be
// called before the directory is shared.
func (d *directory) setTTL(ttl time.Duration) { d.ttl = ttl }

// setMaxUnconfirmed sets how many entries learned only from hellos it
// keeps at once (0: no bound); it must be called before the directory is
// shared.
func (d *directory) setMaxUnconfirmed(n int) { d.maxUnconfirmed = n }

// learn records a peer's addresses, as memberlist or a Join probe
// confirmed them, and marks it alive.
func (d *directory) learn(id node.ID, service, gossip string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.expires, id)
	d.setLocked(id, service, gossip)
}

// learnHello records the addresses a peer's hello claims. A confirmed,
// alive entry keeps its addresses; any other entry takes the claimed ones
// and (re)starts its expiry.
func (d *directory) learnHello(id node.ID, service, gossip string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweepLocked()
	if d.confirmedAliveLocked(id) {
		return
	}
	if d.unconfirmedFullLocked(id) {
		first := d.firstToExpireLocked()
		delete(d.expires, first)
		delete(d.peers, first)
	}
	d.expires[id] = d.now().Add(d.ttl)
	d.setLocked(id, service, gossip)
}

// confirmedAliveLocked reports whether id's entry is confirmed (learned
// from memberlist or a join probe) and alive. d.mu must be held.
func (d *directory) confirmedAliveLocked(id node.ID) bool {
	p := d.peers[id]
	_, unconfirmed := d.expires[id]
	return p != nil && !unconfirmed && p.Alive
}

// unconfirmedFullLocked reports whether a new unconfirmed entry for id
// needs room: id is not one yet and maxUnconfirmed entries are. d.mu
// must be held.
func (d *directory) unconfirmedFullLocked(id node.ID) bool {
	_, known := d.expires[id]
	return !known && d.maxUnconfirmed > 0 && len(d.expires) >= d.maxUnconfirmed
}

// firstToExpireLocked returns the unconfirmed entry that expires first,
// the lowest ID among those that expire at once. d.mu must be held.
func (d *directory) firstToExpireLocked() node.ID {
	first, at := node.None, time.Time{}
	for x, t := range d.expires {
		if first == node.None || cmp.Or(t.Compare(at), cmp.Compare(x, first)) < 0 {
			first, at = x, t
		}
	}
	return first
}

func (d *directory) setLocked(id node.ID, service, gossip string) {
	p := d.peers[id]
	if p == nil {
		p = &PeerStatus{ID: id}
		d.peers[id] = p
	}
	p.ServiceAddr = service
	if gossip != "" {
		p.GossipAddr = gossip
	}
	p.Alive = true
	close(d.changed)
	d.changed = make(chan struct{})
}

// sweepLocked drops the unconfirmed entries whose time is up.
func (d *directory) sweepLocked() {
	now := d.now()
	for id, at := range d.expires {
		if now.After(at) {
			delete(d.expires, id)
			delete(d.peers, id)
		}
	}
}

// confirmed returns the service address of id if memberlist (or a join
// probe) confirmed it and it is alive.
func (d *directory) confirmed(id node.ID) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.confirmedAliveLocked(id) || d.peers[id].ServiceAddr == "" {
		return "", false
	}
	return d.peers[id].ServiceAddr, true
}

// knows reports whether the directory holds an address for id: confirmed,
// or claimed by a hello within its expiry.
func (d *directory) knows(id node.ID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if at, unconfirmed := d.expires[id]; unconfirmed && d.now().After(at) {
		return false
	}
	p := d.peers[id]
	return p != nil && p.ServiceAddr != ""
}

// died marks a peer not alive; its address is kept, so a send to it fails
// fast (connection refused) instead of waiting for rediscovery.
func (d *directory) died(id node.ID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.peers[id]; p != nil {
		p.Alive = false
	}
}

// resolve returns id's service address, waiting until it is learned, ctx
// ends or stop is closed.
func (d *directory) resolve(ctx context.Context, id node.ID, stop <-chan struct{}) (string, error) {
	for {
		d.mu.Lock()
		d.sweepLocked()
		p, changed := d.peers[id], d.changed
		addr := ""
		if p != nil {
			addr = p.ServiceAddr
		}
		d.mu.Unlock()
		if addr != "" {
			return addr, nil
		}
		select {
		case <-changed:
		case <-stop:
			return "", errClosedLocally
		case <-ctx.Done():
			return "", fmt.Errorf("live: no service address known for %v: %w", id, ctx.Err())
		}
	}
}

// list returns the known peers, ascending by ID.
func (d *directory) list() []PeerStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweepLocked()
	out := make([]PeerStatus, 0, len(d.peers))
	for _, p := range d.peers {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b PeerStatus) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func sortIDs(ids []node.ID) { slices.Sort(ids) }

// membership is the memberlist delegate: it publishes this node's metadata
// and feeds the directory. memberlist calls it from its own goroutines.
type membership struct {
	self node.ID
	meta []byte
	dir  *directory
	log  *zap.Logger
	// onDead is called (from a memberlist goroutine) when a peer leaves or
	// is declared dead.
	onDead func(node.ID)
	// logSuppressed counts memberlist's log lines dropped by the rate
	// limit (nil: not counted).
	logSuppressed *atomic.Uint64
	// prover proves members on the service transport before they are
	// admitted (nil: no proof asked, as in unit tests of the delegate);
	// keyed is set when gossip is keyed, and members need no proof.
	prover *prover
	keyed  bool
}

var (
	_ memberlist.Delegate      = (*membership)(nil)
	_ memberlist.EventDelegate = (*membership)(nil)
)

func (m *membership) NodeMeta(limit int) []byte {
	if len(m.meta) > limit {
		m.log.Error("live: memberlist metadata exceeds its limit", zap.Int("len", len(m.meta)), zap.Int("limit", limit))
		return nil
	}
	return m.meta
}
func (m *membership) NotifyMsg([]byte)                           {}
func (m *membership) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (m *membership) LocalState(join bool) []byte                { return nil }
func (m *membership) MergeRemoteState(buf []byte, join bool)     {}

func (m *membership) NotifyJoin(n *memberlist.Node)   { m.update(n) }
func (m *membership) NotifyUpdate(n *memberlist.Node) { m.update(n) }

func (m *membership) update(n *memberlist.Node) {
	id, addr, err := decodeMeta(n.Meta)
	if err != nil {
		m.log.Warn("live: ignoring memberlist member with bad metadata", zap.String("member", n.Name), zap.Error(err))
		return
	}
	if id == m.self {
		return
	}
	m.log.Debug("live: member alive", zap.Stringer("peer", id), zap.String("service", addr), zap.String("gossip", n.Address()))
	m.dir.learn(id, addr, n.Address())
}

func (m *membership) NotifyLeave(n *memberlist.Node) {
	id, _, err := decodeMeta(n.Meta)
	if err != nil || id == m.self {
		return
	}
	m.log.Info("live: member left or failed", zap.Stringer("peer", id), zap.String("gossip", n.Address()))
	m.dir.died(id)
	if m.onDead != nil {
		m.onDead(id)
	}
}

// zapLogWriter is the io.Writer behind memberlist's *log.Logger: it parses
// the "[LEVEL] " prefix of each line and logs the rest at that zap level
// (memberlistLevel). Lines at warn and above go through a rate limiter:
// memberlist logs one line per bad packet, so a stream of garbage UDP
// packets would otherwise become a stream of log lines.
type zapLogWriter struct {
	log   *zap.Logger
	limit *logLimiter
	// suppressed counts the lines the limiter dropped (may be nil).
	suppressed *atomic.Uint64
}

// Rate limit of memberlist's warn and error lines.
const (
	memberlistLogBurst    = 10
	memberlistLogInterval = time.Second
)

func newMemberlistLogger(l *zap.Logger) *log.Logger { return newMemberlistLoggerCounting(l, nil) }

// newMemberlistLoggerCounting is newMemberlistLogger counting suppressed
// lines in suppressed (when not nil).
func newMemberlistLoggerCounting(l *zap.Logger, suppressed *atomic.Uint64) *log.Logger {
	w := &zapLogWriter{log: l.With(zap.String("component", "memberlist")),
		limit: newLogLimiter(memberlistLogInterval, memberlistLogBurst), suppressed: suppressed}
	return log.New(w, "", 0)
}

func (w *zapLogWriter) Write(p []byte) (int, error) {
	n := len(p)
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte{'\n'}) {
		lvl, msg := memberlistLevel(line)
		ce := w.log.Check(lvl, string(msg))
		if ce == nil {
			continue
		}
		var fields []zap.Field
		if lvl >= zapcore.WarnLevel {
			var ok bool
			if fields, ok = admitLine(w.limit, w.suppressed, fields); !ok {
				continue
			}
		}
		ce.Write(fields...)
	}
	return n, nil
}

// admitLine asks the limiter l whether a line may be logged now; a line
// refused is counted in suppressed (when not nil). fields are those to
// log a line let through with: given ones, and the count of the lines
// suppressed before it.
func admitLine(l *logLimiter, suppressed *atomic.Uint64, fields []zap.Field) ([]zap.Field, bool) {
	ok, dropped := l.allow()
	if !ok {
		if suppressed != nil {
			suppressed.Add(1)
		}
		return nil, false
	}
	if dropped > 0 {
		fields = append(fields, zap.Int("suppressed_before", dropped))
	}
	return fields, true
}

// parseLogLevel splits memberlist's "[WARN] memberlist: ..." into a zap
// level and the message. Lines without a known prefix log at info.
func parseLogLevel(line []byte) (zapcore.Level, []byte) {
	levels := []struct {
		prefix string
		lvl    zapcore.Level
	}{
		{"[DEBUG]", zapcore.DebugLevel},
		{"[TRACE]", zapcore.DebugLevel},
		{"[INFO]", zapcore.InfoLevel},
		{"[WARN]", zapcore.WarnLevel},
		{"[ERR]", zapcore.ErrorLevel},
		{"[ERROR]", zapcore.ErrorLevel},
	}
	for _, l := range levels {
		if bytes.HasPrefix(line, []byte(l.prefix)) {
			return l.lvl, bytes.TrimLeft(line[len(l.prefix):], " ")
		}
	}
	return zapcore.InfoLevel, line
}

// closedConn is what a socket operation on a closed socket reports.
var closedConn = []byte("use of closed network connection")

// remoteMark is how memberlist names the remote end of a packet or stream
// in a log line.
var remoteMark = []byte("from=")

// memberlistLevel is parseLogLevel, except that a failure on a closed
// socket logs at debug: memberlist does not join its gossip and probe
// goroutines at shutdown, so after Runtime.Stop they report sends on the
// sockets Stop closed — expected, and not an error of a running node. And
// an error about what a remote end sent ("from=") logs at warn: anyone who
// reaches the gossip port can cause it, so it is no error of this node.
func memberlistLevel(line []byte) (zapcore.Level, []byte) {
	lvl, msg := parseLogLevel(line)
	if lvl > zapcore.DebugLevel && bytes.Contains(msg, closedConn) {
		lvl = zapcore.DebugLevel
	}
	if lvl == zapcore.ErrorLevel && bytes.Contains(msg, remoteMark) {
		lvl = zapcore.WarnLevel
	}
	return lvl, msg
}

// memberlistConfig builds memberlist's configuration from cfg.
func memberlistConfig(cfg RuntimeConfig, d *membership, logger *zap.Logger) (*memberlist.Config, error) {
	mc := memberlist.DefaultLocalConfig()
	mc.Name = cfg.ID.String()
	g := cfg.Gossip
	if err := gossipAddresses(cfg, mc); err != nil {
		return nil, err
	}
	mc.Label = cfg.Label
	if len(g.SecretKey) > 0 {
		mc.SecretKey = g.SecretKey
	}
	if g.Keyring != nil {
		mc.Keyring = g.Keyring
	}
	mc.Delegate = d
	mc.Events = d
	mc.Alive = d
	mc.Merge = d
	mc.LogOutput = nil
	mc.Logger = newMemberlistLoggerCounting(logger, d.logSuppressed)
	if g.Tune != nil {
		g.Tune(mc)
	}
	return mc, nil
}

// gossipAddresses sets the addresses memberlist binds (Gossip.Bind, by
// default derived from Listen; an empty host means every interface) and
// advertises (Gossip.Advertise, by default memberlist's choice).
func gossipAddresses(cfg RuntimeConfig, mc *memberlist.Config) error {
	host, port, err := splitPort(cmp.Or(cfg.Gossip.Bind, DefaultGossipBind(cfg.Listen)))
	if err != nil {
		return fmt.Errorf("live: RuntimeConfig.Gossip.Bind: %w", err)
	}
	mc.BindAddr, mc.BindPort = cmp.Or(host, "0.0.0.0"), port
	mc.AdvertiseAddr, mc.AdvertisePort = "", 0
	if cfg.Gossip.Advertise == "" {
		return nil
	}
	host, port, err = splitPort(cfg.Gossip.Advertise)
	if err != nil {
		return fmt.Errorf("live: RuntimeConfig.Gossip.Advertise: %w", err)
	}
	mc.AdvertiseAddr, mc.AdvertisePort = host, port
	return nil
}

func splitPort(hostport string) (string, int, error) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("invalid port in %q", hostport)
	}
	return host, int(port), nil
}
