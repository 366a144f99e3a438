package steering

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// grantServer is n1 of the grant service past its Init: it believes n2
// holds the lock.
func grantServer(t *testing.T) *node.Core {
	t.Helper()
	core, err := node.NewCore(node.CoreConfig{ID: 1, Factory: grantSpec().New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Step(node.Event{Kind: node.EventInit, At: time.Unix(100, 0)}); err != nil {
		t.Fatal(err)
	}
	return core
}

// plainView hides the node states of a view: a node.View and nothing more.
type plainView struct{ node.View }

// The server's grant to n3 breaks nothing on the server (OneHolder is
// about the clients' Held), so the paper's check lets it through; n3's
// handling of the Grant it sends makes two holders, which the check one
// hop ahead sees on the view's copy of n3 and vetoes, naming n3. Neither
// the real core nor the view's states change; a receiver the view does
// not hold, a view without states, or a view where the lock is free veto
// nothing.
func TestImmediateCheckHopVetoesTheGrantThatMakesASecondHolder(t *testing.T) {
	spec := grantSpec()
	view, err := StartSnapshot(t, spec, []node.ID{1, 2, 3}, 1).Decode(spec.New)
	if err != nil {
		t.Fatal(err)
	}
	core := grantServer(t)
	ev := node.Event{Kind: node.EventMessage, At: time.Unix(101, 0), From: 3, Msg: grantAcquire{}}
	if v, err := ImmediateCheck(core, ev, view, spec.Properties); err != nil || v != nil {
		t.Fatalf("the paper's check: %+v, %v; want nothing (the server's own state breaks nothing)", v, err)
	}
	h0, _ := core.Hash()
	v, err := ImmediateCheckHop(core, ev, view, spec.Properties)
	if err != nil || v == nil || v.Property != "OneHolder" || !slices.Equal(v.Via, []node.ID{3}) {
		t.Fatalf("one hop ahead: %+v, %v; want a OneHolder veto via n3", v, err)
	}
	if h1, _ := core.Hash(); h1 != h0 {
		t.Fatal("the check changed the server's real state")
	}
	if view.Service(3).(*grant).Held {
		t.Fatal("the check stepped the view's own state of n3")
	}

	without3, err := StartSnapshot(t, spec, []node.ID{1, 2}, 1).Decode(spec.New)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ImmediateCheckHop(core, ev, without3, spec.Properties); err != nil || v != nil {
		t.Fatalf("n3 outside the view: %+v, %v; want nothing", v, err)
	}
	if v, err := ImmediateCheckHop(core, ev, plainView{view}, spec.Properties); err != nil || v != nil {
		t.Fatalf("a view without states: %+v, %v; want nothing", v, err)
	}
	free, err := StartSnapshot(t, spec, []node.ID{1, 3}, 1).Decode(spec.New)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ImmediateCheckHop(core, ev, free, spec.Properties); err != nil || v != nil {
		t.Fatalf("the lock free in the view: %+v, %v; want nothing", v, err)
	}
}

// The controller's check follows the hop only with Config.ImmediateHop,
// on the view of its last round, and counts the veto.
func TestControllerImmediateHopIsConfigured(t *testing.T) {
	spec := grantSpec()
	snap := StartSnapshot(t, spec, []node.ID{1, 2, 3}, 1)
	ev := node.Event{Kind: node.EventMessage, At: time.Unix(101, 0), From: 3, Msg: grantAcquire{}}
	for _, hop := range []bool{false, true} {
		c, err := New(Config{Mode: Off, Spec: spec, ImmediateCheckConfig: ImmediateCheckConfig{ImmediateHop: hop}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Round(context.Background(), snap); err != nil {
			t.Fatal(err)
		}
		v, err := c.ImmediateCheck(grantServer(t), ev)
		if err != nil || (v != nil) != hop || c.Stats().Vetoes != map[bool]uint64{false: 0, true: 1}[hop] {
			t.Fatalf("ImmediateHop %v: veto %+v, %v, stats %+v", hop, v, err, c.Stats())
		}
	}
}

// A bystander the node has heard from since its checkpoint is stale: the
// check one hop ahead leaves it out. n2's checkpoint (number 3) holds the
// lock; once n1 has received a message n2 stamped 3 or later, n2 has moved
// on since that checkpoint (it may have released the lock), and the grant
// to n3 is not vetoed on n2's outdated word. A message stamped before the
// checkpoint changes nothing, and a broken connection to n2 forgets what
// was heard. The receiver itself is never left out.
func TestImmediateHopLeavesStaleBystandersOut(t *testing.T) {
	spec := grantSpec()
	snap := StartSnapshot(t, spec, []node.ID{1, 2, 3}, 1)
	ev := node.Event{Kind: node.EventMessage, At: time.Unix(101, 0), From: 3, Msg: grantAcquire{}}
	for _, merged := range []bool{false, true} {
		c, err := New(Config{Mode: Off, Spec: spec, ImmediateCheckConfig: ImmediateCheckConfig{ImmediateHop: true}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Round(context.Background(), snap); err != nil {
			t.Fatal(err)
		}
		if merged {
			c.RememberView(snap.At, 0) // the layer's merged view
		}
		vetoed := func() bool {
			t.Helper()
			v, err := c.ImmediateCheck(grantServer(t), ev)
			if err != nil {
				t.Fatal(err)
			}
			return v != nil
		}
		c.Heard(2, 2)
		c.Heard(3, 9)
		if !vetoed() {
			t.Fatalf("merged %v: no veto with n2 heard from before its checkpoint only (and the receiver n3 after)", merged)
		}
		c.Heard(2, 3)
		if vetoed() {
			t.Fatalf("merged %v: vetoed on n2's checkpoint although n2 has spoken since", merged)
		}
		c.Forget(2)
		if !vetoed() {
			t.Fatalf("merged %v: no veto after n2's connection broke and what was heard of it was forgotten", merged)
		}
	}
}
