//go:build long

package experiments

import (
	"context"
	"slices"
	"testing"
)

// This file is long: randtree-prediction at its documented size
// (docs/RESULTS.md, "Consequence prediction vs exhaustive search on
// RandTree": 2,000,000 unique states per search) spends about 12 s of CPU
// without the race detector (18 s of wall time on a loaded machine), most
// of it in BFS from the initial 5-node state. TestRandTreePrediction
// covers the same comparison in `make test` with 3,000 states per search.
//
// The documented run also has a 30 s wall-time budget per search; here
// there is none (Budget -1), so the result depends on states alone: BFS
// stops by its state budget after about 17 s on the 2-vCPU machine.

// TestRandTreePredictionDocumented runs `crystalball experiment
// randtree-prediction` at its documented state budget and checks what
// docs/RESULTS.md claims of it: consequence prediction from Figure 2's
// live state finds ChildrenSiblingsDisjoint at depth 5 on the paper's path,
// and with fewer states than BFS from the same live state, which finds it
// too (463 states, pinned since the fingerprint took the node clocks
// in); BFS from the initial 5-node state does not find it within
// 2,000,000 states (the violation lies at depth 18 from there), each of
// its levels costing 2-4.5x the last (the shape of the paper's Fig. 12,
// counted here in states, which do not depend on the machine); and
// consequence prediction from the initial state exhausts its pruned space
// (128 states, pinned) without finding it.
//
// Figures of the section's table that have drifted since it was measured
// (it predates issues 12 and 17): consequence prediction from the live
// state now explores 109 states (the table: 48), BFS from it 463 (809),
// BFS from the initial state reaches depth 11, partially, within
// 2,000,000 states (12), consequence prediction from the initial state
// 128 (112). The test checks the claims, not those counts.
func TestRandTreePredictionDocumented(t *testing.T) {
	out, err := RandTreePrediction(context.Background(), PredictionConfig{Budget: -1, MaxStates: DefaultPredictionMaxStates})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out)
	paperPath := []string{
		"n13 reset silent",
		"n13 app randtree.JoinOverlay",
		"n9 deliver randtree.Join from n13",
		"n1 deliver randtree.Join from n9",
		"n9 deliver randtree.UpdateSibling from n1",
	}
	p := out.Prediction
	if !p.Found || p.Depth != 5 || !slices.Equal(p.Path, paperPath) || p.Violation != "n9: n13 is both a child and a sibling" {
		t.Errorf("consequence prediction from the live state: %+v, want the paper's path at depth 5", p)
	}
	b := out.LiveBFS
	if !b.Found || b.Depth != 5 || b.Unique != 463 {
		t.Errorf("bfs from the live state: %+v, want the violation at depth 5 after 463 states", b)
	}
	if p.Unique >= b.Unique {
		t.Errorf("consequence prediction needed %d states, bfs from the same state %d: pruning saved nothing", p.Unique, b.Unique)
	}
	e := out.Exhaustive
	if e.Found || e.Stop != "state budget" || e.Unique != DefaultPredictionMaxStates || e.Depth < 10 || e.Depth >= 18 {
		t.Errorf("bfs from the initial state: %+v, want no violation, stopped by the 2,000,000-state budget short of depth 18", e)
	}
	levels := out.DepthTable["bfs"]
	for i := 1; i < len(levels)-1; i++ { // the last level is partial
		prev, cur := levels[i-1], levels[i]
		if cur.Depth < 6 {
			continue
		}
		if grow := float64(cur.Unique) / float64(prev.Unique); grow < 2 || grow > 4.5 {
			t.Errorf("bfs level %d holds %d states, %.2fx level %d's %d; want 2-4.5x", cur.Depth, cur.Unique, grow, prev.Depth, prev.Unique)
		}
	}
	if c := out.InitialPrediction; c.Found || c.Stop != "completed" || c.Unique != 128 {
		t.Errorf("consequence prediction from the initial state: %+v, want its pruned space exhausted (128 states) without a violation", c)
	}
}
