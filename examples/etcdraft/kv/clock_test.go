package kv_test

import (
	"maps"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
)

// TestEveryNodeTicksWithASeededTimeout: in etcd's configuration every
// member runs raft's own election clock. The timeouts raft uses are the
// store's draws from each node's seeded source, in raft's range
// [ElectionTick, 2×ElectionTick), so the same seed gives the same run and
// another seed other draws; and when the leader is crashed for good, a
// follower's own clock elects a new one within LeaderWithin's bound.
func TestEveryNodeTicksWithASeededTimeout(t *testing.T) {
	opts := kv.DefaultOptions()
	opts.ApplyCommitted = true
	draws := func(seed uint64) (map[node.ID]int, node.ID, node.ID) {
		e, err := emulation.New(emulation.Config{Spec: spec(t, opts), Nodes: 3, Seed: seed, Duration: 20 * time.Second,
			Workload: kv.Workload, StartSpread: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(8 * time.Second)); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		first, got := leaderOf(e.View()), map[node.ID]int{}
		if first == node.None {
			t.Fatalf("seed %d: no leader at 8 s", seed)
		}
		if err := e.Crash(first, 0); err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(8*time.Second + opts.LeaderBound())); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, id := range e.View().Nodes() {
			o, _ := kv.Observed(e.View(), id)
			if to := o.Raft.RandomizedElectionTimeout; to < opts.Raft.ElectionTick || to >= 2*opts.Raft.ElectionTick {
				t.Errorf("seed %d: %v's election timeout %d ticks, outside [%d, %d)", seed, id, to, opts.Raft.ElectionTick, 2*opts.Raft.ElectionTick)
			}
			got[id] = o.Raft.RandomizedElectionTimeout
		}
		return got, first, leaderOf(e.View())
	}
	a, crashed, next := draws(1)
	if next == node.None || next == crashed {
		t.Errorf("seed 1: leader %v crashed, then leader %v within %v; want another", crashed, next, opts.LeaderBound())
	}
	if b, _, _ := draws(1); !mapsEqual(a, b) {
		t.Errorf("seed 1 twice: timeouts %v and %v", a, b)
	}
	differ := false
	for seed := uint64(2); seed <= 4 && !differ; seed++ {
		c, _, _ := draws(seed)
		differ = !mapsEqual(a, c)
	}
	if !differ {
		t.Errorf("seeds 1-4 drew the same timeouts %v", a)
	}
}

// leaderOf is the leader of the highest term in v (node.None: none).
func leaderOf(v node.View) node.ID {
	var top uint64
	leader := node.None
	for _, id := range v.Nodes() {
		if o, ok := kv.Observed(v, id); ok && o.State == "StateLeader" && o.Term > top {
			top, leader = o.Term, id
		}
	}
	return leader
}

func mapsEqual(a, b map[node.ID]int) bool { return maps.Equal(a, b) }
