package live

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
)

// BenchmarkStoreCommit is one store Write (a bbolt transaction: its pages
// and its meta page synced) of records of about a Paxos acceptor's size:
// the cost of one durable commit, whatever number of steps it serves.
func BenchmarkStoreCommit(b *testing.B) {
	for _, records := range []int{1, 16} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			s, err := OpenStore(b.TempDir(), 1, "bench")
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ws := make([]node.DurableWrite, records)
			for i := range ws {
				ws[i] = node.DurableWrite{Key: fmt.Sprintf("k%d", i), Data: make([]byte, 64)}
			}
			b.ResetTimer()
			for i := range b.N {
				ws[0].Data[0] = byte(i)
				if err := s.Write(ws); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPaxosProjection is what Persist adds to a Paxos step: the
// durable projection (a fresh value, Recover, the canonical encoding) and
// its hash, compared with the last (layer.Pipeline's noteService), on an
// acceptor that promised and accepted.
func BenchmarkPaxosProjection(b *testing.B) {
	for _, persist := range []bool{false, true} {
		b.Run(fmt.Sprintf("persist=%v", persist), func(b *testing.B) {
			spec := paxos.NewSpec(paxos.Options{})
			core, err := node.NewCore(node.CoreConfig{ID: 1, Factory: spec.New})
			if err != nil {
				b.Fatal(err)
			}
			p, err := layer.NewPipeline(layer.PipelineConfig{Core: core, Persist: persist})
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Unix(0, 0)
			p.Step(node.Event{Kind: node.EventInit, At: t0}, nil)
			ballot := paxos.Ballot{Round: 1, Node: 2}
			p.Step(node.Event{Kind: node.EventMessage, From: 2, At: t0, Msg: paxos.Accept{Ballot: ballot, Value: "v2"}}, nil)
			ev := node.Event{Kind: node.EventMessage, From: 2, At: t0, Msg: paxos.Prepare{Ballot: ballot}}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p.Step(ev, nil)
			}
		})
	}
}

// BenchmarkDurableStep runs a live node whose every step changes its
// durable state, with a store in a temporary directory: one call at a time
// (each step waits for its own sync: the latency of a durable step), and a
// burst of calls (group commit: one sync serves the steps queued behind
// it). It reports the commits per step.
func BenchmarkDurableStep(b *testing.B) {
	for _, burst := range []bool{false, true} {
		b.Run(fmt.Sprintf("burst=%v", burst), func(b *testing.B) {
			cfg := promiserConfig(1, func(c *RuntimeConfig) { c.Durability.DataDir = b.TempDir() })
			r, err := NewRuntime(cfg, promiserSpec())
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer r.Stop(context.Background())
			calls := func() int {
				var p promiser
				r.Do(context.Background(), func(time.Time) []node.Envelope {
					p = *r.core.Service().(*promiser)
					return nil
				})
				return p.Calls
			}
			before := r.Status().Counters.DurableCommits
			b.ResetTimer()
			for i := range b.N {
				r.Submit(promise{N: i + 1})
				if !burst {
					for r.Status().Counters.DurableCommits == before+uint64(i) {
					}
				}
			}
			for calls() < b.N {
			}
			b.StopTimer()
			b.ReportMetric(float64(r.Status().Counters.DurableCommits-before)/float64(b.N), "commits/step")
		})
	}
}
