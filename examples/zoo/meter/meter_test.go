package meter

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// partitioned runs six nodes for a minute on a lossless network, with cut
// the server cut off from every client for 5 s from 10 s on, and returns
// the NoDoubleBilling result.
func partitioned(t *testing.T, fixed bool, seed uint64, cut bool) emulation.SafetyResult {
	t.Helper()
	// LossMin = LossMax = 0 would mean the defaults: a loss of one in a
	// trillion is none in a minute.
	top, err := emulation.NewAccessTopology(6, emulation.AccessConfig{LossMin: 1e-12, LossMax: 1e-12}, seed)
	if err != nil {
		t.Fatal(err)
	}
	e, err := emulation.New(emulation.Config{Spec: Spec(fixed), Nodes: 6, Seed: seed, Duration: time.Minute,
		Workload: Workload, Topology: top})
	if err != nil {
		t.Fatal(err)
	}
	if cut {
		if err := e.RunUntil(emulation.Epoch.Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := e.Isolate(Server); err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(15 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := e.Reconnect(Server); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r.Safety[0]
}

// TestPartitionBillsTwice: without loss the planted bug bills nothing
// twice, but a partition that cuts off Acks in flight does (seed 3: first
// right after the heal, at 15.09 s; 7 of seeds 1–12 do); the fixed twin
// bills once.
func TestPartitionBillsTwice(t *testing.T) {
	const seed = 3
	if s := partitioned(t, false, seed, false); s.ViolatedStates > 0 {
		t.Errorf("seed %d: the bug bills twice without loss or partition at %v: %s", seed, s.FirstViolation, s.FirstError)
	}
	bug := partitioned(t, false, seed, true)
	t.Logf("seed %d: %d violating states, first at %v: %s", seed, bug.ViolatedStates, bug.FirstViolation, bug.FirstError)
	if bug.ViolatedStates == 0 || bug.FirstViolation < 15*time.Second || bug.FirstViolation > 16*time.Second {
		t.Errorf("seed %d: want a double bill right after the heal, got %d states, first at %v", seed, bug.ViolatedStates, bug.FirstViolation)
	}
	if fixed := partitioned(t, true, seed, true); fixed.ViolatedStates > 0 {
		t.Errorf("seed %d: fixed twin bills twice at %v: %s", seed, fixed.FirstViolation, fixed.FirstError)
	}
}
