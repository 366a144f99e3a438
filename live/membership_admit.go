package live

import (
	"errors"
	"fmt"

	"github.com/hashicorp/memberlist"
)

// memberlist asks the membership about every node a gossip message or a
// push/pull merge would add (AliveDelegate, MergeDelegate). Without a
// gossip key anyone can send memberlist packets, and the soak
// (bench/soak) found that random garbage on the gossip port could make
// memberlist take in members with no address and nonsense protocol
// versions: the cluster's protocol range became [1, 0], every push/pull
// and join failed, and restarted nodes could not rejoin. A member is
// admitted only if it is one of ours: its metadata decodes to a node ID
// whose name it carries, with an address and protocol ranges that make
// sense.
var (
	_ memberlist.AliveDelegate = (*membership)(nil)
	_ memberlist.MergeDelegate = (*membership)(nil)
)

// errNotAMember is wrapped by admit's refusals.
var errNotAMember = errors.New("live: not a crystalball member")

// NotifyAlive implements memberlist.AliveDelegate.
func (m *membership) NotifyAlive(n *memberlist.Node) error { return admit(n) }

// NotifyMerge implements memberlist.MergeDelegate: a push/pull state with
// one member that is not ours is refused whole.
func (m *membership) NotifyMerge(peers []*memberlist.Node) error {
	for _, n := range peers {
		if err := admit(n); err != nil {
			return err
		}
	}
	return nil
}

// admit reports whether memberlist node n can be a member of a
// crystalball cluster.
func admit(n *memberlist.Node) error {
	id, _, err := decodeMeta(n.Meta)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", errNotAMember, quoteName(n.Name), err)
	}
	if n.Name != id.String() {
		return fmt.Errorf("%w: %q carries the metadata of %v", errNotAMember, quoteName(n.Name), id)
	}
	if len(n.Addr) != 4 && len(n.Addr) != 16 || n.Port == 0 {
		return fmt.Errorf("%w: %v has no address", errNotAMember, id)
	}
	if n.PMin == 0 || n.PMin > n.PCur || n.PCur > n.PMax || n.PMin > memberlist.ProtocolVersionMax || n.PMax < memberlist.ProtocolVersionMin {
		return fmt.Errorf("%w: %v speaks protocol versions %d ≤ %d ≤ %d", errNotAMember, id, n.PMin, n.PCur, n.PMax)
	}
	if n.DMin > n.DCur || n.DCur > n.DMax {
		return fmt.Errorf("%w: %v speaks delegate versions %d ≤ %d ≤ %d", errNotAMember, id, n.DMin, n.DCur, n.DMax)
	}
	return nil
}

// quoteName bounds a member name in an error: it comes off the network.
func quoteName(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
