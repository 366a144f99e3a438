package randtree_test

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// macemcRun plays MaceMC's RandTree scenario on the emulator (10 ms links,
// no loss or jitter): n1 is the root with its three child slots taken by
// n2–n4; C = n5 joins through n1, which passes the Join down to a child A;
// C resets silently while A's JoinReply is on its way (A's first message
// to C, so it is the SYN of a new connection and reaches C's new
// incarnation, which is in Init); C then joins again through n1, and the run
// goes on for two minutes of recovery timers. It returns the final view.
func macemcRun(t *testing.T, seed uint64, opts randtree.Options) node.View {
	t.Helper()
	e, err := emulation.New(emulation.Config{
		Spec:        randtree.NewSpec(opts),
		Nodes:       5,
		Seed:        seed,
		StartSpread: time.Nanosecond,
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: 10 * time.Millisecond}},
		Workload: func(id node.ID, restart bool) []node.Message {
			if id == 5 {
				return nil // C joins when the script says so
			}
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	step := func(d time.Duration) {
		t.Helper()
		if err := e.RunUntil(emulation.Epoch.Add(d)); err != nil {
			t.Fatal(err)
		}
	}
	do := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	join := randtree.JoinOverlay{Targets: []node.ID{1}}
	step(time.Second)
	// Join n5→n1 arrives at 1.010, Join(down) n1→A at 1.020, JoinReply
	// A→n5 at 1.030: C resets between the last two.
	do(e.AppCall(5, join))
	step(time.Second + 25*time.Millisecond)
	do(e.Reset(5, true))
	step(time.Second + 100*time.Millisecond)
	do(e.AppCall(5, join))
	step(2*time.Minute + time.Second)
	return e.View()
}

// TestEmulatedMaceMCJoinReplyInInit reproduces MaceMC's liveness bug end
// to end on the emulator: with the paper's code A keeps C as a child for
// ever although C's parent is D (A's keepalives reach C and are ignored:
// the stale-child bug), and with the corrections the tree agrees.
func TestEmulatedMaceMCJoinReplyInInit(t *testing.T) {
	const seed = 1
	v := macemcRun(t, seed, randtree.DefaultOptions())
	c := v.Service(5).(*randtree.State)
	if c.Status != randtree.StatusJoined || c.Parent == node.None {
		t.Fatalf("C: %v", c)
	}
	var a node.ID
	for _, id := range []node.ID{2, 3, 4} {
		s := v.Service(id).(*randtree.State)
		if id != c.Parent && len(s.Children) == 1 && s.Children[0] == 5 {
			a = id
		}
	}
	if a == node.None {
		t.Fatalf("no stale parent of C (C's parent %v)", c.Parent)
	}
	want := a.String() + ": child n5 has parent " + c.Parent.String()
	for _, p := range randtree.LivenessProperties() {
		err := p.Check(v)
		if p.Name == randtree.ParentChildAgree {
			if err == nil || err.Error() != want {
				t.Fatalf("ParentChildAgree: %v, want %q", err, want)
			}
		} else if err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
	for name, opts := range map[string]randtree.Options{
		"join-reply-in-init": withFix(t, "join-reply-in-init"),
		"stale-child":        withFix(t, "stale-child"),
	} {
		v := macemcRun(t, seed, opts)
		for _, p := range randtree.LivenessProperties() {
			if err := p.Check(v); err != nil {
				t.Errorf("fix %s: %s: %v", name, p.Name, err)
			}
		}
	}
}

func withFix(t *testing.T, name string) randtree.Options {
	t.Helper()
	o := randtree.DefaultOptions()
	if err := o.EnableFix(name); err != nil {
		t.Fatal(err)
	}
	return o
}
