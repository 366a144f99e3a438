package mutex_test

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/examples/internal/staleview"
	"github.com/seed6eee2ec7/crystalball/examples/mutex"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestConformance holds the mutual exclusion to the contracts every
// runtime relies on.
func TestConformance(t *testing.T) {
	nodetest.Conformance(t, mutex.Spec(3), nodetest.ConformanceNodes(3))
}

// harnessConfig runs three nodes; remember / check-view judge a stale
// view (package staleview).
func harnessConfig() nodetest.Config {
	spec := func() node.Spec { return mutex.Spec(3) }
	return nodetest.Config{Spec: spec, Commands: staleview.Commands(spec)}
}

// TestScenarios runs the scripts in testdata: two requests racing, a
// reply lost with a broken connection, a restart that still owes its
// deferred replies, and the stale view on which an entry looks like a
// second node in the critical section. Run with -rewrite to regenerate
// the expected output after a deliberate change, then review the diff.
func TestScenarios(t *testing.T) { nodetest.Walk(t, "testdata", harnessConfig) }

// TestCheckFindsNothing: breadth-first search from three started nodes,
// with a break and a reset (with and without RST) along a path, finds no
// two nodes in the critical section.
func TestCheckFindsNothing(t *testing.T) {
	for _, f := range []consequence.Faults{{Breaks: 1, Resets: 1}, {Breaks: 1, Resets: 1, SilentResets: true}} {
		m, err := consequence.NewActorModel(mutex.Spec(3), consequence.ActorOptions{N: 3, Workload: mutex.Workload, Faults: f})
		if err != nil {
			t.Fatal(err)
		}
		res, err := consequence.NewChecker(m).Properties(m.Properties()...).MaxDepth(8).StopOnViolation(true).Workers(1).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) > 0 {
			t.Errorf("faults %+v: %v", f, res.Violations[0])
		}
	}
}
