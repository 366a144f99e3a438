package pastry

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// These tests run MaceMC's prefix-based search for the Pastry bug with
// the explorer directly: random walks with one reset from a live steady
// state — the four-node overlay of rapid-rejoin.txt, replayed by the
// script itself up to X's reset — find a dead state with the bug and
// nothing with the correction.

// liveModel builds the actor model of the harness's nodes as a gathered
// snapshot would give it, with one reset allowed; every node rejoins
// through n10 after a reset.
func liveModel(t *testing.T, h *nodetest.Harness, opts Options) *consequence.ActorModel {
	t.Helper()
	return servicetest.LiveModel(t, h, NewSpec(opts), consequence.ActorOptions{
		Workload: func(node.ID, bool) []node.Message { return []node.Message{JoinOverlay{Bootstrap: 10}} },
		Faults:   consequence.Faults{Resets: 1},
	})
}

// walkBudget is the liveness search's budget: walks of dmax steps, and k
// walks per probe of the critical-transition search.
type walkBudget struct{ dmax, k int }

var (
	// quickWalks are the quick tests' walks: 400 steps, 8 per probe (the
	// steering rounds' default).
	quickWalks = walkBudget{dmax: 400, k: 8}
)

// walkFromSteadyState runs the liveness search with MaceMC's bias (timers
// and resets rarer than deliveries; a walk counts as live only after 300
// steps, so that the reset has happened), 100 walks within budget.
func walkFromSteadyState(t *testing.T, opts Options, seed uint64, budget walkBudget) *consequence.LivenessResult[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	h := nodetest.ReplayUntil(t, harnessConfig(), "testdata/rapid-rejoin.txt", "reset n30")
	m := liveModel(t, h, opts)
	res, err := consequence.FindLivenessViolation(context.Background(), m, m.Properties(), nil,
		consequence.LivenessOptions[consequence.ActorAction]{Walk: consequence.WalkOptions[consequence.ActorAction]{
			Seed: seed, Walks: 100, DMax: budget.dmax, DInit: 300, K: budget.k,
			Weight: consequence.KindWeights(map[consequence.ActorActionKind]float64{
				consequence.ActTimer: 0.02, consequence.ActReset: 0.05,
			}),
		}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPrefixWalksFindTheRapidRejoinBug: from the formed overlay, the walks
// find a node X that resets and, its restart call coming long before the
// others' three silent probe periods (timers weigh 0.02), rejoins while
// its old entry is still everywhere: the critical transition is the reset
// itself (seed 1: n20's, step 1) — from the state before it every walk
// converges, from the state after it none does — and after it X's Joins
// are routed back to X and dropped.
//
// The quick test walks 400 steps (100 past the warm-up) with 8 walks per
// probe; the dead probes, every one a full walk, are nearly all its cost.
// With seed 1 it finds the same suspect and critical step as with
// MaceMC-sized walks (1,000 steps, 20 per probe:
// TestPrefixWalksFindTheRapidRejoinBugMaceMCWalks in explore_long_test.go)
// and with the 600 steps and 10 per probe it took before, and so do seeds
// 2 and 3 (n40's reset, step 1, at all three sizes).
func TestPrefixWalksFindTheRapidRejoinBug(t *testing.T) {
	checkPrefixWalksFindTheRapidRejoinBug(t, quickWalks)
}

func checkPrefixWalksFindTheRapidRejoinBug(t *testing.T, budget walkBudget) {
	t.Helper()
	const seed = 1
	res := walkFromSteadyState(t, byID(), seed, budget)
	if res.Suspect == nil || res.Critical == nil || res.Critical.Verdict != consequence.C1 {
		t.Fatalf("seed=%d: no C1 suspect in %d walks (%d live)", seed, res.Walks, res.Live)
	}
	var path []string
	for _, a := range res.Suspect.Path {
		path = append(path, a.Act.String())
	}
	crit := res.Critical.Step
	t.Logf("seed=%d: %d walks, critical step %d: %v", seed, res.Walks, crit+1, res.Critical.Action.Act)
	t.Logf("path to it: %s", strings.Join(path[:crit+1], ", "))
	// The reset comes at or before the critical step, and the reset node
	// never joins again: its Joins are routed back to it.
	var x node.ID
	for _, a := range res.Suspect.Path[:crit+1] {
		if a.Act.Kind == consequence.ActReset {
			x = a.Act.Node
		}
	}
	if x == node.None {
		t.Fatalf("no reset up to the critical step: %q", path[:crit+1])
	}
	if a := res.Critical.Action.Act; a.Kind != consequence.ActReset || a.Node != x {
		t.Errorf("critical step %v, want %v's reset", a, x)
	}
	back := fmt.Sprintf("%v deliver-datagram pastry.Join from", x)
	routedBack := false
	for _, step := range path[crit+1:] {
		if strings.HasPrefix(step, back) {
			routedBack = true
		}
		if strings.HasPrefix(step, fmt.Sprintf("%v deliver-datagram pastry.JoinReply", x)) {
			t.Fatalf("%v joined after the critical step: %s", x, step)
		}
	}
	if !routedBack {
		t.Errorf("%v's Join was never routed back to it after the critical step", x)
	}
}

// TestPrefixWalksFindNothingWithTheCorrection: the same walks with the
// correction all converge (explore_long_test.go repeats it with
// MaceMC-sized walks).
func TestPrefixWalksFindNothingWithTheCorrection(t *testing.T) {
	checkPrefixWalksFindNothingWithTheCorrection(t, quickWalks)
}

func checkPrefixWalksFindNothingWithTheCorrection(t *testing.T, budget walkBudget) {
	t.Helper()
	const seed = 1
	res := walkFromSteadyState(t, byID().Fixed(), seed, budget)
	if res.Suspect != nil {
		t.Fatalf("seed=%d: suspect with the correction: %v", seed, res.Critical)
	}
	if res.Walks != 100 || res.Live != 100 {
		t.Fatalf("seed=%d: %d walks, %d live", seed, res.Walks, res.Live)
	}
}
