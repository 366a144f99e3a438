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

	"go.uber.org/zap"
)

// MaxLabelLen bounds RuntimeConfig.Label (memberlist's own limit).
const MaxLabelLen = 255

// Defaults of RuntimeConfig's own fields; its groups list theirs
// (GossipConfig, TransportConfig, LimitsConfig).
const (
	// DefaultListen is RuntimeConfig.Listen's default: a free loopback
	// port.
	DefaultListen = "127.0.0.1:0"
	// DefaultJoinTimeout is RuntimeConfig.JoinTimeout's default.
	DefaultJoinTimeout = 10 * time.Second
)

// RuntimeConfig configures a Runtime. The zero value of every field except
// ID means that field's documented default (the value DefaultRuntimeConfig
// returns), and NewRuntime fills those defaults in before it validates the
// config: RuntimeConfig{ID: 1} is a complete configuration. Negative sizes
// and durations are errors, never defaults.
//
// The fields that name the node and its cluster are at the top; the rest
// is grouped by concern: membership (Gossip), the service transport's
// queues and timeouts (Transport), the bounds a hostile peer meets
// (Limits) and the node's store (Durability).
type RuntimeConfig struct {
	// ID is this node's ID; required (not None). It is also the node's
	// memberlist name (ID.String(), e.g. "n3"), so it must be unique in the
	// cluster.
	ID node.ID
	// Listen is the host:port the service transport (framed TCP) listens
	// on. Port 0 picks a free port (see Runtime.Addr). Zero ("") means
	// DefaultListen, "127.0.0.1:0".
	Listen string
	// Advertise is the host:port peers dial to reach this node's service
	// transport, published in memberlist metadata. Zero ("") means the
	// address the listener actually bound (which must then not be an
	// unspecified address such as 0.0.0.0).
	Advertise string
	// Join lists service addresses (host:port, as in Listen) of nodes
	// already in the cluster. Start asks each, over the handshake of the
	// service transport, for its ID and gossip address, joins memberlist
	// through them and reports their IDs through Runtime.Bootstrap. Zero
	// (empty) means this node starts a new cluster.
	Join []string
	// JoinTimeout bounds Start's attempts to reach the Join addresses and
	// join memberlist through them (retried every 200ms). Zero means
	// DefaultJoinTimeout, 10s.
	JoinTimeout time.Duration
	// Label names the cluster. The service transport's handshake refuses
	// peers with another label, and memberlist gets it as its Label
	// (packets with another label are dropped). At most MaxLabelLen
	// bytes. Zero ("") means no label.
	Label string
	// Seed seeds the node's random source (see node.CoreConfig.Seed); zero
	// is a seed like any other.
	Seed uint64
	// TLS, when set, runs the service transport over mutual TLS 1.3: both
	// ends of every connection present a certificate of the cluster CA,
	// and a hello must claim the node ID its sender's certificate names
	// (see TLSConfig; its certificate must name ID). A peer refused for
	// its certificate counts in Counters.FramesRejected. Zero (nil) means
	// plaintext without authentication, for local experiments: Start logs
	// a warning. Gossip has its own key (GossipConfig.SecretKey).
	TLS *TLSConfig
	// Gossip configures memberlist: its addresses, its encryption and
	// its timing. Its zero value means memberlist's local-network
	// defaults on an address derived from Listen, unencrypted.
	Gossip GossipConfig
	// Transport sizes the service transport's frames and queues and
	// bounds its dials, handshakes and writes. Its zero value means the
	// defaults its fields document.
	Transport TransportConfig
	// Limits bounds what one peer may cost the node: inbound connections,
	// silent and trickling connections, peers known from a hello only.
	// Its zero value means the defaults its fields document.
	Limits LimitsConfig
	// Durability says where the node keeps its durable state. Its zero
	// value means no store (a node.Durable service then needs
	// Durability.Ephemeral).
	Durability DurabilityConfig
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
}

// DefaultRuntimeConfig returns the configuration a zero field stands for,
// with ID unset: a node for one machine or a LAN, listening on a free
// loopback port (DefaultListen), with memberlist's local-network timing,
// the transport's and the limits' Default… constants, no store, and logs
// discarded. Every field without a default is zero (see RuntimeConfig).
func DefaultRuntimeConfig() RuntimeConfig { return RuntimeConfig{}.withDefaults() }

// withDefaults returns c with every zero field that has a default set to
// it (see DefaultRuntimeConfig).
func (c RuntimeConfig) withDefaults() RuntimeConfig {
	c.Listen = cmp.Or(c.Listen, DefaultListen)
	c.JoinTimeout = cmp.Or(c.JoinTimeout, DefaultJoinTimeout)
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	c.Gossip = c.Gossip.withDefaults()
	c.Transport = c.Transport.withDefaults()
	c.Limits = c.Limits.withDefaults()
	return c
}

// Validate checks the configuration as NewRuntime will use it: zero fields
// stand for their defaults, so they pass. Every error names the offending
// field and starts with "live: RuntimeConfig." (a group's fields as
// "live: RuntimeConfig.Transport.DialTimeout", say).
func (c RuntimeConfig) Validate() error {
	c = c.withDefaults()
	return firstError(
		c.validateIdentity(),
		c.validateAddresses(),
		c.Gossip.validate(),
		c.Transport.validate(),
		c.Limits.validate(),
		c.validateLayers(),
		c.Durability.validate(),
	)
}

// validateIdentity checks what names the node and its cluster: ID, Label
// and TLS.
func (c RuntimeConfig) validateIdentity() error {
	if c.ID == node.None {
		return errors.New("live: RuntimeConfig.ID must not be none (0)")
	}
	if len(c.Label) > MaxLabelLen {
		return fmt.Errorf("live: RuntimeConfig.Label is %d bytes, at most %d allowed", len(c.Label), MaxLabelLen)
	}
	return c.TLS.validate(c.ID)
}

// validateAddresses checks the service transport's addresses, the Join
// list and JoinTimeout (defaults filled in).
func (c RuntimeConfig) validateAddresses() error {
	return firstError(
		checkHostPort("Listen", c.Listen, true),
		c.validateAdvertise(),
		c.validateJoin(),
		checkPositive("JoinTimeout", c.JoinTimeout, DefaultJoinTimeout, "duration"),
	)
}

// validateAdvertise checks Advertise, which is required when Listen names
// no specific host (peers could not dial it).
func (c RuntimeConfig) validateAdvertise() error {
	if c.Advertise != "" {
		return checkHostPort("Advertise", c.Advertise, false)
	}
	if host, _, _ := net.SplitHostPort(c.Listen); host == "" || isUnspecified(host) {
		return fmt.Errorf("live: RuntimeConfig.Advertise is required when Listen (%q) has no specific host", c.Listen)
	}
	return nil
}

// validateJoin checks every Join address.
func (c RuntimeConfig) validateJoin() error {
	for i, j := range c.Join {
		if err := checkHostPort(fmt.Sprintf("Join[%d]", i), j, false); err != nil {
			return err
		}
	}
	return nil
}

// validateLayers checks that no layer is nil.
func (c RuntimeConfig) validateLayers() error {
	for i, l := range c.Layers {
		if l == nil {
			return fmt.Errorf("live: RuntimeConfig.Layers[%d] is nil", i)
		}
	}
	return nil
}

// firstError returns the first of errs that is not nil, or nil: the
// checks of a config run in order and the first failure is reported.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkPositive returns the error of a size, count or duration field
// that is not positive once its default (def) is filled in; unit says
// what the field counts in the message.
func checkPositive[T int | time.Duration](field string, v, def T, unit string) error {
	if v <= 0 {
		return fmt.Errorf("live: RuntimeConfig.%s is %v; want a positive %s or 0 for the default (%v)", field, v, unit, def)
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
	if bind {
		return nil
	}
	if p == 0 {
		return fmt.Errorf("live: RuntimeConfig.%s %q: port 0 names no peer", field, addr)
	}
	if host == "" {
		return fmt.Errorf("live: RuntimeConfig.%s %q: host is required", field, addr)
	}
	return nil
}

// checkOptionalHostPort is checkHostPort for a field whose zero value
// ("") means a default.
func checkOptionalHostPort(field, addr string, bind bool) error {
	if addr == "" {
		return nil
	}
	return checkHostPort(field, addr, bind)
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}
