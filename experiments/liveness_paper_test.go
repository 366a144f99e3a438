//go:build paper

package experiments

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// This file is paper-scale (`make paper`, not in CI): randtree-liveness at
// its documented size (25 nodes, gaps in [0, 600 ms), a snapshot and round
// every 10 s per node, the default steering budgets) costs about 40 s of CPU
// per run without the race detector (measured: 819 s for runs 0-9 of seed 1,
// with and without the correction), nearly all of it in the debug and
// steered emulations: the documented 100 runs, twice, would take over two
// hours of CPU. The runs without CrystalBall cost about 10 ms each, so all
// 100 are emulated here, with and without the correction, and the whole
// experiment (all three ways) on its first runs only: 3 of the paper's code
// (all three bitten) and 1 with the correction. The test takes 159 s of CPU.
// TestRandTreeLiveness covers the same behaviour in `make test` on 5 nodes
// with smaller rounds.

// livenessOffOnly emulates run r of the experiment without CrystalBall
// alone: the victim and gap drawn as livenessRun draws them.
// TestRandTreeLivenessDocumented checks it against RandTreeLiveness on
// the runs both emulate.
func livenessOffOnly(ctx context.Context, cfg RandTreeLivenessConfig, opts randtree.Options, r int) (RandTreeLivenessRun, error) {
	rs := PaxosRunSeed(cfg.Seed, r)
	rng := rand.New(rand.NewPCG(rs, paxosGapStream))
	run := RandTreeLivenessRun{Run: r, Seed: rs, Victim: node.ID(2 + rng.IntN(cfg.Nodes-1))}
	gap := time.Duration(rng.Float64() * float64(cfg.MaxGap))
	run.GapS = gap.Seconds()
	off, err := livenessScenario(ctx, cfg, opts, rs, run.Victim, gap, steering.Off)
	run.Bitten, run.Parent, run.Final = off.bitten, off.parent, off.final
	return run, err
}

// TestRandTreeLivenessDocumented checks docs/RESULTS.md's randtree-liveness
// table (`crystalball experiment randtree-liveness --seed 1`, with and
// without `--fix join-reply-in-init`): of the 100 runs of seed 1, 35 end
// with ParentChildAgree failing without CrystalBall (29 reset before A
// accepted the join, 6 with A's reply in flight), none with the
// correction; on the runs emulated all three ways, no dead end is
// predicted online (in time or not), and steering avoids none of the
// bitten runs (every one fails steered too), while with the correction no
// run fails, steered or not.
func TestRandTreeLivenessDocumented(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		fixes              []string
		bitten, withParent int
		runs               int // emulated all three ways
	}{
		{nil, 35, 6, 3},
		{[]string{"join-reply-in-init"}, 0, 0, 1},
	} {
		cfg, err := RandTreeLivenessConfig{Seed: 1, Fixes: c.fixes}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Runs != 100 || cfg.Nodes != 25 || cfg.MaxGap != 600*time.Millisecond || cfg.SnapEvery != 10*time.Second {
			t.Fatalf("the documented configuration changed: %+v", cfg)
		}
		opts := randtree.DefaultOptions()
		for _, f := range c.fixes {
			if err := opts.EnableFix(f); err != nil {
				t.Fatal(err)
			}
		}
		off := make([]RandTreeLivenessRun, cfg.Runs)
		bitten, withParent := 0, 0
		for r := range off {
			if off[r], err = livenessOffOnly(ctx, cfg, opts, r); err != nil {
				t.Fatal(err)
			}
			if off[r].Bitten {
				bitten++
				if off[r].Parent != node.None {
					withParent++
				}
			}
		}
		if bitten != c.bitten || withParent != c.withParent {
			t.Errorf("fixes %v, seed 1: %d of 100 runs bitten without CrystalBall, %d with A's reply in flight; want %d and %d",
				c.fixes, bitten, withParent, c.bitten, c.withParent)
		}

		cfg.Runs = c.runs
		res, err := RandTreeLiveness(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("fixes %v, first %d runs:\n%s", c.fixes, cfg.Runs, res)
		for r, run := range res.Runs {
			o := off[r]
			if run.Seed != o.Seed || run.Victim != o.Victim || run.GapS != o.GapS || run.Bitten != o.Bitten || run.Parent != o.Parent || run.Final != o.Final {
				a, _ := json.Marshal(run)
				b, _ := json.Marshal(o)
				t.Fatalf("run %d differs from its emulation without CrystalBall alone:\n%s\n%s", r, a, b)
			}
		}
		if c.fixes == nil && res.Bitten == 0 {
			t.Fatalf("none of the first %d runs bitten: the steered runs would show nothing", cfg.Runs)
		}
		if res.DebugPredictions != 0 || res.Predicted != 0 {
			t.Errorf("fixes %v: dead ends predicted online in %d runs, %d in time; the documented run predicted none", c.fixes, res.DebugPredictions, res.Predicted)
		}
		if res.SteeredBitten != res.Bitten || res.Avoided != 0 {
			t.Errorf("fixes %v: %d bitten, %d steered runs failing, %d avoided; documented: steering avoids none", c.fixes, res.Bitten, res.SteeredBitten, res.Avoided)
		}
	}
}
