package consequence

import (
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// TestPositions: the dense table of node positions answers as the binary
// search over the sorted IDs does, for IDs present and absent; IDs too
// sparse for a table get none (and index falls back to the search).
func TestPositions(t *testing.T) {
	for _, ids := range [][]node.ID{{1, 2, 3}, {2, 5, 9, 40}, {7}, {1, 1000}, {3, 1 << 20}} {
		pos := positions(ids)
		m := &ActorModel{ids: ids, pos: pos}
		dense := pos != nil
		if want := ids[len(ids)-1] < posTableSpread*node.ID(len(ids)) && ids[len(ids)-1] < posTableMax; dense != want {
			t.Errorf("%v: table %v, want %v", ids, dense, want)
		}
		for id := node.ID(0); id <= ids[len(ids)-1]+2 && id < 2000; id++ {
			gotI, gotOK := m.index(id)
			wantI, wantOK := slices.BinarySearch(ids, id)
			if gotOK != wantOK || (gotOK && gotI != wantI) {
				t.Fatalf("%v: index(%v) = %d, %v; binary search %d, %v", ids, id, gotI, gotOK, wantI, wantOK)
			}
		}
	}
}
