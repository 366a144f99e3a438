package consequence_test

import (
	"context"
	"flag"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

var (
	live25Once sync.Once
	live25     *consequence.ActorModel
	live25Err  error
)

// liveRandTree25 is the actor model of a 25-node RandTree emulated for two
// minutes of virtual time (seed 1, no churn), with one silent reset
// allowed: the live state a deployed node would predict from.
func liveRandTree25(b *testing.B) *consequence.ActorModel {
	live25Once.Do(func() {
		spec := randtree.NewSpec(randtree.DefaultOptions())
		wl := func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		}
		e, err := emulation.New(emulation.Config{Spec: spec, Nodes: 25, Seed: 1, Workload: wl})
		if err != nil {
			live25Err = err
			return
		}
		if live25Err = e.RunUntil(emulation.Epoch.Add(2 * time.Minute)); live25Err != nil {
			return
		}
		live25, live25Err = consequence.NewActorModelFromLive(spec, e, consequence.ActorOptions{
			Workload: wl,
			Faults:   consequence.Faults{Resets: 1, SilentResets: true},
		})
	})
	if live25Err != nil {
		b.Fatal(live25Err)
	}
	return live25
}

// BenchmarkActorRandTree25 explores from the 25-node live RandTree state
// with a budget of benchStates unique states and reports unique states per
// second, the visited set's bytes per state, the states generated and the
// depth reached. Scratch cores come from a per-node sync.Pool: against a
// NewCore per step it allocates a third fewer bytes at the same speed
// (within the noise of a shared 2-core machine).
//
//	go test ./consequence/ -run '^$' -bench ActorRandTree25 -benchtime 3x [-actorstates 200000] [-cpu 1,2]
//
// With -actortime D every case runs for D of wall time with no state
// budget instead (the depth metric is then the depth reached in D):
//
//	go test ./consequence/ -run '^$' -bench 'ActorRandTree25/(consequence|bfs)$' -benchtime 1x -actortime 10s
func BenchmarkActorRandTree25(b *testing.B) {
	cases := []struct {
		name     string
		strategy consequence.Strategy
		states   int
		depth    int
		refusals int
	}{
		{"consequence", consequence.Consequence, *benchStates, 0, 0},
		{"bfs", consequence.BFS, *benchStates, 0, 0},
		// RandTree never calls TrySend: a refusal budget must cost
		// nothing (the same states, at the same speed).
		{"consequence-refusals", consequence.Consequence, *benchStates, 0, 1},
		// A depth budget ends the search at a level boundary, so the
		// engine never expands a level twice (in parallel, then again
		// directly, as it does for the level where the state budget runs
		// out): the model's throughput without that overhead.
		{"bfs-depth3", consequence.BFS, 0, 3, 0},
	}
	for _, bc := range cases {
		if *benchTime > 0 && bc.depth == 0 {
			bc.states = 0
		}
		s := bc.strategy
		b.Run(bc.name, func(b *testing.B) {
			m := liveRandTree25(b)
			if bc.refusals > 0 {
				m = m.WithFaults(consequence.Faults{Resets: 1, SilentResets: true, Refusals: bc.refusals})
			}
			b.ReportAllocs()
			var res *consequence.Result[*consequence.GlobalState, consequence.ActorAction]
			var elapsed time.Duration
			for b.Loop() {
				var err error
				res, err = consequence.NewChecker(m).
					Properties(m.Properties()...).
					Strategy(s).
					MaxStates(bc.states).
					MaxDepth(bc.depth).
					MaxTime(*benchTime).
					MaxViolations(1 << 20).
					Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				elapsed += res.Elapsed
			}
			b.ReportMetric(float64(res.Unique)*float64(b.N)/elapsed.Seconds(), "states/s")
			b.ReportMetric(res.BytesPerState(), "B/state")
			b.ReportMetric(float64(res.Unique), "unique")
			b.ReportMetric(float64(res.Generated), "generated")
			b.ReportMetric(float64(res.Depth), "depth")
			b.ReportMetric(float64(len(res.Violations)), "violations")
		})
	}
}

// benchStates is the state budget of BenchmarkActorRandTree25.
var benchStates = flag.Int("actorstates", 20_000, "state budget of BenchmarkActorRandTree25")

// benchTime, if set, replaces the state budget of BenchmarkActorRandTree25
// by a wall-time budget.
var benchTime = flag.Duration("actortime", 0, "wall-time budget of BenchmarkActorRandTree25 (replaces -actorstates)")
