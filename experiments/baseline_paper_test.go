//go:build paper

package experiments

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
)

// TestMaceMCBaselineChordDocumented checks the Chord row of
// docs/RESULTS.md's macemc-baseline table, measured with the default
// cap: BFS from 5 nodes stops at 8,000,000 states at depth 13
// (12 complete), violates NodeOrdering (Figure 11's join race) first at
// depth 12, and does not find the online run's PredSelfImpliesSuccSelf
// (Figure 10): 0 of 1.
func TestMaceMCBaselineChordDocumented(t *testing.T) {
	cfg := BaselineConfig{
		Spec:      chord.NewSpec(chord.DefaultOptions()),
		Workload:  func(node.ID, bool) []node.Message { return []node.Message{chord.JoinOverlay{Bootstrap: 1}} },
		Seed:      DefaultBaselineSeed,
		Faults:    baselineFaults,
		Budget:    time.Hour,
		MaxStates: DefaultBaselineMaxStates,
		Workers:   1,
	}
	online := BaselineOnline{Predictions: []OnlinePrediction{{Property: chord.PredSelfImpliesSuccSelf, FirstPredictedS: 17.9}}}
	out, err := MaceMCBaseline(context.Background(), cfg, online)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out)
	off := out.Offline
	if off.Nodes != 5 || off.Unique != 8_000_000 || off.Stop != "state budget" || off.Depth != 13 || off.DepthComplete != 12 {
		t.Errorf("offline BFS: %+v; want 8,000,000 states, stopped by the state budget at depth 13 (12 complete)", off)
	}
	depth := map[string]int{}
	for _, f := range off.Found {
		depth[f.Property] = f.Depth
	}
	if depth[chord.NodeOrdering] != 12 {
		t.Errorf("BFS violates %v (property: first depth); want NodeOrdering first at depth 12", depth)
	}
	if _, ok := depth[chord.PredSelfImpliesSuccSelf]; ok || len(out.Violations) != 1 || out.Violations[0].FoundProperty {
		t.Errorf("BFS found the online run's PredSelfImpliesSuccSelf: %v, %+v", depth, out.Violations)
	}
}
