package consequence_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// ticker is the smallest race consequence prediction's pruning misses: a
// timer that must fire twice from the same local state. Node 0 ticks
// between phases 0 and 1 (a local action; its local state returns to 0),
// sending a tick to node 1 on every 0 → 1; node 1 counts the ticks
// delivered to it. "AtMostOneTick" fails once node 1 counted two, which
// needs node 0's tick to run again in phase 0 — a local state Fig. 8 has
// already seen, so it never expands it again.
//
// A state packs phase (bit 0), ticks in flight (bits 8–15) and ticks
// delivered (bits 16–23).
type ticker struct{}

type tickAct struct{ deliver bool }

func (ticker) Init() []uint64 { return []uint64{0} }

func tickField(s uint64, shift uint) uint64 { return (s >> shift) & 0xff }

func (ticker) Actions(s uint64, out []consequence.Action[tickAct]) []consequence.Action[tickAct] {
	if tickField(s, 8)+tickField(s, 16) < 3 {
		out = append(out, consequence.Action[tickAct]{Node: 0, Local: true, Act: tickAct{}})
	}
	if tickField(s, 8) > 0 {
		out = append(out, consequence.Action[tickAct]{Node: 1, Act: tickAct{deliver: true}})
	}
	return out
}

func (ticker) Next(s uint64, a tickAct) (uint64, bool) {
	if a.deliver {
		return s - 1<<8 + 1<<16, true
	}
	if s&1 == 0 {
		return s | 1 + 1<<8, true
	}
	return s &^ 1, true
}

func (ticker) Fingerprint(s uint64) node.Hash { return node.Hash{Hi: mix(s), Lo: mix(^s)} }

func (ticker) LocalFingerprint(s uint64, n int) node.Hash {
	if n == 0 {
		return node.Hash{Hi: mix(s & 1), Lo: 1}
	}
	return node.Hash{Hi: mix(tickField(s, 16)), Lo: 2}
}

func atMostOneTick() consequence.Property[uint64] {
	return consequence.Always("AtMostOneTick", func(s uint64) error {
		if n := tickField(s, 16); n > 1 {
			return fmt.Errorf("%d ticks delivered", n)
		}
		return nil
	})
}

// TestFullDepthFindsRepeatedTimer pins the round strategy's reason to
// exist: plain consequence prediction misses the race, BFS and consequence
// prediction with FullDepth 3 find it at the same depth.
func TestFullDepthFindsRepeatedTimer(t *testing.T) {
	run := func(o consequence.Options) *consequence.Result[uint64, tickAct] {
		t.Helper()
		res, err := consequence.NewChecker[uint64, tickAct](ticker{}).Properties(atMostOneTick()).WithOptions(o).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	bfs := run(consequence.Options{})
	v, ok := bfs.Violated("AtMostOneTick")
	if !ok || v.Depth != 5 {
		t.Fatalf("bfs: violated %v at depth %d, want depth 5", ok, v.Depth)
	}
	plain := run(consequence.Options{Strategy: consequence.Consequence})
	if _, ok := plain.Violated("AtMostOneTick"); ok || plain.Pruned == 0 {
		t.Fatalf("consequence prediction found the race (pruned %d): the test no longer shows what pruning misses", plain.Pruned)
	}
	for full := 1; full <= 3; full++ {
		res := run(consequence.Options{Strategy: consequence.Consequence, FullDepth: full})
		v, ok := res.Violated("AtMostOneTick")
		if want := full == 3; ok != want {
			t.Fatalf("FullDepth %d: violated %v, want %v (unique %d, pruned %d)", full, ok, want, res.Unique, res.Pruned)
		}
		if ok && (v.Depth != 5 || res.Unique > bfs.Unique) {
			t.Fatalf("FullDepth %d: depth %d, unique %d (bfs %d)", full, v.Depth, res.Unique, bfs.Unique)
		}
	}
}
