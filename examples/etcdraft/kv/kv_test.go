package kv_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
)

func spec(t testing.TB, opts kv.Options) node.Spec {
	t.Helper()
	s, _, err := kv.Spec(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// check runs BFS from the three-node start to depth.
func check(t *testing.T, opts kv.Options, depth, workers int) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	return checkSpec(t, spec(t, opts), depth, workers)
}

func checkSpec(t *testing.T, sp node.Spec, depth, workers int) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	m, err := consequence.NewActorModel(sp, consequence.ActorOptions{N: 3, Seed: 1, Workload: kv.Workload})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).Strategy(consequence.BFS).
		Workers(workers).MaxDepth(depth).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCheckFindsThePlantedBug: from the three-node start BFS finds
// state-machine safety violated at depth 6 (two leaders in a row, each
// applying its own first entry before anyone has it); the corrected store
// is clean to the same depth, and the search is the same with one worker
// and with two (objects taken or replayed: the observation is complete).
//
// In raft's zero configuration (no PreVote, no CheckQuorum) the search
// explores 1,104 states to depth 6 with the bug and 1,096 with the fix.
// Without the bounded properties and the history property it explores
// 1,556: a state then holds neither the client history of its path
// (which splits states that differ only in the order of invocations and
// responses) nor the bounded obligations, and messages are not held to
// arrive within the store's declared delay (Options.MaxDelay, 250 ms:
// node.DeliverySpec.MaxDelay), which cuts the paths
// where a timer fires more than that after a message was sent and before
// it arrives).
func TestCheckFindsThePlantedBug(t *testing.T) {
	const statesBug, statesFixed, statesUntimed = 1104, 1096, 1556
	res := check(t, kv.Options{}, 6, 1)
	if len(res.Violations) == 0 {
		t.Fatalf("no violation in %d states", res.Unique)
	}
	v := res.Violations[0]
	if v.Property != "StateMachineSafety" || v.Depth != 6 || res.Unique != statesBug {
		t.Errorf("first violation %s at depth %d in %d states, want StateMachineSafety at 6 in %d: %v", v.Property, v.Depth, res.Unique, statesBug, v.Err)
	}
	fixed := check(t, kv.Options{ApplyCommitted: true}, 6, 1)
	if len(fixed.Violations) != 0 {
		t.Errorf("the corrected store violates %s: %v", fixed.Violations[0].Property, fixed.Violations[0].Err)
	}
	if fixed.Unique != statesFixed {
		t.Errorf("the corrected store: %d states to depth 6, want %d", fixed.Unique, statesFixed)
	}
	two := check(t, kv.Options{ApplyCommitted: true}, 6, 2)
	if two.Unique != fixed.Unique || !slices.Equal(two.DepthCounts, fixed.DepthCounts) {
		t.Errorf("two workers: %d states %v, one: %d %v", two.Unique, two.DepthCounts, fixed.Unique, fixed.DepthCounts)
	}
	untimed := spec(t, kv.Options{})
	untimed.Properties = slices.DeleteFunc(slices.Clone(untimed.Properties), func(p node.Property) bool {
		return p.Kind == node.Bounded || p.Kind == node.HistoryKind
	})
	if len(untimed.Properties) != 4 {
		t.Fatalf("properties without the bounded and history kinds: %d, want 4", len(untimed.Properties))
	}
	if res := checkSpec(t, untimed, 6, 1); res.Unique != statesUntimed || len(res.Violations) == 0 || res.Violations[0].Depth != 6 {
		t.Errorf("without LeaderWithin and Linearizable: %d states, violations %v; want %d, StateMachineSafety at depth 6", res.Unique, res.Violations, statesUntimed)
	}
}

// emulate runs a three-node emulation with churn (6 leaves a minute, 3 s
// down on average) for d, calling each every 100 ms of virtual time, and
// returns its trace.
func emulate(t *testing.T, spec node.Spec, seed uint64, d time.Duration, each func(e *emulation.Emulator)) []byte {
	t.Helper()
	var trace bytes.Buffer
	e, err := emulation.New(emulation.Config{Spec: spec, Nodes: 3, Seed: seed, Duration: d, Workload: kv.Workload,
		Churn:     emulation.ChurnConfig{Rate: 6, Downtime: 3 * time.Second},
		Observers: emulation.Observers{Trace: &trace}})
	if err != nil {
		t.Fatal(err)
	}
	for at := 100 * time.Millisecond; at <= d; at += 100 * time.Millisecond {
		if err := e.RunUntil(emulation.Epoch.Add(at)); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if each != nil {
			each(e)
		}
	}
	return trace.Bytes()
}

// TestReplayMatchesTheLiveStore: through an emulated run with churn
// (resets recovering the durable part), a checkpoint of every live node,
// decoded, replays to the live store's observation and fingerprint.
func TestReplayMatchesTheLiveStore(t *testing.T) {
	const seed = 4
	sp, ad, err := kv.Spec(kv.Options{ApplyCommitted: true})
	if err != nil {
		t.Fatal(err)
	}
	steps, checked, afterReset := 0, 0, 0
	emulate(t, sp, seed, 30*time.Second, func(e *emulation.Emulator) {
		if steps++; steps%5 != 0 {
			return
		}
		for id := node.ID(1); id <= 3; id++ {
			c := e.Core(id)
			if c == nil || !e.Live(id) {
				continue
			}
			cp, err := c.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			back, err := node.DecodeCheckpoint(cp, ad.Factory())
			if err != nil {
				t.Fatalf("seed %d, step %d, %v: %v", seed, steps, id, err)
			}
			live, _ := kv.Observed(e.View(), id)
			got, _ := back.Service.(interface{ Observation() kv.Observation })
			if got == nil || !reflect.DeepEqual(got.Observation(), live) {
				t.Fatalf("seed %d, step %d, %v: the replay observes\n%+v\nthe live store\n%+v", seed, steps, id, got, live)
			}
			h1, _ := c.Hash()
			h2, _ := back.Hash()
			if h1 != h2 {
				t.Fatalf("seed %d, step %d, %v: fingerprints differ", seed, steps, id)
			}
			checked++
			if e.Incarnation(id) > 0 {
				afterReset++ // a node that left and rejoined: its log starts from its durable bytes
			}
		}
	})
	st := ad.Stats()
	if checked < 20 || afterReset < 5 || st.Rebases == 0 {
		t.Errorf("%d checkpoints checked, %d of nodes that had rejoined, %+v: want many, some after a reset, and followers' logs rebased",
			checked, afterReset, st)
	}
	t.Logf("%d checkpoints replayed (%d after a reset); %+v", checked, afterReset, st)
}

// TestEmulationIsAPureFunctionOfTheSeed: the same seed gives the same
// trace, another seed another.
func TestEmulationIsAPureFunctionOfTheSeed(t *testing.T) {
	a := sha256.Sum256(emulate(t, spec(t, kv.Options{}), 7, 20*time.Second, nil))
	b := sha256.Sum256(emulate(t, spec(t, kv.Options{}), 7, 20*time.Second, nil))
	c := sha256.Sum256(emulate(t, spec(t, kv.Options{}), 8, 20*time.Second, nil))
	if a != b {
		t.Errorf("seed 7 gave traces %x and %x", a[:8], b[:8])
	}
	if a == c {
		t.Error("seeds 7 and 8 gave the same trace")
	}
}

// TestResetKeepsTheDurablePart: a reset keeps raft's HardState, log and
// the applied store, and loses the role and the leader.
func TestResetKeepsTheDurablePart(t *testing.T) {
	var e *emulation.Emulator
	em, err := emulation.New(emulation.Config{Spec: spec(t, kv.Options{ApplyCommitted: true}), Nodes: 3, Seed: 2,
		Duration: time.Minute, Workload: kv.Workload})
	if err != nil {
		t.Fatal(err)
	}
	e = em
	if err := e.RunUntil(emulation.Epoch.Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var leader node.ID
	for id := node.ID(1); id <= 3; id++ {
		if o, _ := kv.Observed(e.View(), id); o.State == "StateLeader" {
			leader = id
		}
	}
	if leader == node.None {
		t.Fatal("no leader after 20 s")
	}
	before, _ := kv.Observed(e.View(), leader)
	if err := e.Reset(leader, false); err != nil {
		t.Fatal(err)
	}
	after, _ := kv.Observed(e.View(), leader)
	if after.State != "StateFollower" || after.Lead != 0 || after.Progress != nil {
		t.Errorf("after the reset: %s, lead %d, progress %v: want a follower without a leader", after.State, after.Lead, after.Progress)
	}
	if after.Term != before.Term || after.Vote != before.Vote || after.Commit != before.Commit ||
		!reflect.DeepEqual(after.Log, before.Log) || !reflect.DeepEqual(after.App.KV, before.App.KV) {
		t.Errorf("the reset lost durable state:\nbefore %+v\nafter  %+v", before, after)
	}
}

// TestPartitionedLeaderBreaksStateMachineSafety: a leader cut off from
// its followers goes on writing; with the planted bug it applies what the
// majority's new leader then overwrites, and the violation shows when
// the partition heals. The corrected store stays safe, and live at the
// end. The leader is isolated from 10 to 20 s and the run ends at 30 s
// (it went on to a minute before, to the same outcome at twice the cost).
func TestPartitionedLeaderBreaksStateMachineSafety(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		e, err := emulation.New(emulation.Config{Spec: spec(t, kv.Options{ApplyCommitted: fixed, Client: kv.ClientOptions{Writes: 6}}), Nodes: 3, Seed: 5,
			Duration: 30 * time.Second, Workload: kv.Workload})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		var leader node.ID
		for id := node.ID(1); id <= 3; id++ {
			if o, _ := kv.Observed(e.View(), id); o.State == "StateLeader" {
				leader = id
			}
		}
		if leader == node.None {
			t.Fatal("no leader after 10 s")
		}
		if err := e.Isolate(leader); err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(20 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := e.Reconnect(leader); err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var sms emulation.SafetyResult
		for _, s := range res.Safety {
			if s.Name == "StateMachineSafety" {
				sms = s
			}
		}
		if fixed != (sms.Episodes == 0) {
			t.Errorf("fixed %v, leader %v isolated 10-20 s: StateMachineSafety %d episodes (%s)", fixed, leader, sms.Episodes, sms.FirstError)
		}
		for _, l := range res.Liveness {
			if fixed && !l.Holds {
				t.Errorf("the corrected store: %s fails at the end: %s", l.Name, l.Error)
			}
		}
		if !fixed && !strings.Contains(sms.FirstError, "applied entry") {
			t.Errorf("bug: first StateMachineSafety error %q", sms.FirstError)
		}
	}
}
