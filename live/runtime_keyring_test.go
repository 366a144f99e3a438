package live

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
)

// TestRuntimeKeyring: RuntimeConfig.Gossip.Keyring reaches memberlist.
// Nodes whose keyrings share a key gossip with each other although their primary keys
// differ (a key rotation in progress: each decrypts with every key it
// holds); a node that holds none of their keys cannot join.
func TestRuntimeKeyring(t *testing.T) {
	defer livetest.VerifyNone(t)
	k1, k2, k3 := []byte("0123456789abcdef"), []byte("fedcba9876543210"), []byte("aaaaaaaaaaaaaaaa")
	// A join that must succeed gets as long as a loaded machine needs
	// (waitDeadline); the stranger's, bound to fail, gives up quickly.
	start := func(id node.ID, joinTimeout time.Duration, primary []byte, others [][]byte, join ...string) (*Runtime, error) {
		ring, err := memberlist.NewKeyring(others, primary)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultRuntimeConfig()
		cfg.ID, cfg.Gossip.Keyring, cfg.Join = id, ring, join
		cfg.JoinTimeout = joinTimeout
		r, err := NewRuntime(cfg, noteSpec())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Stop(context.Background()) })
		return r, r.Start(context.Background())
	}
	n1, err := start(1, 0, k1, [][]byte{k2})
	if err != nil {
		t.Fatal(err)
	}
	n2, err := start(2, waitDeadline, k2, [][]byte{k1}, n1.Addr())
	if err != nil {
		t.Fatalf("joining with the other primary of a shared keyring: %v", err)
	}
	waitFor(t, "memberlist to see both nodes", func() bool { return n1.ml.NumMembers() == 2 && n2.ml.NumMembers() == 2 })
	if _, err := start(3, 500*time.Millisecond, k3, nil, n1.Addr()); err == nil {
		t.Error("a node with none of the keyring's keys joined")
	}
	if n1.ml.NumMembers() != 2 {
		t.Errorf("the cluster has %d members after the stranger's attempt, want 2", n1.ml.NumMembers())
	}
	n2.Stop(context.Background())
	n1.Stop(context.Background())
}
