package consequence_test

import (
	"context"
	"flag"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
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
		// A depth budget ends the search at a level boundary: the
		// model's throughput without the level the state budget cuts
		// (expanded in shrinking parallel rounds, its tail on one core).
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

// initStates is the state budget of BenchmarkActorSearchFromInit.
var initStates = flag.Int("initstates", 1_000_000, "state budget of BenchmarkActorSearchFromInit")

// BenchmarkActorSearchFromInit is `check --service S --nodes 5
// --max-states 1000000 --budget 0` in process: BFS from the initial
// configuration of five Chord or RandTree nodes joining through node 1,
// with the default world (no faults), one run per iteration. With -cpu 1,2
// the search uses one worker, then two (Workers defaults to GOMAXPROCS):
// the ratio of the two states/s figures is what a second core buys.
//
//	go test ./consequence/ -run '^$' -bench ActorSearchFromInit -benchtime 3x -cpu 1,2
func BenchmarkActorSearchFromInit(b *testing.B) {
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
		b.Run(sv.name, func(b *testing.B) {
			m, err := consequence.NewActorModel(sv.spec, consequence.ActorOptions{N: 5, Seed: 1, Workload: sv.workload})
			if err != nil {
				b.Fatal(err)
			}
			var res *consequence.Result[*consequence.GlobalState, consequence.ActorAction]
			var elapsed time.Duration
			for b.Loop() {
				res, err = consequence.NewChecker(m).Properties(m.Properties()...).
					Workers(runtime.GOMAXPROCS(0)).MaxStates(*initStates).Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				elapsed += res.Elapsed
			}
			b.ReportMetric(float64(res.Unique)*float64(b.N)/elapsed.Seconds(), "states/s")
			b.ReportMetric(float64(res.Depth), "depth")
			b.ReportMetric(float64(res.Generated), "generated")
		})
	}
}
