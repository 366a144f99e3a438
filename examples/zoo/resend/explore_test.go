package resend

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// checkDepth bounds the searches: the bug shows well within it with one
// delivery fault, and FIFO delivery shows nothing at any depth.
const checkDepth = 14

// search runs breadth-first search of two nodes with faults f.
func search(t *testing.T, o Options, f consequence.Faults, declared bool) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	spec := Spec(o)
	if !declared {
		spec.Delivery = node.DeliverySpec{}
	}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).
		Strategy(consequence.BFS).MaxDepth(checkDepth).MaxStates(200_000).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var bug = Options{Items: 2, Retries: 1}

// TestFIFOMisses: today's delivery — no declaration, or a declaration with
// no delivery fault in the budget, or only losses — never applies an item
// twice: the search completes without a violation.
func TestFIFOMisses(t *testing.T) {
	for _, c := range []struct {
		name     string
		f        consequence.Faults
		declared bool
		states   uint64
	}{
		{"undeclared", consequence.Faults{Duplicates: 1, Reorders: 1}, false, 29},
		{"no-budget", consequence.Faults{}, true, 29},
		{"losses", consequence.Faults{Losses: 2}, true, 75},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := search(t, bug, c.f, c.declared)
			t.Logf("%v: %d states, depth %d", res.Stop, res.Unique, res.Depth)
			if len(res.Violations) > 0 {
				t.Fatalf("violation: %v", res.Violations[0])
			}
			if res.Stop != consequence.StopCompleted || res.Unique != c.states {
				t.Fatalf("stopped by %v after %d states, want completed after %d", res.Stop, res.Unique, c.states)
			}
		})
	}
}

// TestDuplicateFinds: one duplicate, or one late message overtaken by the
// next item, shows the bug; the corrected receiver survives both.
func TestDuplicateFinds(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     consequence.Faults
		depth int
		last  string
	}{
		{"duplicate", consequence.Faults{Duplicates: 1}, 7, "n2 duplicate resend.Data from n1 (position 0)"},
		{"reorder", consequence.Faults{Reorders: 1}, 5, "n2 deliver-ahead resend.Data from n1 (position 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := search(t, bug, c.f, true)
			if len(res.Violations) == 0 {
				t.Fatalf("not found: %v, %d states", res.Stop, res.Unique)
			}
			v := res.Violations[0]
			t.Logf("%d states; %v", res.Unique, v)
			if v.Property != "AppliedOnce" || v.Depth != c.depth || !hasStep(v.Path, c.last) {
				t.Fatalf("found %v, want AppliedOnce at depth %d through %q", v, c.depth, c.last)
			}
			fixed := bug
			fixed.Fixed = true
			if res := search(t, fixed, c.f, true); len(res.Violations) > 0 {
				t.Fatalf("fixed: %v", res.Violations[0])
			}
		})
	}
}

// hasStep reports whether the path takes the step rendered as step.
func hasStep(path []consequence.Action[consequence.ActorAction], step string) bool {
	for _, a := range path {
		if a.Act.String() == step {
			return true
		}
	}
	return false
}
