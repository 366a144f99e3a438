package consequence_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// BenchmarkDeterminismCheck is what 'check --verify-determinism N' costs:
// BFS from five Chord or RandTree nodes joining through node 1 (200,000
// states, one worker) with no check, the default sample (one transition
// in consequence.DefaultVerifyEvery), one in 16 and every transition. The
// states found are the same in every case; compare states/s.
//
//	go test ./consequence/ -run '^$' -bench DeterminismCheck -benchtime 3x -count 3
func BenchmarkDeterminismCheck(b *testing.B) {
	services := []struct {
		name     string
		spec     node.Spec
		workload func(node.ID, bool) []node.Message
	}{
		{"chord", chord.NewSpec(chord.DefaultOptions()), func(node.ID, bool) []node.Message {
			return []node.Message{chord.JoinOverlay{Bootstrap: 1}}
		}},
		{"randtree", randtree.NewSpec(randtree.DefaultOptions()), func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		}},
	}
	for _, sv := range services {
		for _, every := range []int{0, consequence.DefaultVerifyEvery, 16, 1} {
			b.Run(fmt.Sprintf("%s/every=%d", sv.name, every), func(b *testing.B) {
				m, err := consequence.NewActorModel(sv.spec, consequence.ActorOptions{N: 5, Seed: 1, Workload: sv.workload, Determinism: consequence.DeterminismCheck{Every: every}})
				if err != nil {
					b.Fatal(err)
				}
				var res *consequence.Result[*consequence.GlobalState, consequence.ActorAction]
				var elapsed time.Duration
				for b.Loop() {
					res, err = consequence.NewChecker(m).Properties(m.Properties()...).
						Workers(1).MaxStates(200_000).Run(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					elapsed += res.Elapsed
				}
				b.ReportMetric(float64(res.Unique)*float64(b.N)/elapsed.Seconds(), "states/s")
				b.ReportMetric(float64(res.Generated), "generated")
			})
		}
	}
}
