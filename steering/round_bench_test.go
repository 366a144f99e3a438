package steering_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// BenchmarkRoundStates measures a steering round's safety search (the
// default budgets: 20,000 states, consequence prediction with its full
// first levels, one worker) from a snapshot of every node of a RandTree
// emulated for two minutes of virtual time (seed 1, no churn), of 25 and
// of 100 nodes, with one silent reset allowed. One op is one round
// (Controller.Explore: the model built from the snapshot's checkpoints,
// then the search); states/s are the round's states over its time, the
// figure docs/PERFORMANCE.md records.
//
//	go test ./steering -run '^$' -bench RoundStates -benchtime 5x -cpuprofile cpu.out
func BenchmarkRoundStates(b *testing.B) {
	for _, nodes := range []int{25, 100} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			spec := randtree.NewSpec(randtree.DefaultOptions())
			snap := emulatedSnapshot(b, spec, nodes)
			cfg := steering.Config{Mode: steering.Debug, Spec: spec, Workload: joinWorkload,
				Properties: randtree.SafetyProperties(), Faults: consequence.Faults{Resets: 1, SilentResets: true}}
			states := benchRounds(b, cfg, snap)
			b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
		})
	}
}

// joinWorkload is what a reset RandTree node is asked to do: join through
// node 1.
func joinWorkload(node.ID, bool) []node.Message {
	return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
}

// emulatedSnapshot runs nodes RandTree nodes for two minutes of virtual
// time and packages their global state as a gatherer (node 1) would
// gather it: every node's checkpoint and every channel, complete.
func emulatedSnapshot(b *testing.B, spec node.Spec, nodes int) *snapshot.Snapshot {
	b.Helper()
	e, err := emulation.New(emulation.Config{Spec: spec, Nodes: nodes, Seed: 1, Workload: joinWorkload})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.RunUntil(emulation.Epoch.Add(2 * time.Minute)); err != nil {
		b.Fatal(err)
	}
	m, err := consequence.NewActorModelFromLive(spec, e, consequence.ActorOptions{Workload: joinWorkload})
	if err != nil {
		b.Fatal(err)
	}
	s, err := paper.SnapshotOfState(m.Init()[0], 1)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkRoundSafetyWalks is BenchmarkRoundStates's round on 25 nodes
// without and with Config.SafetyWalks (64 walks of the default depth):
// what the walks add to a round's time and states.
//
//	go test ./steering -run '^$' -bench RoundSafetyWalks -benchtime 5x
func BenchmarkRoundSafetyWalks(b *testing.B) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	snap := emulatedSnapshot(b, spec, 25)
	for _, walks := range []int{0, 64} {
		b.Run(fmt.Sprintf("walks=%d", walks), func(b *testing.B) {
			cfg := steering.Config{Mode: steering.Debug, Spec: spec, Workload: joinWorkload,
				Properties: randtree.SafetyProperties(), Faults: consequence.Faults{Resets: 1, SilentResets: true},
				SafetyWalkConfig: steering.SafetyWalkConfig{SafetyWalks: walks}}
			benchRounds(b, cfg, snap)
		})
	}
}

// benchRounds runs one round of a fresh controller of cfg on snap per
// op, reports states/op and returns the states of all ops.
func benchRounds(b *testing.B, cfg steering.Config, snap *snapshot.Snapshot) uint64 {
	var states uint64
	b.ReportAllocs()
	for b.Loop() {
		c, err := steering.New(cfg, snap.Gatherer)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := c.Explore(context.Background(), snap)
		if err != nil {
			b.Fatal(err)
		}
		states += rep.States
	}
	b.ReportMetric(float64(states)/float64(b.N), "states/op")
	return states
}
