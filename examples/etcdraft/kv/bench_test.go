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

// BenchmarkCheckpoint: the checkpoints of a three-node store after d of
// emulated churn (4 leaves a minute): their size, and the time to encode
// and to decode one (a replay of its log).
func BenchmarkCheckpoint(b *testing.B) {
	for _, d := range []time.Duration{time.Minute, 5 * time.Minute} {
		b.Run(d.String(), func(b *testing.B) {
			sp, _, err := kv.Spec(kv.Options{ApplyCommitted: true})
			if err != nil {
				b.Fatal(err)
			}
			e, err := emulation.New(emulation.Config{Spec: sp, Nodes: 3, Seed: 9, Duration: d, Workload: kv.Workload,
				Churn: emulation.ChurnConfig{Rate: 4.0 / 60}})
			if err != nil {
				b.Fatal(err)
			}
			if err := e.RunUntil(emulation.Epoch.Add(d)); err != nil {
				b.Fatal(err)
			}
			var cores []*node.Core
			var bytes, inputs int
			for id := node.ID(1); id <= 3; id++ {
				if c := e.Core(id); c != nil && e.Live(id) {
					cp, err := c.Checkpoint()
					if err != nil {
						b.Fatal(err)
					}
					cores = append(cores, c)
					bytes += len(cp)
					inputs += c.Service().(interface{ Inputs() int }).Inputs()
				}
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
