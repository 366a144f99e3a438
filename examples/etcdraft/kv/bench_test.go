package kv_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
)

// BenchmarkCheck: BFS of the corrected store from the three-node start to
// depth 8, one worker, with the adapter's counts per state.
func BenchmarkCheck(b *testing.B) {
	var states uint64
	sp, ad, err := kv.Spec(kv.Options{ApplyCommitted: true})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m, err := consequence.NewActorModel(sp, consequence.ActorOptions{N: 3, Seed: 1, Workload: kv.Workload})
		if err != nil {
			b.Fatal(err)
		}
		res, err := consequence.NewChecker(m).Properties(m.Properties()...).Strategy(consequence.BFS).
			Workers(1).MaxDepth(8).Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		states += res.Unique
	}
	st := ad.Stats()
	b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
	b.ReportMetric(float64(st.Replays)/float64(st.Steps), "replays/step")
	b.ReportMetric(float64(st.ReplayedInputs)/float64(max(st.Replays, 1)), "inputs/replay")
}

// emulated runs the corrected store for d as `emulate --nodes 3 --churn
// 4/m --seed 9 --fix all --duration d` does (4 leaves a minute, 30 s down
// on average, from 30 s until the last quarter of the run) and returns its
// spec and the cores of its live nodes.
func emulated(b *testing.B, d time.Duration) (node.Spec, []*node.Core) {
	b.Helper()
	sp, _, err := kv.Spec(kv.Options{ApplyCommitted: true})
	if err != nil {
		b.Fatal(err)
	}
	e, err := emulation.New(emulation.Config{Spec: sp, Nodes: 3, Seed: 9, Duration: d, Workload: kv.Workload,
		Churn: emulation.ChurnConfig{Rate: 4, After: 30 * time.Second, Until: d - min(d/4, 5*time.Minute)}})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.RunUntil(emulation.Epoch.Add(d)); err != nil {
		b.Fatal(err)
	}
	var cores []*node.Core
	for id := node.ID(1); id <= 3; id++ {
		if c := e.Core(id); c != nil && e.Live(id) {
			cores = append(cores, c)
		}
	}
	return sp, cores
}

// BenchmarkCheckpoint: the checkpoints of the live nodes of a three-node
// store after d of emulated churn (emulated): their size, and the time to
// encode and to decode one (a replay of its log).
func BenchmarkCheckpoint(b *testing.B) {
	for _, d := range []time.Duration{time.Minute, 5 * time.Minute} {
		b.Run(d.String(), func(b *testing.B) {
			sp, cores := emulated(b, d)
			var bytes, inputs int
			for _, c := range cores {
				cp, err := c.Checkpoint()
				if err != nil {
					b.Fatal(err)
				}
				bytes += len(cp)
				inputs += c.Service().(interface{ Inputs() int }).Inputs()
			}
			for b.Loop() {
				for _, c := range cores {
					cp, err := c.Checkpoint()
					if err != nil {
						b.Fatal(err)
					}
					if _, err := node.DecodeCheckpoint(cp, sp.New); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(bytes)/float64(len(cores)), "bytes/checkpoint")
			b.ReportMetric(float64(inputs)/float64(len(cores)), "inputs/checkpoint")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cores)), "ns/round-trip")
		})
	}
}

// BenchmarkDurableProjection: what a live node with a data directory pays
// after each step for its durable projection (Core.AppendDurable: a fresh
// value recovers from the live one, which encodes raft's HardState, log
// and snapshot and the store), after d of emulated churn; and its size,
// what the node's store holds.
func BenchmarkDurableProjection(b *testing.B) {
	for _, d := range []time.Duration{time.Minute, 5 * time.Minute} {
		b.Run(d.String(), func(b *testing.B) {
			_, cores := emulated(b, d)
			var size int
			var buf []byte
			for b.Loop() {
				size = 0
				for _, c := range cores {
					out, ok, err := c.AppendDurable(buf[:0])
					if err != nil || !ok {
						b.Fatalf("%v (ok %v)", err, ok)
					}
					size += len(out)
					buf = out
				}
			}
			b.ReportMetric(float64(size)/float64(len(cores)), "bytes/projection")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cores)), "ns/projection")
		})
	}
}
