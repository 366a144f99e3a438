//go:build paper

package experiments

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// This file is paper-scale (`make paper`, not in CI): randtree-churn at its
// documented size (25 nodes, 84 emulated minutes, one churn event a minute,
// every node gathering and steering every 10 s) spends about 425 s of CPU
// without the race detector for one seed, nearly all of it in the steered
// run (253 M states and walk steps in 12,355 rounds; the runs off and with
// the check alone take 2 and 4 s). The documented table has four seeds; the
// test runs seed 1, the one `crystalball experiment randtree-churn --seed 1`
// documents first. TestRandTreeChurn covers the same behaviour in `make
// test` on 6 nodes for 3 minutes.

// TestRandTreeChurnDocumented checks seed 1 of docs/RESULTS.md's
// randtree-churn figures under experiments.RulesMeasured as the code of
// issue 27's fifth pass gives them (docs/history/results-steering-rules.md,
// "Fifth pass"; its first
// pass gave 941 steered, its second to fourth 951 — 303 and 648 by
// property, 1,312 filters, 834 hits, 268 vetoes, 1.00% changed, join
// 1.14 s — until the fifth pass's resync of a restarted gatherer's lost
// delta bases, the one rule of that pass the measured rules take;
// issue 13's run 945):
// 3,080 inconsistent states off, 1,626 with the immediate check alone and
// 1,158 steered (62% below off: RootHasNoSiblings 389,
// RootNotChildOrSibling 769), with 1,361 filters installed, 867 filter
// hits and 261 vetoes, 1.02% of the actions changed, the join time about
// unchanged by steering (1.13 s steered, 1.05 s off),
// every liveness property holding at the end of every run, and every
// episode of the runs off and steered opened by a transport error (the
// reset root's RST).
//
// Not checked: the number of predictions (4,381), which moves with every
// change of the explorer's budgets.
func TestRandTreeChurnDocumented(t *testing.T) {
	cfg := DefaultChurnConfig()
	cfg.Seed = 1
	if cfg.Nodes != 25 || cfg.Duration.Minutes() != 84 || cfg.ChurnPerMinute != 1 || cfg.Snapshots.Seconds() != 10 || cfg.MaxStates != 2000 || cfg.MaxInterventions != 5 {
		t.Fatalf("the documented configuration changed: %+v", cfg)
	}
	out, err := RandTreeChurn(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out)
	if len(out.Runs) != 3 {
		t.Fatalf("%d runs", len(out.Runs))
	}
	off, imm, steer := out.Runs[0], out.Runs[1], out.Runs[2]
	if off.InconsistentStates != 3080 || imm.InconsistentStates != 1626 || steer.InconsistentStates != 1158 {
		t.Errorf("inconsistent states off / immediate / steered: %d / %d / %d, documented 3,080 / 1,626 / 1,158",
			off.InconsistentStates, imm.InconsistentStates, steer.InconsistentStates)
	}
	if below := 100 * (1 - float64(steer.InconsistentStates)/float64(off.InconsistentStates)); fmt.Sprintf("%.0f", below) != "62" {
		t.Errorf("steered %.1f%% below off, documented 62%%", below)
	}
	if steer.ByProperty[randtree.RootHasNoSiblings] != 389 || steer.ByProperty[randtree.RootNotChildOrSibling] != 769 {
		t.Errorf("steered by property %v, documented RootHasNoSiblings 389, RootNotChildOrSibling 769", steer.ByProperty)
	}
	if steer.FiltersInstalled != 1361 || steer.FilterHits != 867 || steer.Vetoes != 261 {
		t.Errorf("steered: %d filters, %d hits, %d vetoes; documented 1,361, 867, 261", steer.FiltersInstalled, steer.FilterHits, steer.Vetoes)
	}
	if got := fmt.Sprintf("%.2f%%", 100*steer.ChangedShare); got != "1.02%" {
		t.Errorf("steered: %s of the actions changed, documented 1.02%%", got)
	}
	if s, o := fmt.Sprintf("%.2f", steer.JoinMean), fmt.Sprintf("%.2f", off.JoinMean); s != "1.13" || o != "1.05" {
		t.Errorf("join time %s s steered, %s s off; documented 1.13 and 1.05", s, o)
	}
	for _, r := range out.Runs {
		if !r.AllJoined || len(r.NotLive) != 0 {
			t.Errorf("%s: liveness at the end: all joined %v, not live %v; documented: all hold", r.Config, r.AllJoined, r.NotLive)
		}
	}
	for _, r := range []ChurnRun{off, steer} {
		if triggers := slices.Collect(maps.Keys(r.ByTrigger)); len(triggers) != 1 || triggers[0] != "transport-error" {
			t.Errorf("%s: episodes opened by %v, documented: every one by a transport error", r.Config, r.ByTrigger)
		}
	}
}
