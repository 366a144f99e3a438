package experiments

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// RandTreeLiveness on a small tree: with the joining node reset within 50
// ms of its join (before any reply can have landed) MaceMC's bug leaves a
// parent holding it in some run without CrystalBall; with MaceMC's
// correction no run ends with ParentChildAgree failing; the result is a
// pure function of the seed.
func TestRandTreeLiveness(t *testing.T) {
	cfg := RandTreeLivenessConfig{Seed: 3, Runs: 2, Nodes: 8, MaxGap: 50 * time.Millisecond, SnapEvery: 30 * time.Second, Workers: 2}
	res, err := RandTreeLiveness(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bitten == 0 {
		t.Fatalf("seed 3: the bug never bit:\n%v", res)
	}
	for _, r := range res.Runs {
		if r.Bitten && !strings.Contains(r.Final, "ParentChildAgree") {
			t.Errorf("run %d bitten, but the final verdict is %q", r.Run, r.Final)
		}
	}
	// Run r is a pure function of the seed and r: run 0 alone again.
	one := cfg
	one.Runs = 1
	again, err := RandTreeLiveness(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(res.Runs[0])
	b, _ := json.Marshal(again.Runs[0])
	if string(a) != string(b) {
		t.Errorf("run 0 of seed 3 differs when run alone:\n%s\n%s", a, b)
	}
	cfg.Fixes = []string{"join-reply-in-init"}
	if !res.Runs[0].Bitten && !res.Runs[1].Bitten {
		t.Fatal("runs 0 and 1 were not bitten: checking the correction on them would prove nothing")
	}
	cfg.Runs = 2 // the same runs, corrected
	fixed, err := RandTreeLiveness(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fixed.Bitten != 0 || fixed.SteeredBitten != 0 {
		t.Errorf("with the correction:\n%v", fixed)
	}
	if _, err := RandTreeLiveness(context.Background(), RandTreeLivenessConfig{Seed: 1, Fixes: []string{"no-such-fix"}}); err == nil {
		t.Error("an unknown fix was accepted")
	}
}
