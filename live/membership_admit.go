package live

import (
	"errors"
	"fmt"
	"net"
	"slices"

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
	unproven, err := m.unproven(peers)
	if err != nil {
		return err
	}
	if len(unproven) > maxPendingProofs {
		return fmt.Errorf("%w: a push/pull state with %d members to prove", errNotAMember, len(unproven))
	}
	if len(unproven) > 0 {
		m.prover.proveAll(unproven)
	}
	return nil
}

// unproven admits every member of a push/pull state (admit; the first
// that is not ours refuses the state) and returns those alive that must
// still prove themselves, id → service address.
func (m *membership) unproven(peers []*memberlist.Node) (map[node.ID]string, error) {
	unproven := map[node.ID]string{}
	for _, n := range peers {
		if err := admit(n); err != nil {
			return nil, err
		}
		id, addr, _ := decodeMeta(n.Meta)
		if n.State == memberlist.StateAlive && m.needsProof(id, addr) {
			unproven[id] = addr
		}
	}
	return unproven, nil
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
	if !slices.Contains(ipLens, len(n.Addr)) || n.Port == 0 {
		return fmt.Errorf("%w: %v has no address", errNotAMember, id)
	}
	return checkVersions(n, id)
}

// ipLens are the lengths of an IPv4 and an IPv6 address.
var ipLens = []int{net.IPv4len, net.IPv6len}

// checkVersions checks member id's protocol versions (a range min ≤ cur
// ≤ max, none of them 0, that meets memberlist's) and delegate versions
// (a range).
func checkVersions(n *memberlist.Node, id node.ID) error {
	if n.PMin == 0 || !inOrder(n.PMin, n.PCur, n.PMax) || n.PMin > memberlist.ProtocolVersionMax || n.PMax < memberlist.ProtocolVersionMin {
		return fmt.Errorf("%w: %v speaks protocol versions %d ≤ %d ≤ %d", errNotAMember, id, n.PMin, n.PCur, n.PMax)
	}
	if !inOrder(n.DMin, n.DCur, n.DMax) {
		return fmt.Errorf("%w: %v speaks delegate versions %d ≤ %d ≤ %d", errNotAMember, id, n.DMin, n.DCur, n.DMax)
	}
	return nil
}

// inOrder reports whether lo ≤ cur ≤ hi.
func inOrder(lo, cur, hi uint8) bool { return lo <= cur && cur <= hi }

// quoteName bounds a member name in an error: it comes off the network.
func quoteName(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
