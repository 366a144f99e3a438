package steering_test

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/steering"
)

func TestLivenessMaceMCDebug(t *testing.T) {
	spec := randtree.NewSpec(paper.MaceMCOptions(randtree.DefaultOptions()))
	snap, parent, err := paper.JoinReplyInFlight(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []steering.Mode{steering.Debug, steering.Steer} {
		c, err := steering.New(steering.Config{Mode: mode, Spec: spec, Workload: paper.MaceMCWorkload,
			Faults: consequence.Faults{Resets: 1, SilentResets: true}, Walks: 2000, WalkDepth: 1000, MaxSuspects: 50, MaxWalkSteps: 100_000_000}, parent)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Explore(context.Background(), snap)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v", rep)
		for _, p := range rep.Predictions {
			if p.Kind == node.Liveness {
				t.Logf("live path %v", p.Critical.LivePath[:min(len(p.Critical.LivePath), p.Critical.Step+3)])
			}
		}
	}
}
