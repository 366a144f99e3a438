package kv_test

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
)

// FuzzDecodeCheckpoint: a store's checkpoint — its durable bytes or
// image, raft's protobufs inside, and its log — is untrusted. Any input
// decodes to a state or gives an error; raft never panics on it.
func FuzzDecodeCheckpoint(f *testing.F) {
	sp, _, err := kv.Spec(kv.Options{})
	if err != nil {
		f.Fatal(err)
	}
	e, err := emulation.New(emulation.Config{Spec: sp, Nodes: 3, Seed: 1, Duration: time.Minute, Workload: kv.Workload,
		Churn: emulation.ChurnConfig{Rate: 6, Downtime: 2 * time.Second}})
	if err != nil {
		f.Fatal(err)
	}
	for at := 2 * time.Second; at <= 20*time.Second; at += 2 * time.Second {
		if err := e.RunUntil(emulation.Epoch.Add(at)); err != nil {
			f.Fatal(err)
		}
		for id := node.ID(1); id <= 3; id++ {
			if c := e.Core(id); c != nil && e.Live(id) {
				if cp, err := c.Checkpoint(); err == nil {
					f.Add(cp)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := node.DecodeCheckpoint(b, sp.New)
		if err != nil {
			return
		}
		if _, err := st.Hash(); err != nil {
			t.Fatalf("a decoded state does not hash: %v", err)
		}
	})
}
