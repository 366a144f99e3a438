package snapshot_test

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// BenchmarkPerMessage measures what the manager adds to every service
// message: Sent on the sender, Deliver on the receiver (no checkpoint).
func BenchmarkPerMessage(b *testing.B) {
	reg, _ := node.NewRegistry(ping{})
	mk := func(id node.ID) *snapshot.Manager {
		m, err := snapshot.New(snapshot.Config{Registry: reg}, id, &fakeSrc{svc: &fakeSvc{}})
		if err != nil {
			b.Fatal(err)
		}
		m.Start(t0)
		return m
	}
	a, r := mk(1), mk(2)
	now := t0.Add(time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		env := node.Envelope{From: 1, To: 2, Msg: ping{N: 1}}
		a.Sent(now, &env, 0)
		if ok, _, err := r.Deliver(now, env); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkCheckpointAnswer measures taking a checkpoint and answering a
// request with a zstd delta (the responder's cost per gather).
func BenchmarkCheckpointAnswer(b *testing.B) {
	h := newHarness(b, []node.ID{1, 2}, defaults)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.srcs[2].svc.N = i
		h.gather(1)
	}
}
