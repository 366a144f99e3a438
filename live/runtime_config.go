package live

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"

	"github.com/hashicorp/memberlist"
	"go.uber.org/zap"
)

// MaxLabelLen bounds RuntimeConfig.Label (memberlist's own limit).
const MaxLabelLen = 255

// RuntimeConfig configures a Runtime. The zero value of every field except
// ID means that field's documented default (the value DefaultRuntimeConfig
// returns), and NewRuntime fills those defaults in before it validates the
// config: RuntimeConfig{ID: 1} is a complete configuration. Negative sizes
// and durations are errors, never defaults.
type RuntimeConfig struct {
	// ID is this node's ID; required (not None). It is also the node's
	// memberlist name (ID.String(), e.g. "n3"), so it must be unique in the
	// cluster.
	ID node.ID
	// Listen is the host:port the service transport (framed TCP) listens
	// on. Port 0 picks a free port (see Runtime.Addr). Zero ("") means
	// "127.0.0.1:0".
	Listen string
	// Advertise is the host:port peers dial to reach this node's service
	// transport, published in memberlist metadata. Zero ("") means the
	// address the listener actually bound (which must then not be an
	// unspecified address such as 0.0.0.0).
	Advertise string
	// GossipBind is the host:port memberlist binds (UDP and TCP). Zero
	// ("") means DefaultGossipBind(Listen): Listen's host and a port
	// derived from Listen's, so that a node restarted with the same Listen
	// gossips from the same address and its peers take it for the same
	// member rather than a conflicting one (Listen's port 0 gives port 0,
	// a free port).
	GossipBind string
	// GossipAdvertise is the host:port memberlist advertises to peers.
	// Zero ("") means memberlist's choice (the bound address).
	GossipAdvertise string
	// Join lists service addresses (host:port, as in Listen) of nodes
	// already in the cluster. Start asks each, over the handshake of the
	// service transport, for its ID and gossip address, joins memberlist
	// through them and reports their IDs through Runtime.Bootstrap. Zero
	// (empty) means this node starts a new cluster.
	Join []string
	// Label names the cluster. The service transport's handshake refuses
	// peers with another label, and memberlist gets it as its Label
	// (packets with another label are dropped). At most MaxLabelLen
	// bytes. Zero ("") means no label.
	Label string
	// TLS, when set, runs the service transport over mutual TLS 1.3: both
	// ends of every connection present a certificate of the cluster CA,
	// and a hello must claim the node ID its sender's certificate names
	// (see TLSConfig; its certificate must name ID). A peer refused for
	// its certificate counts in Counters.FramesRejected. Zero (nil) means
	// plaintext without authentication, for local experiments: Start logs
	// a warning.
	TLS *TLSConfig
	// SecretKey, when set, is memberlist's primary gossip encryption key
	// (16, 24 or 32 bytes: AES-128/192/256). It protects gossip only; TLS
	// protects the service transport. Zero (nil) means no encryption
	// (Start logs a warning).
	SecretKey []byte
	// Keyring, when set, is memberlist's keyring (for key rotation); it
	// takes precedence over SecretKey as memberlist documents. Zero (nil)
	// means none.
	Keyring *memberlist.Keyring
	// Seed seeds the node's random source (see node.CoreConfig.Seed); zero
	// is a seed like any other.
	Seed uint64
	// MaxFrameSize is the largest frame payload, in bytes, the transport
	// sends or accepts; a peer announcing a larger frame is disconnected
	// before anything is allocated. In [MinFrameSize,
	// MaxFrameSizeLimit]; zero means DefaultMaxFrameSize (1 MiB).
	MaxFrameSize int
	// SendQueueLen bounds the frames queued for one peer's connection.
	// When a peer does not keep up and its queue is full, a Send closes
	// its connection and the service gets a transport error for it (a
	// TrySend is refused instead, a datagram dropped). Zero means
	// DefaultSendQueueLen frames.
	SendQueueLen int
	// TrySendQueueBytes bounds, in bytes, what a node.Env.TrySend may
	// find waiting in the peer's write queue: a TrySend is refused (the
	// service gets node.EventSendRefused; the connection stays open) when
	// the frames queued for the peer and not yet taken by the
	// connection's writer (which buffers up to 64 KiB in front of the
	// socket's own buffers) plus the new frame would exceed it, or when
	// the queue already holds SendQueueLen frames. Every kind of frame
	// counts (Send, TrySend, datagrams, the layers' messages; frame bytes,
	// headers included). A queue with nothing waiting accepts a TrySend of
	// any size (up to MaxFrameSize), so a message larger than the bound is
	// not refused forever. Send is never refused. Zero means
	// DefaultTrySendQueueBytes (64 KiB).
	TrySendQueueBytes int
	// InboxLen bounds the inbound messages and transport events waiting
	// for the core goroutine; readers block (TCP pushes back) when it is
	// full. Zero means DefaultInboxLen events.
	InboxLen int
	// DialTimeout bounds resolving a peer's service address (waiting for
	// memberlist to discover it) plus dialling it. Zero means 3s.
	DialTimeout time.Duration
	// RedialBackoff is how long the transport waits before dialling a
	// peer again after a dial (or handshake) to it failed; it doubles with
	// every further failure up to MaxRedialBackoff and resets on success.
	// Messages sent meanwhile wait in the peer's queue. It keeps a service
	// that answers a transport error by sending again (RandTree retrying
	// its only bootstrap node) from spinning on refused connections. Zero
	// means 100ms.
	RedialBackoff time.Duration
	// MaxRedialBackoff caps RedialBackoff's doubling; it must not be below
	// RedialBackoff. Zero means 5s, or RedialBackoff when that is longer.
	MaxRedialBackoff time.Duration
	// HandshakeTimeout bounds the exchange of handshake frames on a new
	// connection. Zero means 2s.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one write to a connection; a peer that does not
	// read for this long is disconnected. Zero means 5s.
	WriteTimeout time.Duration
	// Per-peer resource bounds of the service transport (see limits.go).
	//
	// MaxInboundConns caps the open inbound connections (handshaking or
	// established) in total; a connection accepted beyond it is closed at
	// once and counted in Counters.ConnsRefused. Zero means
	// DefaultMaxInboundConns.
	MaxInboundConns int
	// MaxInboundConnsPerHost caps the open inbound connections from one
	// remote IP address, so one host cannot take all of MaxInboundConns.
	// Zero means DefaultMaxInboundConnsPerHost.
	MaxInboundConnsPerHost int
	// IdleTimeout is how long an established inbound connection may carry
	// nothing (not even the keepalives each dialler sends after
	// IdleTimeout/3 of silence) before it is closed. Zero means 2m.
	IdleTimeout time.Duration
	// FrameReadTimeout bounds the reading of one frame, from its first
	// byte to its last: a peer trickling a frame slower than that is
	// disconnected. Zero means 30s (at the default MaxFrameSize, a
	// minimum rate of about 35 KB/s).
	FrameReadTimeout time.Duration
	// UnconfirmedPeerTTL is how long a node ID learned only from a hello
	// (not from memberlist) stays in the peer directory. Zero means 30s.
	UnconfirmedPeerTTL time.Duration
	// JoinTimeout bounds Start's attempts to reach the Join addresses and
	// join memberlist through them (retried every 200ms). Zero means 10s.
	JoinTimeout time.Duration
	// LeaveTimeout bounds the broadcast of memberlist's leave message in
	// Stop. Zero means 1s.
	LeaveTimeout time.Duration
	// Logger receives the runtime's logs, memberlist's logs (bridged to
	// zap levels) and, with a "node" field, the service's. Zero (nil)
	// means zap.NewNop().
	Logger *zap.Logger
	// Layers run beside the core on the core goroutine, in this order,
	// with a hook on every event and send (see layer.Layer): a snapshot
	// manager (snapshot.Layer) first, then whatever must see only the
	// events it lets through. Their message types are registered beside
	// the service's and travel on the service transport. A layer belongs
	// to one runtime (NewRuntime attaches it). Zero (empty) means none.
	Layers []layer.Layer
	// DataDir, when set, is the directory of the node's store (a bbolt
	// file, StoreFile; created if need be, mode 0700): the service's
	// durable part (node.Durable) and its durable layers'
	// (layer.Durable) are written and synced there before the
	// messages of the step that changed them leave the node, and
	// restored from it when the node starts again (layer.Pipeline.Restart).
	// One node per directory: another process's lock, or a directory
	// initialised for another node ID, service or cluster label, fails
	// Start; so do a damaged store (ErrStoreCorrupt) and, in a directory
	// initialised before (IdentityFile), a store that is missing, empty or
	// another's (ErrStoreLost; see ForgetLostStore). Zero ("") means no
	// store: a node.Durable service then needs Ephemeral.
	DataDir string
	// ForgetLostStore lets a node start with a new, empty store in a
	// DataDir whose store was lost (ErrStoreLost): the node forgets what
	// it promised — for a Paxos acceptor, the promises that keep the
	// cluster safe —, so it is for an operator who knows the loss and
	// accepts it. False (the default) refuses to start.
	ForgetLostStore bool
	// Ephemeral lets a node.Durable service run without DataDir, its
	// durable part kept in memory only: a restarted node forgets what it
	// promised (a Paxos acceptor may break a promise), which suits tests
	// and experiments, not deployments. Without it NewRuntime refuses
	// such a service (ErrDurableRequired). It must not be set with
	// DataDir or Store.
	Ephemeral bool
	// Store, when set, is the node's store instead of DataDir's (a test
	// or an embedding application's own); the runtime closes it when it
	// stops. It must not be set with DataDir. Zero (nil) means DataDir's.
	Store Store
	// TuneMemberlist, when set, is called on the memberlist configuration
	// (memberlist.DefaultLocalConfig with the fields above applied) just
	// before memberlist is created, to adjust failure-detection timing and
	// the like. It must not replace Delegate, Events, Logger, Name or the
	// addresses. Zero (nil) means memberlist's local-network defaults.
	TuneMemberlist func(*memberlist.Config)
}

// Defaults of RuntimeConfig's queue lengths.
const (
	// DefaultSendQueueLen is RuntimeConfig.SendQueueLen's default, in
	// frames per peer.
	DefaultSendQueueLen = 1024
	// DefaultInboxLen is RuntimeConfig.InboxLen's default, in events.
	DefaultInboxLen = 1024
	// DefaultTrySendQueueBytes is RuntimeConfig.TrySendQueueBytes's
	// default, in bytes per peer connection.
	DefaultTrySendQueueBytes = 64 << 10
)

// DefaultRuntimeConfig returns the configuration a zero field stands for,
// with ID unset: a node for one machine or a LAN, listening on a free
// loopback port, with memberlist's local-network timing. Every field that
// is not listed below defaults to its zero value (see RuntimeConfig).
func DefaultRuntimeConfig() RuntimeConfig {
	return RuntimeConfig{
		// The service transport listens on a free loopback port.
		Listen: "127.0.0.1:0",

		// Frames of up to 1 MiB (bytes of payload after the length
		// prefix), enough for a compressed checkpoint of a large node.
		MaxFrameSize: DefaultMaxFrameSize,

		// 1024 frames may wait per peer connection before the peer is
		// declared too slow (its connection is closed: a transport
		// error); 1024 inbound events may wait for the core goroutine
		// before readers block.
		SendQueueLen: DefaultSendQueueLen,
		InboxLen:     DefaultInboxLen,
		// A TrySend is refused once 64 KiB wait for the peer's socket.
		TrySendQueueBytes: DefaultTrySendQueueBytes,

		// 3 s to find a peer's address in memberlist and dial it; 2 s for
		// the handshake on a new connection; 5 s for one write before a
		// peer that does not read is disconnected.
		DialTimeout:      3 * time.Second,
		HandshakeTimeout: 2 * time.Second,
		WriteTimeout:     5 * time.Second,

		// Resource bounds per peer (see the RuntimeConfig fields).
		MaxInboundConns:        DefaultMaxInboundConns,
		MaxInboundConnsPerHost: DefaultMaxInboundConnsPerHost,
		IdleTimeout:            2 * time.Minute,
		FrameReadTimeout:       30 * time.Second,
		UnconfirmedPeerTTL:     30 * time.Second,

		// After a failed dial, wait 100 ms before the next one, doubling
		// up to 5 s while failures continue.
		RedialBackoff:    100 * time.Millisecond,
		MaxRedialBackoff: 5 * time.Second,

		// 10 s for Start to join the cluster through Join; 1 s for Stop to
		// broadcast memberlist's leave message.
		JoinTimeout:  10 * time.Second,
		LeaveTimeout: time.Second,

		// Logs are discarded.
		Logger: zap.NewNop(),
	}
}

// withDefaults returns c with every zero field that has a default set to
// it (see DefaultRuntimeConfig).
func (c RuntimeConfig) withDefaults() RuntimeConfig {
	d := DefaultRuntimeConfig()
	c.Listen = cmp.Or(c.Listen, d.Listen)
	c.MaxFrameSize = cmp.Or(c.MaxFrameSize, d.MaxFrameSize)
	c.SendQueueLen = cmp.Or(c.SendQueueLen, d.SendQueueLen)
	c.InboxLen = cmp.Or(c.InboxLen, d.InboxLen)
	c.TrySendQueueBytes = cmp.Or(c.TrySendQueueBytes, d.TrySendQueueBytes)
	c.DialTimeout = cmp.Or(c.DialTimeout, d.DialTimeout)
	c.HandshakeTimeout = cmp.Or(c.HandshakeTimeout, d.HandshakeTimeout)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, d.WriteTimeout)
	c.RedialBackoff = cmp.Or(c.RedialBackoff, d.RedialBackoff)
	c.MaxRedialBackoff = cmp.Or(c.MaxRedialBackoff, max(d.MaxRedialBackoff, c.RedialBackoff))
	c.JoinTimeout = cmp.Or(c.JoinTimeout, d.JoinTimeout)
	c.LeaveTimeout = cmp.Or(c.LeaveTimeout, d.LeaveTimeout)
	c.Logger = cmp.Or(c.Logger, d.Logger)
	c = c.limitsWithDefaults(d)
	return c
}

// Validate checks the configuration as NewRuntime will use it: zero fields
// stand for their defaults, so they pass. Every error names the offending
// field and starts with "live: RuntimeConfig.".
func (c RuntimeConfig) Validate() error {
	c = c.withDefaults()
	if c.ID == node.None {
		return errors.New("live: RuntimeConfig.ID must not be none (0)")
	}
	if err := checkHostPort("Listen", c.Listen, true); err != nil {
		return err
	}
	if c.Advertise != "" {
		if err := checkHostPort("Advertise", c.Advertise, false); err != nil {
			return err
		}
	} else if host, _, _ := net.SplitHostPort(c.Listen); host == "" || isUnspecified(host) {
		return fmt.Errorf("live: RuntimeConfig.Advertise is required when Listen (%q) has no specific host", c.Listen)
	}
	if c.GossipBind != "" {
		if err := checkHostPort("GossipBind", c.GossipBind, true); err != nil {
			return err
		}
	}
	if c.GossipAdvertise != "" {
		if err := checkHostPort("GossipAdvertise", c.GossipAdvertise, false); err != nil {
			return err
		}
	}
	for i, j := range c.Join {
		if err := checkHostPort(fmt.Sprintf("Join[%d]", i), j, false); err != nil {
			return err
		}
	}
	if len(c.Label) > MaxLabelLen {
		return fmt.Errorf("live: RuntimeConfig.Label is %d bytes, at most %d allowed", len(c.Label), MaxLabelLen)
	}
	if err := c.TLS.validate(c.ID); err != nil {
		return err
	}
	if n := len(c.SecretKey); n != 0 && n != 16 && n != 24 && n != 32 {
		return fmt.Errorf("live: RuntimeConfig.SecretKey is %d bytes, want 16, 24 or 32", n)
	}
	if c.MaxFrameSize < MinFrameSize || c.MaxFrameSize > MaxFrameSizeLimit {
		return fmt.Errorf("live: RuntimeConfig.MaxFrameSize %d is outside [%d, %d] (0 means %d)", c.MaxFrameSize, MinFrameSize, MaxFrameSizeLimit, DefaultMaxFrameSize)
	}
	if c.SendQueueLen <= 0 {
		return fmt.Errorf("live: RuntimeConfig.SendQueueLen is %d; want a positive length or 0 for the default", c.SendQueueLen)
	}
	if c.TrySendQueueBytes <= 0 {
		return fmt.Errorf("live: RuntimeConfig.TrySendQueueBytes is %d; want a positive size in bytes or 0 for the default", c.TrySendQueueBytes)
	}
	if c.InboxLen <= 0 {
		return fmt.Errorf("live: RuntimeConfig.InboxLen is %d; want a positive length or 0 for the default", c.InboxLen)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"DialTimeout", c.DialTimeout},
		{"HandshakeTimeout", c.HandshakeTimeout},
		{"RedialBackoff", c.RedialBackoff},
		{"MaxRedialBackoff", c.MaxRedialBackoff},
		{"WriteTimeout", c.WriteTimeout},
		{"JoinTimeout", c.JoinTimeout},
		{"LeaveTimeout", c.LeaveTimeout},
	} {
		if d.v <= 0 {
			return fmt.Errorf("live: RuntimeConfig.%s is %v; want a positive duration or 0 for the default", d.name, d.v)
		}
	}
	if err := c.validateLimits(); err != nil {
		return err
	}
	if c.MaxRedialBackoff < c.RedialBackoff {
		return fmt.Errorf("live: RuntimeConfig.MaxRedialBackoff (%v) is below RedialBackoff (%v)", c.MaxRedialBackoff, c.RedialBackoff)
	}
	for i, l := range c.Layers {
		if l == nil {
			return fmt.Errorf("live: RuntimeConfig.Layers[%d] is nil", i)
		}
	}
	switch {
	case c.DataDir != "" && c.Store != nil:
		return errors.New("live: RuntimeConfig.DataDir and Store both name the node's store; give one")
	case c.Ephemeral && (c.DataDir != "" || c.Store != nil):
		return errors.New("live: RuntimeConfig.Ephemeral contradicts DataDir or Store: a node with a store keeps its durable state")
	case c.ForgetLostStore && c.DataDir == "":
		return errors.New("live: RuntimeConfig.ForgetLostStore needs DataDir: it is about a data directory's lost store")
	}
	return nil
}

// checkHostPort checks a host:port field; port 0 is allowed only for
// addresses this node binds.
func checkHostPort(field, addr string, bind bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("live: RuntimeConfig.%s %q: want host:port: %w", field, addr, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("live: RuntimeConfig.%s %q: invalid port", field, addr)
	}
	if p == 0 && !bind {
		return fmt.Errorf("live: RuntimeConfig.%s %q: port 0 names no peer", field, addr)
	}
	if host == "" && !bind {
		return fmt.Errorf("live: RuntimeConfig.%s %q: host is required", field, addr)
	}
	return nil
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}
