package kv_test

import (
	"maps"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/replayed"
	"github.com/seed6eee2ec7/crystalball/node/statediff"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
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

// TestInputsAtTheTickDueReplay: a follower's election tick falls due at
// the instant a call arrives (the call takes the ticks before it, the due
// one is the timer's), then the leader's heartbeat resets the election
// counter and moves the timer, and a second heartbeat comes at the same
// instant. The second changes nothing the node observes, so the replayed
// adapter does not log it: the node restored from its checkpoint must
// then behave as the live one, here on a Put at that instant. Were the
// tick the moved timer no longer stands for left to the next input
// rather than given at the end of the first heartbeat (rearm), the
// second heartbeat would give it unlogged: the live node would count it
// and the restored one count it again.
func TestInputsAtTheTickDueReplay(t *testing.T) {
	opts := kv.DefaultOptions()
	opts.ApplyCommitted = true
	sp := spec(t, opts)
	core, err := node.NewCore(node.CoreConfig{ID: 2, Factory: sp.New, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	step := func(c *node.Core, ev node.Event) {
		t.Helper()
		if _, err := c.Step(ev); err != nil {
			t.Fatalf("%v: %v", ev, err)
		}
	}
	heartbeat := func() node.Message {
		b, err := proto.Marshal(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2),
			Term: proto.Uint64(1), Commit: proto.Uint64(1)})
		if err != nil {
			t.Fatal(err)
		}
		return kv.Raft{Msg: b}
	}
	tickAt := func(c *node.Core) time.Time {
		t.Helper()
		for _, tm := range c.State().Timers {
			if tm.Name == "tick" {
				return tm.At
			}
		}
		t.Fatal("no tick timer")
		return time.Time{}
	}
	t0 := emulation.Epoch
	step(core, node.Event{Kind: node.EventInit, At: t0})
	step(core, node.Event{Kind: node.EventMessage, From: 1, Msg: heartbeat(), At: t0})
	due := tickAt(core)
	step(core, node.Event{Kind: node.EventApp, Msg: kv.Put{Key: "k2", Value: "a"}, At: due})
	step(core, node.Event{Kind: node.EventMessage, From: 1, Msg: heartbeat(), At: due})
	step(core, node.Event{Kind: node.EventMessage, From: 1, Msg: heartbeat(), At: due})

	cp, err := core.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := node.NewCore(node.CoreConfig{ID: 2, Factory: sp.New, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := restored.Restore(cp); err != nil {
		t.Fatal(err)
	}
	put := node.Event{Kind: node.EventApp, Msg: kv.Put{Key: "k2", Value: "b"}, At: due}
	step(core, put)
	step(restored, put)
	live, _ := replayed.Observed[kv.Observation](core.Service())
	again, _ := replayed.Observed[kv.Observation](restored.Service())
	if d, ok := statediff.First(live, again); ok {
		t.Errorf("after a Put, the live node and the one restored from its checkpoint differ: %v (live vs restored)", d)
	}
	if tickAt(core) != tickAt(restored) {
		t.Errorf("after a Put, the live node's tick is at %v, the restored one's at %v", tickAt(core), tickAt(restored))
	}
}
