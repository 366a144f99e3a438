//go:build paper

package experiments

import (
	"context"
	"testing"
	"time"
)

// This file is paper-scale (`make paper`, not in CI): paxos at its
// documented size (`crystalball experiment paxos --bug N --runs 100 --seed
// 1`, every setting its default: 10,000 states per search, a snapshot every
// 2 s, gaps in [0, 60 s)) spends about 157 s (bug1) and 148 s (bug2) of CPU
// without the race detector (331 s for TestPaxosDocumented), most of it in
// the steered runs' searches. TestPaxosCounts and
// TestPaxosSteeringAvoidsTheViolation cover the same behaviour in `make
// test`, on 3 short runs and on one run with smaller searches.

// TestPaxosDocumented checks docs/RESULTS.md's Paxos figures as they
// stand after issue 13 (docs/history/results-steering-rules.md, "Steering
// that acts", re-measured on the final main): for each bug, of the 100
// runs of seed 1, the script leads every
// run to the violation without CrystalBall (and none leaves it), steering
// avoids it in 97 and 2 are violated; with the check alone 2 violate
// OneValueLearned, yet OneValueChosen is violated in all 100 (as without
// CrystalBall) and in 3 with steering; AllLearned holds at the end of 99
// steered runs and of every run without CrystalBall. The violated runs
// are among the shortest gaps: round 2 starts before C has gathered a
// snapshot holding A's state (the paper's "incompleteness of the set of
// checkpoints"), so their gaps are shorter than the snapshot interval.
//
// Not checked, as they have drifted since they were documented:
// AllLearned with the check alone (63 and 6 in the first table; now 59
// and 2) and the steering totals (rounds, states, filters).
func TestPaxosDocumented(t *testing.T) {
	for _, bug := range []string{"bug1", "bug2"} {
		cfg := PaxosConfig{Bug: bug, Seed: 1}
		if d := cfg.withDefaults(); d.Runs != 100 || d.MaxStates != 10_000 || d.Snapshots != 2*time.Second || d.MaxGap != time.Minute || d.Resets != 1 {
			t.Fatalf("the documented configuration changed: %+v", d)
		}
		out, err := Paxos(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", bug, err)
		}
		t.Logf("\n%s", out)
		if out.ViolatedWithoutCrystalBall != 100 || out.ScenarioDeviations != 0 || out.NoIntervention != 0 {
			t.Errorf("%s: %d of 100 runs violate without CrystalBall, %d left the script, %d safe without intervention; want 100, 0, 0",
				bug, out.ViolatedWithoutCrystalBall, out.ScenarioDeviations, out.NoIntervention)
		}
		if out.AvoidedBySteering != 97 || out.Violated != 2 {
			t.Errorf("%s: avoided by steering %d, by the immediate check %d, violated %d; documented: 97%% by steering, 2%% violated",
				bug, out.AvoidedBySteering, out.AvoidedByImmediateCheck, out.Violated)
		}
		if out.ViolatedImmediateOnly != 2 {
			t.Errorf("%s: %d runs violated with the check alone, documented 2%%", bug, out.ViolatedImmediateOnly)
		}
		if out.ChosenViolated != 3 || out.ChosenViolatedImmediateOnly != 100 || out.ChosenViolatedWithoutCrystalBall != 100 {
			t.Errorf("%s: OneValueChosen violated %d / %d / %d (with / check alone / without), documented 3 / 100 / 100",
				bug, out.ChosenViolated, out.ChosenViolatedImmediateOnly, out.ChosenViolatedWithoutCrystalBall)
		}
		if out.LiveWithCrystalBall != 99 || out.LiveWithoutCrystalBall != 100 {
			t.Errorf("%s: AllLearned at the end in %d steered runs and %d without CrystalBall, documented 99 and 100",
				bug, out.LiveWithCrystalBall, out.LiveWithoutCrystalBall)
		}
		for _, r := range out.PerRun {
			if r.Outcome == OutcomeViolated && r.GapS >= 2 {
				t.Errorf("%s: run %d violated with a gap of %.2f s, longer than the 2 s between snapshots", bug, r.Run, r.GapS)
			}
		}
	}
}
