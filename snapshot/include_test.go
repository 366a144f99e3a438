package snapshot_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// nodesOf lists the nodes a snapshot holds.
func nodesOf(s *snapshot.Snapshot) []node.ID {
	var ids []node.ID
	for _, n := range s.Nodes {
		ids = append(ids, n.Node)
	}
	return ids
}

// Include takes peers outside the neighbourhood into the gathers: n1's
// service lists only n2, a layer asks for n3 (a peer its filters are
// about); the change of members starts a gather of its own, and an empty
// set gives the neighbourhood back. Self and node.None are ignored.
func TestIncludeTakesInPeersOutsideTheNeighbourhood(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, GatherConfig: snapshot.GatherConfig{GatherOnChange: true}}
	})
	h.srcs[1].svc.nbrs = []node.ID{2}
	if got := nodesOf(h.gather(1)); !slices.Equal(got, []node.ID{1, 2}) {
		t.Fatalf("neighbourhood snapshot %v, want [n1 n2]", got)
	}
	h.mgrs[1].Include([]node.ID{3, node.None, 1, 3})
	h.apply(h.mgrs[1].AfterStep(h.now))
	if !h.mgrs[1].Gathering() {
		t.Fatal("no gather after Include changed the members")
	}
	h.deliverAll()
	if got := nodesOf(h.snaps[len(h.snaps)-1]); !slices.Equal(got, []node.ID{1, 2, 3}) {
		t.Fatalf("snapshot with n3 included: %v, want [n1 n2 n3]", got)
	}
	h.mgrs[1].Include(nil)
	if got := nodesOf(h.gather(1)); !slices.Equal(got, []node.ID{1, 2}) {
		t.Fatalf("snapshot after Include(nil): %v, want [n1 n2]", got)
	}
}
