package live

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/memberlist"
)

// DefaultLeaveTimeout is GossipConfig.LeaveTimeout's default.
const DefaultLeaveTimeout = time.Second

// GossipConfig configures the node's memberlist: where it gossips, how
// gossip is encrypted and how long Stop broadcasts the node's leave.
type GossipConfig struct {
	// Bind is the host:port memberlist binds (UDP and TCP). Zero ("")
	// means DefaultGossipBind(RuntimeConfig.Listen): Listen's host and a
	// port derived from Listen's, so that a node restarted with the same
	// Listen gossips from the same address and its peers take it for the
	// same member rather than a conflicting one (Listen's port 0 gives
	// port 0, a free port).
	Bind string
	// Advertise is the host:port memberlist advertises to peers. Zero
	// ("") means memberlist's choice (the bound address).
	Advertise string
	// SecretKey, when set, is memberlist's primary gossip encryption key
	// (16, 24 or 32 bytes: AES-128/192/256). It protects gossip only;
	// RuntimeConfig.TLS protects the service transport. Zero (nil) means
	// no encryption (Start logs a warning) unless Keyring is set.
	SecretKey []byte
	// Keyring, when set, is memberlist's keyring (for key rotation); it
	// takes precedence over SecretKey as memberlist documents. Zero (nil)
	// means none.
	Keyring *memberlist.Keyring
	// LeaveTimeout bounds the broadcast of memberlist's leave message in
	// Stop. Zero means DefaultLeaveTimeout, 1s.
	LeaveTimeout time.Duration
	// Tune, when set, is called on the memberlist configuration
	// (memberlist.DefaultLocalConfig with the fields above applied) just
	// before memberlist is created, to adjust failure-detection timing and
	// the like. It must not replace Delegate, Events, Logger, Name or the
	// addresses. Zero (nil) means memberlist's local-network defaults.
	Tune func(*memberlist.Config)
}

// encrypted reports whether gossip is encrypted (a key or a keyring).
func (g GossipConfig) encrypted() bool { return len(g.SecretKey) > 0 || g.Keyring != nil }

// withDefaults returns g with LeaveTimeout's default filled in (Bind's
// depends on Listen: memberlistConfig derives it).
func (g GossipConfig) withDefaults() GossipConfig {
	g.LeaveTimeout = cmp.Or(g.LeaveTimeout, DefaultLeaveTimeout)
	return g
}

// validate checks g (defaults filled in).
func (g GossipConfig) validate() error {
	return firstError(
		checkOptionalHostPort("Gossip.Bind", g.Bind, true),
		checkOptionalHostPort("Gossip.Advertise", g.Advertise, false),
		checkSecretKey(g.SecretKey),
		checkPositive("Gossip.LeaveTimeout", g.LeaveTimeout, DefaultLeaveTimeout, "duration"),
	)
}

// checkSecretKey checks Gossip.SecretKey: none, or a key of one of
// gossipKeySizes.
func checkSecretKey(k []byte) error {
	if n := len(k); n != 0 && !slices.Contains(gossipKeySizes, n) {
		return fmt.Errorf("live: RuntimeConfig.Gossip.SecretKey is %d bytes, want 16, 24 or 32", n)
	}
	return nil
}
