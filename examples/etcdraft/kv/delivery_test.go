package kv_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
)

// TestRaftMessagesUnreliable: the store declares its raft messages lost,
// duplicated and reordered, so a search with delivery budgets explores
// those faults — more states than FIFO delivery at the same depth — and the
// corrected store survives them; an emulated run at delivery rates loses,
// duplicates and holds back raft messages and violates no safety property.
func TestRaftMessagesUnreliable(t *testing.T) {
	fixed := kv.Options{ApplyCommitted: true}
	run := func(f consequence.Faults) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
		m, err := consequence.NewActorModel(spec(t, fixed), consequence.ActorOptions{N: 3, Seed: 1, Workload: kv.Workload, Faults: f})
		if err != nil {
			t.Fatal(err)
		}
		res, err := consequence.NewChecker(m).Properties(m.Properties()...).Strategy(consequence.BFS).
			MaxDepth(4).MaxStates(3000).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	plain := run(consequence.Faults{})
	faulty := run(consequence.Faults{Losses: 1, Duplicates: 1, Reorders: 1})
	t.Logf("depth 4: %d states FIFO, %d with delivery faults (%v)", plain.Unique, faulty.Unique, faulty.Stop)
	if faulty.Unique <= plain.Unique {
		t.Errorf("delivery faults explored nothing more: %d states, FIFO %d", faulty.Unique, plain.Unique)
	}
	for _, v := range faulty.Violations {
		t.Errorf("the corrected store violates %s under delivery faults: %v", v.Property, v.Err)
	}
	e, err := emulation.New(emulation.Config{Spec: spec(t, fixed), Nodes: 3, Seed: 1, Duration: 10 * time.Second, Workload: kv.Workload,
		Delivery: emulation.DeliveryConfig{Loss: 0.05, Duplicate: 0.05, Reorder: 0.05}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d := r.Messages.Delivery
	if d == nil || d.Lost == 0 || d.Duplicated == 0 || d.Held == 0 {
		t.Errorf("delivery faults done: %+v", d)
	}
	for _, s := range r.Safety {
		if s.ViolatedStates > 0 {
			t.Errorf("the corrected store violates %s at %v: %s", s.Name, s.FirstViolation, s.FirstError)
		}
	}
}
