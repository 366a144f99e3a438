package emulation_test

import (
	"bytes"
	"fmt"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// The world-model test of the lasting faults: an emulated run with random
// crash-stops (restarting after wmDowntime), partitions of every shape
// (healing after wmLength) and clock jumps is replayed step by step in the
// explorer, as TestWorldModelReplay replays resets and breaks: every event
// the emulator runs must be an enabled action of the explorer (its
// restarts and heals ordered by the virtual clock), lead to the same node
// state and leave the same messages in flight.

const (
	wmDowntime = 150 * time.Millisecond
	wmLength   = 120 * time.Millisecond
	wmJump     = time.Second
)

func TestWorldModelLastingReplay(t *testing.T) {
	all := map[consequence.ActorActionKind]int{}
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			logSeedOnFailure(t, seed)
			for k, n := range replayLasting(t, seed, 1500*time.Millisecond) {
				all[k] += n
			}
		})
	}
	for _, k := range []consequence.ActorActionKind{consequence.ActCrash, consequence.ActRestart, consequence.ActPartition, consequence.ActHeal, consequence.ActClockJump} {
		if all[k] == 0 {
			t.Errorf("no %v replayed in all the runs: %v", consequence.ActorAction{Kind: k, Node: 1}, all)
		}
	}
}

func replayLasting(t *testing.T, seed uint64, d time.Duration) map[consequence.ActorActionKind]int {
	var steps []emulation.Step
	var trace bytes.Buffer
	e := mustNew(t, emulation.Config{

		Spec: wmSpec(), Nodes: wmNodes, Seed: seed, StartSpread: time.Nanosecond,
		Topology:  emulation.UniformTopology{L: emulation.Link{Latency: lat}},
		Workload:  wmWorkload,
		Observers: emulation.Observers{Trace: &trace, OnStep: func(s emulation.Step) { steps = append(steps, s) }},
	})
	run(t, e, 15*time.Millisecond)
	m, err := consequence.NewActorModelFromLive(wmSpec(), e, consequence.ActorOptions{Workload: wmWorkload,
		Faults: consequence.Faults{Crashes: 1 << 20, Downtime: wmDowntime, Partitions: 1 << 20, PartitionLength: wmLength,
			ClockJumps: 1 << 20, ClockJump: wmJump}})
	if err != nil {
		t.Fatal(err)
	}
	r := &replay{t: t, trace: &trace, e: e, m: m, g: m.Start()}
	steps = nil
	faults := mrand.New(mrand.NewPCG(seed, 17))
	nextFault := e.Elapsed() + time.Duration(faults.IntN(100))*time.Millisecond
	var healAt time.Duration
	kinds := map[consequence.ActorActionKind]int{}
	for e.Elapsed() < d {
		if healAt > 0 && e.Elapsed() >= healAt {
			if err := e.HealAll(); err != nil {
				t.Fatal(err)
			}
			r.applyLasting(consequence.ActorAction{Kind: consequence.ActHeal, Node: r.cutOwner()})
			healAt = 0
			kinds[consequence.ActHeal]++
		}
		if e.Elapsed() >= nextFault {
			if a, ok := lastingFault(t, e, r, faults); ok {
				r.applyLasting(a)
				kinds[a.Kind]++
				if a.Kind == consequence.ActPartition {
					healAt = e.Elapsed() + wmLength
				}
			}
			nextFault = e.Elapsed() + faultGap + time.Duration(faults.IntN(100))*time.Millisecond
		}
		if !e.Step() {
			break
		}
		for _, s := range steps {
			r.replayStep(s, kinds)
		}
		steps = steps[:0]
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %d events, lasting faults by kind %v", r.n, kinds)
	return kinds
}

// cutOwner is the node whose partition is in place in the explorer.
func (r *replay) cutOwner() node.ID {
	for _, a := range r.m.Actions(r.g, nil) {
		if a.Act.Kind == consequence.ActHeal {
			return a.Act.Node
		}
	}
	r.t.Fatalf("event %d: no heal enabled in the explorer\n%v%s", r.n, r.g, r.tail())
	return node.None
}

// lastingFault injects a random lasting fault in the emulator and returns
// the explorer's action for it: a crash of a live node, a partition (an
// isolation, a partial or one-way cut) when none is in place, a clock jump.
func lastingFault(t *testing.T, e *emulation.Emulator, r *replay, faults *mrand.Rand) (consequence.ActorAction, bool) {
	t.Helper()
	id := node.ID(1 + faults.IntN(wmNodes))
	p := node.ID(1 + faults.IntN(wmNodes))
	var a consequence.ActorAction
	var err error
	switch k := faults.IntN(6); {
	case k <= 1:
		if !e.Live(id) {
			return a, false
		}
		a, err = consequence.ActorAction{Kind: consequence.ActCrash, Node: id}, e.Crash(id, wmDowntime)
	case k <= 3:
		if p == id || r.g.Partitions() > 0 && hasCut(r) {
			return a, false
		}
		a = consequence.ActorAction{Kind: consequence.ActPartition, Node: id}
		switch faults.IntN(3) {
		case 0:
			a.Cut = consequence.CutIsolate
			err = e.Isolate(id)
		case 1:
			a.Node, a.Cut, a.Peer = min(id, p), consequence.CutPartial, max(id, p)
			err = e.PartitionGroups([]node.ID{id}, []node.ID{p})
		default:
			a.Cut, a.Peer = consequence.CutOneWay, p
			err = e.CutOneWay(id, p)
		}
	default:
		if !e.Live(id) {
			return a, false // the explorer jumps only nodes that are up
		}
		a, err = consequence.ActorAction{Kind: consequence.ActClockJump, Node: id, Back: k == 5}, e.JumpClock(id, wmJump)
		if k == 5 {
			err = e.JumpClock(id, -2*wmJump) // back: from +wmJump to -wmJump
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return a, true
}

// hasCut reports whether a partition is in place in the explorer.
func hasCut(r *replay) bool {
	for a := node.ID(1); a <= wmNodes; a++ {
		for b := node.ID(1); b <= wmNodes; b++ {
			if r.g.Cut(a, b) {
				return true
			}
		}
	}
	return false
}

// applyLasting is apply for a lasting fault: a crashed node's state is
// lost in the explorer while the emulator's core keeps it, so the check
// after it compares the nodes that are up and the channels.
func (r *replay) applyLasting(a consequence.ActorAction) {
	r.t.Helper()
	for _, x := range r.m.Actions(r.g, nil) {
		if x.Act.Kind == a.Kind && x.Act.Node == a.Node && x.Act.Peer == a.Peer && x.Act.Cut == a.Cut && x.Act.Back == a.Back {
			next, ok := r.m.Next(r.g, x.Act)
			if !ok {
				r.t.Fatalf("event %d: %v has no successor", r.n, x.Act)
			}
			r.g, r.n = next, r.n+1
			for _, id := range r.g.Nodes() {
				r.check(id, a.String())
			}
			return
		}
	}
	r.t.Fatalf("event %d: %v is not enabled in the explorer\n%v%s", r.n, a, r.g, r.tail())
}

// replayStep replays an emulator event: a down node's reset is its
// restart.
func (r *replay) replayStep(s emulation.Step, kinds map[consequence.ActorActionKind]int) {
	r.t.Helper()
	if s.Event.Kind == node.EventReset && r.g.Down(s.Node) {
		r.apply(consequence.ActorAction{Kind: consequence.ActRestart, Node: s.Node}, "restart")
		kinds[consequence.ActRestart]++
		return
	}
	r.step(s)
}
