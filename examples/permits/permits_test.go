package permits_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/examples/internal/staleview"
	"github.com/seed6eee2ec7/crystalball/examples/permits"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestConformance holds the limiter, bug and twin, to the contracts every
// runtime relies on.
func TestConformance(t *testing.T) {
	for _, o := range []permits.Options{{}, {AskBorrower: true}} {
		nodetest.Conformance(t, permits.Spec(3, o), nodetest.ConformanceNodes(3))
	}
}

// harnessConfig runs three nodes; "options ask-borrower" (or all) runs the
// twin, and remember / check-view judge a stale view (package staleview).
func harnessConfig() nodetest.Config {
	var o permits.Options
	spec := func() node.Spec { return permits.Spec(3, o) }
	return nodetest.Config{
		Spec: spec,
		Options: func(args []string) (string, error) {
			for _, a := range args {
				if err := permits.Fixes.Enable(&o, a); err != nil {
					return "", err
				}
			}
			return fmt.Sprintf("%+v", o), nil
		},
		Commands: staleview.Commands(spec),
	}
}

// TestScenarios runs the scripts in testdata: a loan and its return, the
// planted bug on a broken connection and the twin's answer to it, and
// the stale view on which a Lend looks like a permit too many. Run with
// -rewrite to regenerate the expected output after a deliberate change,
// then review the diff.
func TestScenarios(t *testing.T) { nodetest.Walk(t, "testdata", harnessConfig) }

// search runs breadth-first search from three started nodes with faults.
func search(t *testing.T, o permits.Options, f consequence.Faults, depth int) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	m, err := consequence.NewActorModel(permits.Spec(3, o), consequence.ActorOptions{N: 3, Workload: permits.Workload, Faults: f})
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
// n1 borrows n2's permit, the connection breaks with the loan out, n2
// takes it back (depth 5); the twin stays within the limit with a break
// and a reset.
func TestCheckFindsTheBug(t *testing.T) {
	res := search(t, permits.Options{}, consequence.Faults{Breaks: 1}, 8)
	if len(res.Violations) == 0 || res.Violations[0].Property != "AtMostLimit" || res.Violations[0].Depth != 5 {
		t.Fatalf("bug: %v (%d states), want AtMostLimit at depth 5", res.Violations, res.Unique)
	}
	for _, f := range []consequence.Faults{{Breaks: 1}, {Breaks: 1, Resets: 1}, {Breaks: 1, Resets: 1, SilentResets: true}} {
		if res := search(t, permits.Options{AskBorrower: true}, f, 9); len(res.Violations) > 0 {
			t.Errorf("twin, faults %+v: %v", f, res.Violations[0])
		}
	}
}
