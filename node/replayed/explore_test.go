package replayed_test

import (
	"context"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// search runs BFS over spec with two nodes, one reset and one break
// allowed along a path, to depth 6: 4,581 states, whose level 5 (1,073
// states) is past the engine's threshold for parallel expansion, and the
// violation at depth 4 (depth 7 kept 12,293 states at three times the cost).
func search(t *testing.T, spec node.Spec, workers int) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Seed: 3, Workload: bankWorkload(2),
		Faults: consequence.Faults{Resets: 1, Breaks: 1}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).Strategy(consequence.BFS).
		Workers(workers).MaxDepth(6).MaxStates(200_000).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestExplorerSeesTheHandWrittenStates: BFS over the adapted bank visits
// as many states per depth as over the hand-written one and finds the
// same violations at the same depths, with one worker and with four
// (clones taken concurrently), and with images rebasing the logs.
func TestExplorerSeesTheHandWrittenStates(t *testing.T) {
	hand := search(t, handSpec(), 1)
	if hand.Unique < 500 || len(hand.Violations) == 0 {
		t.Fatalf("the hand-written search is too small to compare: %d states, %d violations", hand.Unique, len(hand.Violations))
	}
	for _, c := range []struct {
		workers int
		images  bool
	}{{1, false}, {4, false}, {2, true}} {
		workers := c.workers
		ad := bankAdapter(false, c.images)
		got := search(t, adaptedSpec(ad), workers)
		if got.Unique != hand.Unique || !slices.Equal(got.DepthCounts, hand.DepthCounts) {
			t.Errorf("%d workers: adapted %d states %v, hand-written %d %v", workers, got.Unique, got.DepthCounts, hand.Unique, hand.DepthCounts)
		}
		if len(got.Violations) != len(hand.Violations) || got.Violations[0].Depth != hand.Violations[0].Depth {
			t.Errorf("%d workers: %d violations (first at depth %d), hand-written %d (depth %d)", workers,
				len(got.Violations), got.Violations[0].Depth, len(hand.Violations), hand.Violations[0].Depth)
		}
		st := ad.Stats()
		if st.Takes == 0 || st.Replays == 0 {
			t.Errorf("%d workers: %+v: a search both takes parents' objects and replays", workers, st)
		}
		t.Logf("%d workers: %d states, %+v (%.1f inputs per replay)", workers, got.Unique, st, float64(st.ReplayedInputs)/float64(st.Replays))
	}
}
