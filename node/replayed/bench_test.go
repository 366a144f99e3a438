package replayed_test

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// benchSearch runs one BFS of the bank (two nodes, a reset and a break,
// depth 8) per iteration and reports states per second.
func benchSearch(b *testing.B, spec func() node.Spec) {
	var states uint64
	for b.Loop() {
		m, err := consequence.NewActorModel(spec(), consequence.ActorOptions{N: 2, Seed: 3, Workload: bankWorkload(2),
			Faults: consequence.Faults{Resets: 1, Breaks: 1}})
		if err != nil {
			b.Fatal(err)
		}
		res, err := consequence.NewChecker(m).Strategy(consequence.BFS).Workers(1).MaxDepth(8).Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		states += res.Unique
	}
	b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
}

// BenchmarkExploreBank compares the explorer on the hand-written bank and
// on the same bank through the adapter, with and without images: the
// same states, at the price of replays.
func BenchmarkExploreBank(b *testing.B) {
	b.Run("hand-written", func(b *testing.B) { benchSearch(b, handSpec) })
	b.Run("adapted", func(b *testing.B) { benchSearch(b, func() node.Spec { return adaptedSpec(bankAdapter(false)) }) })
	b.Run("adapted-images", func(b *testing.B) {
		benchSearch(b, func() node.Spec { return adaptedSpec(bankAdapter(false, true)) })
	})
}
