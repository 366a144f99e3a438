package consequence_test

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// TestStateBudgetLevelRunsInParallel checks that the level where a state
// budget runs out is expanded in parallel rounds, shrinking as the room
// does, with only its last few hundred states left to one core — and with
// the results of a sequential search. The whole of that level used to run
// on one core: with a 1 M-state budget it is often the largest level, a
// quarter of the search's expansions (Chord and RandTree, 5 nodes), and a
// second worker gave 1.2× instead of 1.5×.
func TestStateBudgetLevelRunsInParallel(t *testing.T) {
	g := &graph{seed: 11, size: 400000, nodes: 4, fanout: 6}
	o := consequence.Options{MaxStates: 150000, Workers: 2, MaxViolations: 1 << 20}
	want := reference[uint64, gAct](g, graphProps(), o)
	direct, calls := 0, 0
	c := consequence.NewChecker(g).Properties(graphProps()...).WithOptions(o)
	consequence.SetOnDirect(c, func(n int) { direct += n; calls++ })
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	compare(t, want, res)
	if res.Stop != consequence.StopStateBudget {
		t.Fatalf("stopped by %v, want the state budget", res.Stop)
	}
	// The levels below the parallel threshold (512 states) are expanded
	// directly: 273 states here. The budget's level leaves a few hundred
	// more once its room is too small for a parallel round; before rounds
	// shrank with the room it was 39,306 (the whole level up to the cut).
	if direct > 2048 {
		t.Errorf("levels %v: %d frontier states expanded on one core in %d stretches, want at most 2,048", res.DepthCounts, direct, calls)
	}
}
