package emulation_test

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// benchProperty is a cheap safety property that looks at every live node,
// as real ones do; it never fails and does not allocate.
var benchProperty = node.Always("got-nonnegative", func(v node.View) error {
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*tsvc); ok && s.Got < 0 {
			return fmt.Errorf("%v: negative count", id)
		}
	}
	return nil
})

// BenchmarkEmulatedEvents measures the loop's throughput (events/s) on a
// gossip service (1s ±50% period, 2 messages per tick) with the default
// topology, churn at 1/min and one safety property observed after every
// event. One op is one event. The traced variant adds the per-event state
// hash and trace line; links=inet turns the bandwidth model on (the
// paper's INET access links: every message encoded for its wire size,
// queued at both access links).
func BenchmarkEmulatedEvents(b *testing.B) {
	for _, tc := range []struct {
		nodes  int
		traced bool
		links  bool
	}{{10, false, false}, {25, false, false}, {100, false, false}, {25, true, false}, {25, false, true}, {100, false, true}} {
		name := fmt.Sprintf("nodes=%d", tc.nodes)
		if tc.traced {
			name += "/traced"
		}
		if tc.links {
			name += "/links=inet"
		}
		b.Run(name, func(b *testing.B) {
			cfg := emulation.Config{
				Spec:  testSpec(tcfg{nodes: tc.nodes, period: time.Second, jitter: true, fanout: 2}, benchProperty),
				Nodes: tc.nodes,
				Seed:  1,
				Churn: emulation.ChurnConfig{Rate: 1},
			}
			if tc.traced {
				cfg.Trace = io.Discard
			}
			if tc.links {
				cfg.Network = emulation.INETAccessLinks(emulation.NetworkConfig{})
			}
			e, err := emulation.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := e.RunUntil(emulation.Epoch.Add(15 * time.Second)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if !e.Step() {
					b.Fatalf("loop stopped: %v", e.Err())
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}
