package snapshot_test

import (
	"context"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// checkpointRun is one RandTree experiment for the paper's §5.5 numbers:
// 100 nodes on the default wide-area topology, a 10 s checkpoint interval,
// every node gathering its neighbourhood every 10 s, measured over the
// virtual time after warm-up.
type checkpointRun struct {
	responses, rawBytes, stateBytes, unchanged int64
	protoBytes                                 int64 // every protocol message, envelope-encoded
	byType                                     map[string]int64
	measured                                   time.Duration
	nodes                                      int
	finalRaw, finalZstd, finalDelta            float64 // per-checkpoint averages over the final states
}

func runCheckpointExperiment(tb testing.TB, disableDelta bool) checkpointRun {
	const nodes = 100
	warm, dur := 2*time.Minute, 7*time.Minute
	spec := randtree.NewSpec(randtree.DefaultOptions())
	reg, err := node.NewRegistry(append(append([]node.Message(nil), spec.Messages...), snapshot.Messages()...)...)
	if err != nil {
		tb.Fatal(err)
	}
	var run checkpointRun
	run.nodes = nodes
	run.byType = map[string]int64{}
	measuring := false
	var buf []byte
	cfg := emulation.Config{
		Spec: spec, Nodes: nodes, Seed: 1, Duration: dur,
		Workload: func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},

		Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{
			Interval:        10 * time.Second,
			GatherConfig:    snapshot.GatherConfig{GatherInterval: 10 * time.Second},
			BandwidthConfig: snapshot.BandwidthConfig{DisableDelta: disableDelta},
		}},
		Observers: emulation.Observers{OnNetwork: func(ev emulation.NetworkEvent) {
			if !measuring || ev.Kind != emulation.NetSend || !ev.Protocol {
				return
			}
			buf, err = reg.AppendEnvelope(buf[:0], node.Envelope{From: ev.From, To: ev.To, CN: ev.CN, Msg: ev.Msg})
			if err != nil {
				tb.Fatal(err)
			}
			run.protoBytes += int64(len(buf))
			run.byType[ev.Msg.MessageType()] += int64(len(buf))
		}},
	}
	e, err := emulation.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := e.RunUntil(emulation.Epoch.Add(warm)); err != nil {
		tb.Fatal(err)
	}
	before := e.Result().Snapshots.Totals
	measuring = true
	if _, err := e.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	after := e.Result().Snapshots.Totals
	run.measured = dur - warm
	run.responses = after.Responses - before.Responses
	run.rawBytes = after.RawStateBytes - before.RawStateBytes
	run.stateBytes = after.StateBytes - before.StateBytes
	run.unchanged = after.Unchanged - before.Unchanged

	// Per-checkpoint sizes over the final states: raw, zstd alone, and a
	// delta against the state one checkpoint interval earlier.
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	prev := map[node.ID][]byte{}
	for id := node.ID(1); id <= nodes; id++ {
		prev[id], _ = e.Core(id).Checkpoint()
	}
	if err := e.RunUntil(emulation.Epoch.Add(dur + 10*time.Second)); err != nil {
		tb.Fatal(err)
	}
	var n float64
	for id := node.ID(1); id <= nodes; id++ {
		if !e.Live(id) {
			continue
		}
		cur, _ := e.Core(id).Checkpoint()
		n++
		run.finalRaw += float64(len(cur))
		run.finalZstd += float64(len(enc.EncodeAll(cur, nil)))
		d, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderDictRaw(1, prev[id]))
		run.finalDelta += float64(len(d.EncodeAll(cur, nil)))
	}
	run.finalRaw /= n
	run.finalZstd /= n
	run.finalDelta /= n
	return run
}

// BenchmarkRandTreeCheckpoints reports the paper's §5.5 numbers for
// RandTree (paper: 176 B per checkpoint, 803 b/s per node at 100 nodes with
// a 10 s interval). Run once:
//
//	go test -run '^$' -bench RandTreeCheckpoints -benchtime 1x ./snapshot/
func BenchmarkRandTreeCheckpoints(b *testing.B) {
	for i := 0; i < b.N; i++ {
		d := runCheckpointExperiment(b, false)
		z := runCheckpointExperiment(b, true)
		secs := d.measured.Seconds() * float64(d.nodes)
		b.ReportMetric(d.finalRaw, "raw-B/ckpt")
		b.ReportMetric(d.finalZstd, "zstd-B/ckpt")
		b.ReportMetric(d.finalDelta, "delta-B/ckpt")
		b.ReportMetric(float64(d.rawBytes)/float64(d.responses), "sent-raw-B/answer")
		b.ReportMetric(float64(z.stateBytes)/float64(z.responses), "sent-zstd-B/answer")
		b.ReportMetric(float64(d.stateBytes)/float64(d.responses), "sent-delta-B/answer")
		b.ReportMetric(float64(d.unchanged)/float64(d.responses), "unchanged-frac")
		b.ReportMetric(float64(d.rawBytes)*8/secs, "raw-ckpt-b/s/node")
		b.ReportMetric(float64(z.stateBytes)*8/secs, "zstd-ckpt-b/s/node")
		b.ReportMetric(float64(d.stateBytes)*8/secs, "delta-ckpt-b/s/node")
		b.ReportMetric(float64(d.protoBytes)*8/secs, "protocol-b/s/node")
		b.ReportMetric(float64(d.responses)/secs, "answers/s/node")
		for _, m := range snapshot.Messages() {
			name := m.MessageType()
			b.ReportMetric(float64(d.byType[name])*8/secs, name[len("snapshot."):]+"-b/s/node")
		}
	}
}
