package steering_test

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// BenchmarkRoundLiveness measures a round's liveness search alone (only
// RandTree's liveness properties, so no safety search) with the default
// walk budgets, from the snapshot of MaceMC's RandTree scenario (4 nodes,
// a join on its way down the tree) and from Figure 2's (3 nodes, a formed
// tree). One op is one round; steps/op and ns/step are the walks' and
// probes' (docs/PERFORMANCE.md).
func BenchmarkRoundLiveness(b *testing.B) {
	spec := randtree.NewSpec(paper.MaceMCOptions(randtree.DefaultOptions()))
	joining, parent, err := paper.JoinPassedDown(spec)
	if err != nil {
		b.Fatal(err)
	}
	formed, err := paper.Figure2Snapshot(spec)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name     string
		snap     *snapshot.Snapshot
		self     node.ID
		workload func(node.ID, bool) []node.Message
	}{
		{"joining", joining, parent, paper.MaceMCWorkload},
		{"formed", formed, 9, paper.Figure2Workload},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := steering.Config{Mode: steering.Debug, Spec: spec, Workload: bc.workload,
				Properties: randtree.LivenessProperties(), Faults: consequence.Faults{Resets: 1, SilentResets: true}}
			var steps uint64
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c, err := steering.New(cfg, bc.self)
				if err != nil {
					b.Fatal(err)
				}
				rep, err := c.Explore(context.Background(), bc.snap)
				if err != nil {
					b.Fatal(err)
				}
				steps += rep.Liveness.Steps
			}
			b.ReportMetric(float64(steps)/float64(b.N), "steps/op")
			if steps > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
			}
		})
	}
}
