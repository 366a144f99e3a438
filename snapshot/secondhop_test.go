package snapshot_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// SecondHop widens the gathers to the neighbours' neighbours: n1 lists
// only n2 and n4, and n2 and n4 have exchanged messages with n3 and n5
// (n3 twice as often named: by both), n5 by n4 alone. With SecondHop 1
// the snapshot after the first takes in n3 only (the most often named);
// with 2, n3 and n5, but not n6, which only n3 talks to (the second
// hop's own peers are not followed). Without it, n1's snapshots stay
// one hop wide.
func TestSecondHopTakesInTheNeighboursNeighbours(t *testing.T) {
	for _, tc := range []struct {
		hop  int
		want []node.ID
	}{{0, []node.ID{1, 2, 4}}, {1, []node.ID{1, 2, 3, 4}}, {2, []node.ID{1, 2, 3, 4, 5}}} {
		h := newHarness(t, []node.ID{1, 2, 3, 4, 5, 6}, func(node.ID) snapshot.Config {
			return snapshot.Config{Interval: time.Second, GatherConfig: snapshot.GatherConfig{GatherOnChange: true, SecondHop: tc.hop}}
		})
		h.srcs[1].svc.nbrs = []node.ID{2, 4}
		h.send(2, 3, 1)
		h.send(4, 3, 1)
		h.send(4, 5, 1)
		h.send(3, 6, 1)
		h.deliverAll()
		if got := nodesOf(h.gather(1)); !slices.Equal(got, []node.ID{1, 2, 4}) {
			t.Fatalf("SecondHop %d: first snapshot %v, want [n1 n2 n4]", tc.hop, got)
		}
		h.apply(h.mgrs[1].AfterStep(h.now))
		if tc.hop == 0 {
			if h.mgrs[1].Gathering() {
				t.Fatal("SecondHop 0: a gather started without a change of the neighbourhood")
			}
			continue
		}
		if !h.mgrs[1].Gathering() {
			t.Fatalf("SecondHop %d: the second hop started no gather", tc.hop)
		}
		h.deliverAll()
		if got := nodesOf(h.snaps[len(h.snaps)-1]); !slices.Equal(got, tc.want) {
			t.Fatalf("SecondHop %d: snapshot %v, want %v", tc.hop, got, tc.want)
		}
		// The next snapshot keeps the hop: n3's peer n6 is not followed.
		if got := nodesOf(h.gather(1)); !slices.Equal(got, tc.want) {
			t.Fatalf("SecondHop %d: third snapshot %v, want %v", tc.hop, got, tc.want)
		}
	}
}

// A negative SecondHop is a configuration error.
func TestSecondHopNegative(t *testing.T) {
	reg, err := node.NewRegistry(ping{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.New(snapshot.Config{Registry: reg, GatherConfig: snapshot.GatherConfig{SecondHop: -1}}, 1, &fakeSrc{}); err == nil {
		t.Fatal("no error for SecondHop -1")
	}
}
