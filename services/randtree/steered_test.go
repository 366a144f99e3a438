package randtree_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// steered runs the paper's code under churn with every node checkpointing
// every 10 s and, unless mode is Off and immediate false, a steering
// controller beside every node.
func steered(t *testing.T, seed uint64, mode steering.Mode, immediate bool) emulation.Result {
	t.Helper()
	cfg := emulation.Config{
		Spec:     randtree.NewSpec(randtree.DefaultOptions()),
		Nodes:    25,
		Seed:     seed,
		Duration: 20 * time.Minute,
		Workload: func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
		Churn:     emulation.ChurnConfig{Rate: 1, After: 30 * time.Second, Until: 15 * time.Minute},
		Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: 10 * time.Second, GatherInterval: 10 * time.Second}},
	}
	if mode != steering.Off || immediate {
		cfg.Steering = &emulation.SteeringConfig{
			// The walks (liveness) are off: this test is about safety
			// steering, and 25 nodes walking every 10 s would take minutes.
			Controller: steering.Config{Mode: mode, Faults: consequence.Faults{Resets: 1, SilentResets: true}, MaxStates: 500, Walks: -1},
			Immediate:  immediate,
		}
	}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	return r
}

func inconsistent(r emulation.Result) int64 {
	var n int64
	for _, s := range r.Safety {
		n += s.ViolatedStates
	}
	return n
}

// TestSteeredChurnStaysLive: steering must not trade safety for liveness.
// Under churn, with the immediate safety check alone and with steering and
// the check, every liveness property holds at the end of the heal phase —
// which, on RandTree, takes the intervention budget: the correction a
// disowned child needs passes through a state the check rejects (seed 3
// leaves three orphans behind without the budget) — and steering really
// predicts, installs filters and vetoes.
func TestSteeredChurnStaysLive(t *testing.T) {
	const seed = 3
	off := steered(t, seed, steering.Off, false)
	imm := steered(t, seed, steering.Off, true)
	steer := steered(t, seed, steering.Steer, true)
	t.Logf("seed=%d inconsistent states: off %d, immediate %d, steer+immediate %d; steering %+v",
		seed, inconsistent(off), inconsistent(imm), inconsistent(steer), *steer.Steering)
	if s := steer.Steering; s.Rounds == 0 || len(s.Predicted) == 0 || s.FiltersInstalled == 0 || s.Vetoes == 0 {
		t.Errorf("seed=%d: steering did nothing: %+v", seed, *s)
	}
	if s := imm.Steering; s.Rounds != 0 || s.Vetoes == 0 {
		t.Errorf("seed=%d: immediate check only: %+v", seed, *s)
	}
	requireLive(t, seed, off)
	requireLive(t, seed, imm)
	requireLive(t, seed, steer)
}
