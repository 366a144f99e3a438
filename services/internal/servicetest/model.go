package servicetest

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// Result is what a consequence search of an actor model returns.
type Result = consequence.Result[*consequence.GlobalState, consequence.ActorAction]

// LiveModel builds the actor model of h's nodes as a gathered snapshot
// would give it: spec's services restored from the nodes' checkpoints at
// h's clock, and the messages in flight; opts gives the workload after a
// reset and the faults explored. It fails t when a checkpoint or the model
// cannot be made.
func LiveModel(t testing.TB, h *nodetest.Harness, spec node.Spec, opts consequence.ActorOptions) *consequence.ActorModel {
	t.Helper()
	var cps []consequence.Checkpoint
	for _, id := range h.Nodes() {
		c, err := h.Core(id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.State().AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: h.Now()})
	}
	m, err := consequence.NewActorModelFromCheckpoints(spec, cps, h.Pending(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Watched returns the properties of m a prediction for property checks:
// the crash property (a handler that panics) and property, in m's order.
func Watched(m *consequence.ActorModel, property string) []consequence.Property[*consequence.GlobalState] {
	var props []consequence.Property[*consequence.GlobalState]
	for _, p := range m.Properties() {
		if p.Name == consequence.CrashProperty || p.Name == property {
			props = append(props, p)
		}
	}
	return props
}

// Predict runs consequence prediction on m for property (Watched) within
// budget states, stopping at the first violation, and logs what it
// explored. A handler's panic fails t.
func Predict(t testing.TB, m *consequence.ActorModel, property string, budget int) *Result {
	t.Helper()
	res, err := consequence.NewChecker(m).
		Properties(Watched(m, property)...).
		Strategy(consequence.Consequence).
		MaxStates(budget).
		StopOnViolation(true).
		Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d unique states, depth %d, stop: %v", property, res.Unique, res.Depth, res.Stop)
	if v, ok := res.Violated(consequence.CrashProperty); ok {
		t.Fatalf("a handler panicked: %v", v.Err)
	}
	return res
}
