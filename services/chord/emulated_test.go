package chord_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// These tests run Chord on the emulator the way `crystalball emulate`
// does: 25 nodes joining through node 1 on the default wide-area topology,
// with hashed placement.

func emulate(t *testing.T, seed uint64, opts chord.Options, churn emulation.ChurnConfig, d time.Duration) (emulation.Result, *emulation.Emulator) {
	t.Helper()
	return servicetest.Emulate(t, emulation.Config{
		Spec:     chord.NewSpec(opts),
		Nodes:    25,
		Seed:     seed,
		Duration: d,
		Workload: func(node.ID, bool) []node.Message {
			return []node.Message{chord.JoinOverlay{Bootstrap: 1}}
		},
		Churn: churn,
	})
}

func requireLive(t *testing.T, seed uint64, r emulation.Result) {
	t.Helper()
	servicetest.RequireLive(t, fmt.Sprintf("seed=%d", seed), r)
}

// requireCorrectRing checks the final ring exactly: every node joined, one
// ring of 25, every successor and predecessor pointer the right one.
func requireCorrectRing(t *testing.T, seed uint64, e *emulation.Emulator) {
	t.Helper()
	want := chord.Summary{Nodes: 25, Joined: 25, Ring: 25, SuccessorsCorrect: 25, PredecessorsCorrect: 25}
	if got := chord.Summarize(e.View()); got != want {
		t.Errorf("seed=%d: final ring %v, want %v", seed, got, want)
	}
}

// Without churn, 25 nodes joining through node 1 form one correct ring,
// with the paper's code as it is and with the corrections (seeds 1-2).
func TestEmulatedRingFormsWithoutChurn(t *testing.T) {
	for _, opts := range []chord.Options{chord.DefaultOptions(), chord.AllFixes()} {
		for seed := uint64(1); seed <= 2; seed++ {
			r, e := emulate(t, seed, opts, emulation.ChurnConfig{}, 3*time.Minute)
			requireLive(t, seed, r)
			requireCorrectRing(t, seed, e)
		}
	}
}

// churn is two leave-and-rejoin events a minute for a quarter of an hour
// (a node down for 30 s on average, half of the leaves silent); churnRun
// leaves three more minutes to heal.
var churn = emulation.ChurnConfig{Rate: 2, After: 30 * time.Second, Until: 15 * time.Minute}

const churnRun = 18 * time.Minute

// Under churn the paper's code violates NodeOrdering (the Figure 11
// pattern: two nodes join next to each other at once, or a restarted
// bootstrap alone on its ring takes a predecessor and then learns nodes
// between it and itself), and after the churn stops the ring heals. The
// counts are exact for these seeds (the emulator is deterministic); what
// is asserted is only what holds across seeds: some violation, and the
// healing. PredSelfImpliesSuccSelf is not asserted: in emulation it needs a
// transport error to overtake a 10 µs loopback message, and it was not
// seen in 20 seeds of 40 minutes of churn; the explorer test finds it.
// Seeds 1-2: seed 1 violates NodeOrdering (87 states), seed 2 heals without
// a violation (seed 3, run before too, did the same as seed 2).
func TestEmulatedChurnWithThePapersCode(t *testing.T) {
	var ordering int64
	for seed := uint64(1); seed <= 2; seed++ {
		r, e := emulate(t, seed, chord.DefaultOptions(), churn, churnRun)
		if r.Churn.Leaves < 20 {
			t.Fatalf("seed=%d: only %d churn leaves in 15 minutes", seed, r.Churn.Leaves)
		}
		n := servicetest.SafetyCount(r, chord.NodeOrdering)
		t.Logf("seed=%d: %d leaves, NodeOrdering violated in %d states, PredSelfImpliesSuccSelf in %d",
			seed, r.Churn.Leaves, n, servicetest.SafetyCount(r, chord.PredSelfImpliesSuccSelf))
		ordering += n
		requireLive(t, seed, r)
		requireCorrectRing(t, seed, e)
	}
	if ordering == 0 {
		t.Errorf("%s never violated under churn with the paper's code (seeds 1-2)", chord.NodeOrdering)
	}
}

// With both corrections the same churn violates no safety property, and
// the ring heals (seeds 1-2, as TestEmulatedChurnWithThePapersCode).
func TestEmulatedChurnWithCorrections(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		r, e := emulate(t, seed, chord.AllFixes(), churn, churnRun)
		for _, s := range r.Safety {
			if s.ViolatedStates != 0 {
				t.Errorf("seed=%d: %s violated in %d states with every correction: %s", seed, s.Name, s.ViolatedStates, s.FirstError)
			}
		}
		requireLive(t, seed, r)
		requireCorrectRing(t, seed, e)
	}
}
