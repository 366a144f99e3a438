package live

import (
	"net"
	"strconv"
)

// GossipPortOffset is how far the default gossip port lies from the
// service port (DefaultGossipBind). Not 1: nodes sharing a host commonly
// listen on consecutive ports (7001, 7002, ...), where port+1 is the next
// node's service port.
const GossipPortOffset = 10000

// DefaultGossipBind returns the address memberlist binds by default for a
// node whose service transport listens on listen (RuntimeConfig.Gossip.Bind,
// crystalball node's --gossip): listen's host, and listen's port plus
// GossipPortOffset, or minus it when the sum would pass 65535 (7001 gives
// 17001, 60000 gives 50000). Port 0 (a free port) gives port 0. The
// derivation is deterministic so that a node restarted on the same service
// address gossips from the same address: memberlist then takes it for the
// same member, which refutes its own death, instead of a second member with
// a conflicting address. It returns "" when listen is not host:port with a
// numeric port.
func DefaultGossipBind(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return ""
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return ""
	}
	switch {
	case p == 0:
	case p+GossipPortOffset <= 65535:
		p += GossipPortOffset
	default:
		p -= GossipPortOffset
	}
	return net.JoinHostPort(host, strconv.FormatUint(p, 10))
}
