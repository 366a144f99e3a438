package paxos_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
)

// These tests run Paxos on the emulator's default wide-area topology. Every
// node proposes its own value (paxos.ValueOf) when it starts and again
// after each restart, so the proposers duel, and a storm of resets hits
// random nodes while they do.

const emulatedNodes = 5

func members() []node.ID {
	ids := make([]node.ID, emulatedNodes)
	for i := range ids {
		ids[i] = node.ID(i + 1)
	}
	return ids
}

// emulateStorm runs a five-node group for a minute of virtual time: nodes
// start within 2s, and every 300ms during the first 10s a random live node
// resets (silently one time in two), drawn from the seed.
func emulateStorm(t *testing.T, seed uint64, opts paxos.Options) (emulation.Result, *emulation.Emulator) {
	t.Helper()
	opts.Members = members()
	e, err := emulation.New(emulation.Config{
		Spec:        paxos.NewSpec(opts),
		Nodes:       emulatedNodes,
		Seed:        seed,
		Duration:    time.Minute,
		StartSpread: 2 * time.Second,
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{paxos.Propose{Value: paxos.ValueOf(id)}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	storm := rand.New(rand.NewPCG(seed, 0x5707))
	for at := 300 * time.Millisecond; at <= 10*time.Second; at += 300 * time.Millisecond {
		if err := e.RunUntil(emulation.Epoch.Add(at)); err != nil {
			t.Fatalf("seed=%d: %v", seed, err)
		}
		id := node.ID(1 + storm.IntN(emulatedNodes))
		if !e.Live(id) {
			continue
		}
		if err := e.Reset(id, storm.IntN(2) == 0); err != nil {
			t.Fatalf("seed=%d: reset %v: %v", seed, id, err)
		}
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	return r, e
}

func violations(r emulation.Result) (int64, string) {
	if s, ok := servicetest.Safety(r, paxos.OneValueChosen); ok {
		return s.ViolatedStates, s.FirstError
	}
	return -1, "no such property"
}

// Correct Paxos under a reset storm: never two values chosen, and every
// node learns.
func TestEmulatedCorrectPaxosSurvivesResets(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		r, e := emulateStorm(t, seed, paxos.Options{})
		if r.Resets < 20 {
			t.Fatalf("seed=%d: only %d resets", seed, r.Resets)
		}
		if n, first := violations(r); n != 0 {
			t.Errorf("seed=%d: %s violated in %d states: %s", seed, paxos.OneValueChosen, n, first)
		}
		for _, l := range r.Liveness {
			if !l.Holds {
				t.Errorf("seed=%d: %s does not hold at the end: %s", seed, l.Name, l.Error)
			}
		}
		if sum := paxos.Summarize(e.View()); sum.Learned != emulatedNodes || len(sum.Values) != 1 {
			t.Errorf("seed=%d: %v, want all %d nodes to learn one value", seed, sum, emulatedNodes)
		}
	}
}

// With either bug the same storm breaks safety in some runs: random
// emulation finds both bugs without the paper's hand-scheduled scenario.
// Over seeds 1-200, bug1 shows up in 26 runs and bug2 in 72 (a run is a
// pure function of its seed); the test asserts only that each is found at
// all, which at those rates cannot fail by bad luck.
func TestEmulatedBugsBreakSafety(t *testing.T) {
	for _, bug := range paxos.BugNames() {
		var opts paxos.Options
		if err := opts.EnableBug(bug); err != nil {
			t.Fatal(err)
		}
		found, firstSeed, firstErr := 0, uint64(0), ""
		for seed := uint64(1); seed <= 200; seed++ {
			r, _ := emulateStorm(t, seed, opts)
			if n, first := violations(r); n > 0 {
				if found == 0 {
					firstSeed, firstErr = seed, first
				}
				found++
			}
		}
		if found == 0 {
			t.Errorf("%s: no violation of %s in seeds 1-200", bug, paxos.OneValueChosen)
			continue
		}
		t.Logf("%s: violated in %d of 200 runs; first at seed=%d: %s", bug, found, firstSeed, firstErr)
	}
}

// The emulator resets a node by stepping EventReset through its core, so a
// reset node keeps what node.Durable recovers: its acceptor state, unless
// bug2 is injected, and its learned value in any case.
func TestEmulatedResetKeepsDurableState(t *testing.T) {
	for _, bug2 := range []bool{false, true} {
		opts := paxos.Options{Members: members(), BugVolatileAcceptor: bug2}
		e, err := emulation.New(emulation.Config{Spec: paxos.NewSpec(opts), Nodes: emulatedNodes, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(emulation.DefaultStartSpread)); err != nil {
			t.Fatal(err)
		}
		if err := e.AppCall(2, paxos.Propose{Value: "v2"}); err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(e.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		before := *e.View().Service(3).(*paxos.State)
		if before.Learned != "v2" || before.AcceptedValue != "v2" {
			t.Fatalf("bug2=%v: n3 before the reset: %v", bug2, &before)
		}
		if err := e.Reset(3, false); err != nil {
			t.Fatal(err)
		}
		after := e.View().Service(3).(*paxos.State)
		if after.Learned != "v2" {
			t.Errorf("bug2=%v: n3 forgot the learned value: %v", bug2, after)
		}
		if kept := after.Accepted == before.Accepted && after.Promised == before.Promised && after.AcceptedValue == "v2"; kept == bug2 {
			t.Errorf("bug2=%v: n3 after the reset: %v (before: %v)", bug2, after, &before)
		}
	}
}
