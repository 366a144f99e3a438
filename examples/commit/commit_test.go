package commit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/examples/commit"
	"github.com/seed6eee2ec7/crystalball/examples/internal/staleview"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestConformance holds the commit, bug and twin, to the contracts every
// runtime relies on.
func TestConformance(t *testing.T) {
	for _, o := range []commit.Options{{}, {AskCoordinator: true}} {
		nodetest.Conformance(t, commit.Spec(3, o), nodetest.ConformanceNodes(3))
	}
}

// harnessConfig runs a coordinator and two participants; "options
// ask-coordinator" (or all) runs the twin, and remember / check-view
// judge a stale view (package staleview).
func harnessConfig() nodetest.Config {
	var o commit.Options
	spec := func() node.Spec { return commit.Spec(3, o) }
	return nodetest.Config{
		Spec: spec,
		Options: func(args []string) (string, error) {
			for _, a := range args {
				if err := commit.Fixes.Enable(&o, a); err != nil {
					return "", err
				}
			}
			return fmt.Sprintf("%+v", o), nil
		},
		Commands: staleview.Commands(spec),
	}
}

// TestScenarios runs the scripts in testdata: a transaction committed and
// one refused, the planted bug on a broken connection and the twin's
// answer to it, and the stale view on which a commit looks undecided. Run
// with -rewrite to regenerate the expected output after a deliberate
// change, then review the diff.
func TestScenarios(t *testing.T) { nodetest.Walk(t, "testdata", harnessConfig) }

// search runs breadth-first search from three started nodes with faults.
func search(t *testing.T, o commit.Options, f consequence.Faults, depth int) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	m, err := consequence.NewActorModel(commit.Spec(3, o), consequence.ActorOptions{N: 3, Workload: commit.Workload, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).MaxDepth(depth).StopOnViolation(true).Workers(1).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCheckFindsTheBug: one broken connection along a path is enough —
// both participants vote yes, the connection of one to the coordinator
// breaks and it aborts while the coordinator commits (depth 9); the twin
// agrees with a break, and with a break and a reset.
func TestCheckFindsTheBug(t *testing.T) {
	res := search(t, commit.Options{}, consequence.Faults{Breaks: 1}, 10)
	if len(res.Violations) == 0 || res.Violations[0].Property != "AgreementAtomic" || res.Violations[0].Depth != 9 {
		t.Fatalf("bug: %v (%d states), want AgreementAtomic at depth 9", res.Violations, res.Unique)
	}
	for _, f := range []consequence.Faults{{Breaks: 1}, {Breaks: 1, Resets: 1}, {Breaks: 1, Resets: 1, SilentResets: true}} {
		if res := search(t, commit.Options{AskCoordinator: true}, f, 10); len(res.Violations) > 0 {
			t.Errorf("twin, faults %+v: %v", f, res.Violations[0])
		}
	}
}
