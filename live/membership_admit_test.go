package live

import (
	"errors"
	"net"
	"testing"

	"github.com/hashicorp/memberlist"
)

// Only members that are ours are admitted: garbage gossip (the soak's
// attack) that decodes into a member without our metadata, with a name
// that is not its node's, without an address or with nonsense protocol
// versions is refused, and a push/pull merge carrying one is refused
// whole.
func TestMembershipAdmitsOnlyOurMembers(t *testing.T) {
	good := func() *memberlist.Node {
		return &memberlist.Node{Name: "n7", Addr: net.IPv4(127, 0, 0, 1).To4(), Port: 17007, Meta: encodeMeta(7, "127.0.0.1:7007"),
			PMin: memberlist.ProtocolVersionMin, PCur: 2, PMax: memberlist.ProtocolVersionMax}
	}
	m := &membership{}
	if err := m.NotifyAlive(good()); err != nil {
		t.Fatalf("a good member refused: %v", err)
	}
	for name, spoil := range map[string]func(*memberlist.Node){
		"no metadata":        func(n *memberlist.Node) { n.Meta = nil },
		"garbage metadata":   func(n *memberlist.Node) { n.Meta = []byte{0xde, 0xad} },
		"another node's":     func(n *memberlist.Node) { n.Name = "n8" },
		"no address":         func(n *memberlist.Node) { n.Addr = nil },
		"no port":            func(n *memberlist.Node) { n.Port = 0 },
		"protocol max 0":     func(n *memberlist.Node) { n.PMax = 0 },
		"protocol min 0":     func(n *memberlist.Node) { n.PMin = 0 },
		"protocol cur > max": func(n *memberlist.Node) { n.PCur = n.PMax + 1 },
		"delegate min > max": func(n *memberlist.Node) { n.DMin, n.DMax = 2, 1 },
	} {
		n := good()
		spoil(n)
		if err := m.NotifyAlive(n); !errors.Is(err, errNotAMember) {
			t.Errorf("%s: admitted (%v)", name, err)
		}
		if err := m.NotifyMerge([]*memberlist.Node{good(), n}); !errors.Is(err, errNotAMember) {
			t.Errorf("%s: merge admitted (%v)", name, err)
		}
	}
	if err := m.NotifyMerge([]*memberlist.Node{good(), good()}); err != nil {
		t.Errorf("a good merge refused: %v", err)
	}
}
