package snapshot_test

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// The no-blind-start rule (Config.GatherSettle): with periodic gathers, a
// node gathers GatherSettle after it starts, not a whole GatherInterval
// later; a change of its neighbourhood starts a gather GatherSettle after
// it was first seen, changes meanwhile coalescing into that one; every
// gather restarts the period; a reset starts the rule again; a negative
// GatherSettle restores gathers on the period alone.
func TestGatherSettle(t *testing.T) {
	const settle, period = 500 * time.Millisecond, 10 * time.Second
	h := newHarness(t, []node.ID{1, 2, 3}, func(id node.ID) snapshot.Config {
		c := snapshot.Config{Interval: time.Hour, GatherConfig: snapshot.GatherConfig{GatherSettle: settle}}
		if id == 1 {
			c.GatherInterval = period
		}
		return c
	})
	m := h.mgrs[1]
	if got, want := m.NextTick(), t0.Add(settle); !got.Equal(want) {
		t.Fatalf("first tick due at %v, want the settle time %v", got, want)
	}
	h.tick(settle)
	if !m.Gathering() {
		t.Fatal("no gather GatherSettle after the start")
	}
	h.deliverAll()
	if len(h.snaps) != 1 {
		t.Fatalf("%d snapshots after the start gather, failures %v", len(h.snaps), h.fails)
	}
	// Two changes 100 ms apart: one gather, GatherSettle after the first.
	changed := h.now
	h.srcs[1].svc.nbrs = []node.ID{2}
	h.apply(m.AfterStep(h.now))
	if m.Gathering() {
		t.Fatal("a change started a gather at once")
	}
	if got, want := m.NextTick(), changed.Add(settle); !got.Equal(want) {
		t.Fatalf("after a change the next tick is at %v, want %v", got, want)
	}
	h.tick(100 * time.Millisecond)
	h.srcs[1].svc.nbrs = []node.ID{3}
	h.apply(m.AfterStep(h.now))
	if got, want := m.NextTick(), changed.Add(settle); !got.Equal(want) {
		t.Fatalf("a second change moved the gather to %v, want it at %v", got, want)
	}
	h.tick(settle - 100*time.Millisecond)
	if !m.Gathering() {
		t.Fatal("no gather GatherSettle after the neighbourhood changed")
	}
	h.deliverAll()
	s := h.snaps[len(h.snaps)-1]
	if len(h.snaps) != 2 || len(s.Nodes) != 2 || s.Nodes[1].Node != 3 {
		t.Fatalf("%d snapshots, the last of %v; want 2, the last of {n1, n3}", len(h.snaps), s.Nodes)
	}
	// The gather restarted the period.
	if got, want := m.NextTick(), changed.Add(settle+period); !got.Equal(want) {
		t.Fatalf("next periodic gather at %v, want %v", got, want)
	}
	// Unchanged neighbourhood: nothing pending.
	h.apply(m.AfterStep(h.now))
	if got, want := m.NextTick(), changed.Add(settle+period); !got.Equal(want) {
		t.Fatalf("with no change the next tick is at %v, want %v", got, want)
	}
	// A reset: the node gathers again GatherSettle after it.
	h.apply(m.Reset(h.now))
	if got, want := m.NextTick(), h.now.Add(settle); !got.Equal(want) {
		t.Fatalf("after a reset the next tick is at %v, want %v", got, want)
	}
}

func TestGatherSettleOff(t *testing.T) {
	const period = 10 * time.Second
	h := newHarness(t, []node.ID{1, 2}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Hour, GatherConfig: snapshot.GatherConfig{GatherInterval: period, GatherSettle: -1}}
	})
	m := h.mgrs[1]
	if got, want := m.NextTick(), t0.Add(period); !got.Equal(want) {
		t.Fatalf("first tick due at %v, want a whole period %v", got, want)
	}
	h.tick(period)
	h.deliverAll()
	h.srcs[1].svc.nbrs = nil
	h.apply(m.AfterStep(h.now))
	if got, want := m.NextTick(), t0.Add(2*period); !got.Equal(want) || m.Gathering() {
		t.Fatalf("with GatherSettle off a change made the next tick %v (gathering %v), want %v", got, m.Gathering(), want)
	}
}
