package randtree_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// These tests run RandTree on the emulator the way `crystalball emulate`
// does: 25 nodes joining through node 1 on the default wide-area topology.

func emulate(t *testing.T, seed uint64, opts randtree.Options, churn emulation.ChurnConfig, d time.Duration) (emulation.Result, *emulation.Emulator) {
	t.Helper()
	return servicetest.Emulate(t, emulation.Config{
		Spec:     randtree.NewSpec(opts),
		Nodes:    25,
		Seed:     seed,
		Duration: d,
		Workload: func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
		Churn: churn,
	})
}

// The churn of TestEmulatedChurnShowsThePapersInconsistencies and
// TestEmulatedChurnWithCorrections: one leave or join a second from 30 s to
// 40 minutes, then 5 minutes to heal.
var (
	churn40      = emulation.ChurnConfig{Rate: 1, After: 30 * time.Second, Until: 40 * time.Minute}
	churn40Heal  = 45 * time.Minute
	papersMu     sync.Mutex
	papersChurns = map[uint64]emulation.Result{}
)

// papersChurn is the paper's code's run under churn40 with seed. Both
// churn tests use the same runs, and a run is a pure function of its seed:
// each is emulated once per test binary, not once per test.
func papersChurn(t *testing.T, seed uint64) emulation.Result {
	t.Helper()
	papersMu.Lock()
	defer papersMu.Unlock()
	if r, ok := papersChurns[seed]; ok {
		return r
	}
	r, _ := emulate(t, seed, randtree.DefaultOptions(), churn40, churn40Heal)
	papersChurns[seed] = r
	return r
}

func requireLive(t *testing.T, seed uint64, r emulation.Result) {
	t.Helper()
	servicetest.RequireLive(t, fmt.Sprintf("seed=%d", seed), r)
}

// Without churn, 25 nodes form one tree, with the paper's code as it is.
func TestEmulatedTreeConvergesWithoutChurn(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		r, e := emulate(t, seed, randtree.DefaultOptions(), emulation.ChurnConfig{}, 5*time.Minute)
		requireLive(t, seed, r)
		sum := randtree.Summarize(e.View())
		if sum.Joined != 25 || sum.Roots != 1 || sum.Root != 1 || sum.TreeSize != 25 {
			t.Errorf("seed=%d: final tree %v, want all 25 nodes in one tree rooted at n1", seed, sum)
		}
		for _, s := range r.Safety {
			if s.ViolatedStates != 0 {
				t.Errorf("seed=%d: %s violated in %d states without churn: %s", seed, s.Name, s.ViolatedStates, s.FirstError)
			}
		}
	}
}

// churnSeeds are the seeds of the two churn tests: 1 and 2. Each run costs
// about 1.2 s of CPU under the race detector; seed 1 alone violates all three
// properties below (3,453 / 1,617 / 1,180 states), seed 2 adds a run whose
// inconsistencies are nearly all of bug 1 (37,242 states) and none of bug 3.
// Seed 3, which the tests also ran before, violates the same properties and the corrections reduce its count too (8,524 to 22); it adds no case the two miss.
const churnSeeds = 2

// Under churn the paper's code reaches inconsistent states, and after the
// churn stops the tree heals (liveness holds at the end). Seeds 1-2.
func TestEmulatedChurnShowsThePapersInconsistencies(t *testing.T) {
	var total map[string]int64 = map[string]int64{}
	for seed := uint64(1); seed <= churnSeeds; seed++ {
		r := papersChurn(t, seed)
		if r.Churn.Leaves < 20 {
			t.Fatalf("seed=%d: only %d churn leaves in 40 minutes", seed, r.Churn.Leaves)
		}
		for _, s := range r.Safety {
			total[s.Name] += s.ViolatedStates
		}
		requireLive(t, seed, r)
	}
	// Bugs 1 and 2 (and 3) need resets; churn provides them. Bug 4 needs a
	// node more eligible than a self-joined root, which a run bootstrapped
	// through n1 (the smallest ID) cannot produce: its scenario test covers
	// it.
	for _, name := range []string{randtree.ChildrenSiblingsDisjoint, randtree.RootNotChildOrSibling, randtree.RootHasNoSiblings} {
		if total[name] == 0 {
			t.Errorf("%s never violated under churn with the paper's code (seeds 1-%d): %v", name, churnSeeds, total)
		}
	}
}

// With every correction applied the same churn leaves fewer inconsistent
// states — none of bugs 1 and 3 — and the tree still heals. Seeds 1-2, the
// paper's runs shared with TestEmulatedChurnShowsThePapersInconsistencies.
func TestEmulatedChurnWithCorrections(t *testing.T) {
	for seed := uint64(1); seed <= churnSeeds; seed++ {
		buggy := papersChurn(t, seed)
		fixed, _ := emulate(t, seed, randtree.AllFixes(), churn40, churn40Heal)
		requireLive(t, seed, fixed)
		for _, name := range []string{randtree.ChildrenSiblingsDisjoint, randtree.RootHasNoSiblings} {
			if n := servicetest.SafetyCount(fixed, name); n != 0 {
				t.Errorf("seed=%d: %s violated in %d states with every correction", seed, name, n)
			}
		}
		var b, f int64
		for i := range buggy.Safety {
			b += buggy.Safety[i].ViolatedStates
			f += fixed.Safety[i].ViolatedStates
		}
		if f >= b {
			t.Errorf("seed=%d: corrections did not reduce inconsistent states: %d with, %d without", seed, f, b)
		}
	}
}
