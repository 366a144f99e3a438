package live

import (
	"cmp"
	"fmt"
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
	if g.Bind != "" {
		if err := checkHostPort("Gossip.Bind", g.Bind, true); err != nil {
			return err
		}
	}
	if g.Advertise != "" {
		if err := checkHostPort("Gossip.Advertise", g.Advertise, false); err != nil {
			return err
		}
	}
	if n := len(g.SecretKey); n != 0 && n != 16 && n != 24 && n != 32 {
		return fmt.Errorf("live: RuntimeConfig.Gossip.SecretKey is %d bytes, want 16, 24 or 32", n)
	}
	return checkPositive("Gossip.LeaveTimeout", g.LeaveTimeout, DefaultLeaveTimeout, "duration")
}
