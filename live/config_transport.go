package live

import (
	"cmp"
	"fmt"
	"time"
)

// Defaults of TransportConfig (DefaultMaxFrameSize is MaxFrameSize's).
const (
	// DefaultSendQueueLen is TransportConfig.SendQueueLen's default, in
	// frames per peer.
	DefaultSendQueueLen = 1024
	// DefaultTrySendQueueBytes is TransportConfig.TrySendQueueBytes's
	// default, in bytes per peer connection.
	DefaultTrySendQueueBytes = 64 << 10
	// DefaultInboxLen is TransportConfig.InboxLen's default, in events.
	DefaultInboxLen = 1024
	// DefaultDialTimeout is TransportConfig.DialTimeout's default.
	DefaultDialTimeout = 3 * time.Second
	// DefaultRedialBackoff is TransportConfig.RedialBackoff's default.
	DefaultRedialBackoff = 100 * time.Millisecond
	// DefaultMaxRedialBackoff is TransportConfig.MaxRedialBackoff's
	// default (RedialBackoff when that is longer).
	DefaultMaxRedialBackoff = 5 * time.Second
	// DefaultHandshakeTimeout is TransportConfig.HandshakeTimeout's
	// default.
	DefaultHandshakeTimeout = 2 * time.Second
	// DefaultWriteTimeout is TransportConfig.WriteTimeout's default.
	DefaultWriteTimeout = 5 * time.Second
)

// TransportConfig sizes the service transport's frames and queues and
// bounds the time its dials, handshakes and writes may take.
type TransportConfig struct {
	// MaxFrameSize is the largest frame payload, in bytes, the transport
	// sends or accepts; a peer announcing a larger frame is disconnected
	// before anything is allocated. In [MinFrameSize,
	// MaxFrameSizeLimit]; zero means DefaultMaxFrameSize (1 MiB).
	MaxFrameSize int
	// SendQueueLen bounds the frames queued for one peer's connection.
	// When a peer does not keep up and its queue is full, a Send closes
	// its connection and the service gets a transport error for it (a
	// TrySend is refused instead, a datagram dropped). Zero means
	// DefaultSendQueueLen (1024 frames).
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
	// full. Zero means DefaultInboxLen (1024 events).
	InboxLen int
	// DialTimeout bounds resolving a peer's service address (waiting for
	// memberlist to discover it) plus dialling it. Zero means
	// DefaultDialTimeout, 3s.
	DialTimeout time.Duration
	// RedialBackoff is how long the transport waits before dialling a
	// peer again after a dial (or handshake) to it failed; it doubles with
	// every further failure up to MaxRedialBackoff and resets on success.
	// Messages sent meanwhile wait in the peer's queue. It keeps a service
	// that answers a transport error by sending again (RandTree retrying
	// its only bootstrap node) from spinning on refused connections. Zero
	// means DefaultRedialBackoff, 100ms.
	RedialBackoff time.Duration
	// MaxRedialBackoff caps RedialBackoff's doubling; it must not be below
	// RedialBackoff. Zero means DefaultMaxRedialBackoff (5s), or
	// RedialBackoff when that is longer.
	MaxRedialBackoff time.Duration
	// HandshakeTimeout bounds the exchange of handshake frames on a new
	// connection. Zero means DefaultHandshakeTimeout, 2s.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one write to a connection; a peer that does not
	// read for this long is disconnected. Zero means DefaultWriteTimeout,
	// 5s.
	WriteTimeout time.Duration
}

// withDefaults returns t with every zero field set to its default.
func (t TransportConfig) withDefaults() TransportConfig {
	t.MaxFrameSize = cmp.Or(t.MaxFrameSize, DefaultMaxFrameSize)
	t.SendQueueLen = cmp.Or(t.SendQueueLen, DefaultSendQueueLen)
	t.TrySendQueueBytes = cmp.Or(t.TrySendQueueBytes, DefaultTrySendQueueBytes)
	t.InboxLen = cmp.Or(t.InboxLen, DefaultInboxLen)
	t.DialTimeout = cmp.Or(t.DialTimeout, DefaultDialTimeout)
	t.RedialBackoff = cmp.Or(t.RedialBackoff, DefaultRedialBackoff)
	t.MaxRedialBackoff = cmp.Or(t.MaxRedialBackoff, max(DefaultMaxRedialBackoff, t.RedialBackoff))
	t.HandshakeTimeout = cmp.Or(t.HandshakeTimeout, DefaultHandshakeTimeout)
	t.WriteTimeout = cmp.Or(t.WriteTimeout, DefaultWriteTimeout)
	return t
}

// validate checks t (defaults filled in).
func (t TransportConfig) validate() error {
	if t.MaxFrameSize < MinFrameSize || t.MaxFrameSize > MaxFrameSizeLimit {
		return fmt.Errorf("live: RuntimeConfig.Transport.MaxFrameSize %d is outside [%d, %d] (0 means %d)", t.MaxFrameSize, MinFrameSize, MaxFrameSizeLimit, DefaultMaxFrameSize)
	}
	if err := firstError(
		checkPositive("Transport.SendQueueLen", t.SendQueueLen, DefaultSendQueueLen, "length"),
		checkPositive("Transport.TrySendQueueBytes", t.TrySendQueueBytes, DefaultTrySendQueueBytes, "size in bytes"),
		checkPositive("Transport.InboxLen", t.InboxLen, DefaultInboxLen, "length"),
		checkPositive("Transport.DialTimeout", t.DialTimeout, DefaultDialTimeout, "duration"),
		checkPositive("Transport.RedialBackoff", t.RedialBackoff, DefaultRedialBackoff, "duration"),
		checkPositive("Transport.MaxRedialBackoff", t.MaxRedialBackoff, DefaultMaxRedialBackoff, "duration"),
		checkPositive("Transport.HandshakeTimeout", t.HandshakeTimeout, DefaultHandshakeTimeout, "duration"),
		checkPositive("Transport.WriteTimeout", t.WriteTimeout, DefaultWriteTimeout, "duration"),
	); err != nil {
		return err
	}
	if t.MaxRedialBackoff < t.RedialBackoff {
		return fmt.Errorf("live: RuntimeConfig.Transport.MaxRedialBackoff (%v) is below RedialBackoff (%v)", t.MaxRedialBackoff, t.RedialBackoff)
	}
	return nil
}
