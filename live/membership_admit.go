package live

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"

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

// NotifyAlive implements memberlist.AliveDelegate: a member must be ours
// and proved on the service transport (membership_prove.go).
func (m *membership) NotifyAlive(n *memberlist.Node) error {
	if err := admit(n); err != nil {
		return err
	}
	return m.vouch(n)
}

// NotifyMerge implements memberlist.MergeDelegate (a join's push/pull): a
// state with one member that is not ours is refused whole; its alive
// members not proved yet are proved now, in parallel, and those that fail
// are refused one by one when memberlist merges them (NotifyAlive).
func (m *membership) NotifyMerge(peers []*memberlist.Node) error {
	unproven := map[node.ID]string{}
	for _, n := range peers {
		if err := admit(n); err != nil {
			return err
		}
		id, addr, _ := decodeMeta(n.Meta)
		if n.State == memberlist.StateAlive && m.needsProof(id, addr) {
			unproven[id] = addr
		}
	}
	if len(unproven) > maxPendingProofs {
		return fmt.Errorf("%w: a push/pull state with %d members to prove", errNotAMember, len(unproven))
	}
	if len(unproven) > 0 {
		m.prover.proveAll(unproven)
	}
	return nil
}

// needsProof reports whether id at addr must prove itself before it is
// admitted.
func (m *membership) needsProof(id node.ID, addr string) bool {
	return m.prover != nil && !m.keyed && id != m.self && !m.prover.vouched(id, addr)
}

// vouch admits a member proved on the service transport and refuses any
// other, queueing its proof.
func (m *membership) vouch(n *memberlist.Node) error {
	id, addr, _ := decodeMeta(n.Meta) // admit decoded it
	if !m.needsProof(id, addr) {
		return nil
	}
	m.prover.refused.Add(1)
	m.prover.request(id, addr, n.Address())
	return fmt.Errorf("%w: %v at %s", errUnproven, id, addr)
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
