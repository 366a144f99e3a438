package steering_test

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// TestImmediateCheckVetoesUpdateSibling: the immediate safety check stops
// the last step of Figure 2 — n9 handling n1's UpdateSibling(n13) while
// n13 is still its child — and leaves n9's real state untouched; a
// harmless event passes; with the correction the same step passes.
func TestImmediateCheckVetoesUpdateSibling(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, ev, g := steering.BeforeUpdateSibling(t, spec)
	h0, _ := core.Hash()
	veto, err := steering.ImmediateCheck(core, ev, g, spec.Properties)
	if err != nil {
		t.Fatal(err)
	}
	if veto == nil || veto.Property != randtree.ChildrenSiblingsDisjoint {
		t.Fatalf("veto %+v, want %s", veto, randtree.ChildrenSiblingsDisjoint)
	}
	if h1, _ := core.Hash(); h1 != h0 {
		t.Fatal("the check changed the real node state")
	}
	// A probe from n13 changes nothing dangerous.
	probe := node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: ev.At}
	if veto, err := steering.ImmediateCheck(core, probe, g, spec.Properties); err != nil || veto != nil {
		t.Fatalf("probe: veto %+v, %v", veto, err)
	}
	// Without a view only the node itself is checked: the violation is
	// local to n9, so it is still caught.
	if veto, err := steering.ImmediateCheck(core, ev, nil, spec.Properties); err != nil || veto == nil {
		t.Fatalf("no view: veto %+v, %v", veto, err)
	}
	fixed := randtree.NewSpec(randtree.AllFixes())
	fcore, fev, fg := steering.BeforeUpdateSibling(t, fixed)
	if veto, err := steering.ImmediateCheck(fcore, fev, fg, fixed.Properties); err != nil || veto != nil {
		t.Fatalf("fixed protocol: veto %+v, %v", veto, err)
	}
}

// TestControllerImmediateCheckCounts: the controller's check uses its last
// snapshot's view and counts checks and vetoes; off checks nothing.
func TestControllerImmediateCheckCounts(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, ev, _ := steering.BeforeUpdateSibling(t, spec)
	c := controller(t, steering.Steer, spec, 9)
	if _, err := c.Round(context.Background(), figure2Snapshot(t, spec)); err != nil {
		t.Fatal(err)
	}
	if c.View() == nil {
		t.Fatal("no view after a round")
	}
	veto, err := c.ImmediateCheck(core, ev)
	if err != nil || veto == nil {
		t.Fatalf("veto %+v, %v", veto, err)
	}
	if s := c.Stats(); s.ImmediateChecks != 1 || s.Vetoes != 1 {
		t.Fatalf("stats %+v", s)
	}
	// Mode off explores nothing, but the check (the paper's
	// immediate-check-only configuration) still works with the view of the
	// last snapshot.
	off := controller(t, steering.Off, spec, 9)
	if rep, err := off.Round(context.Background(), figure2Snapshot(t, spec)); err != nil || rep.States != 0 || off.View() == nil {
		t.Fatalf("off round: %+v, %v", rep, err)
	}
	if veto, err := off.ImmediateCheck(core, ev); veto == nil || err != nil || off.Stats().Vetoes != 1 {
		t.Fatalf("off: %+v, %v", veto, err)
	}
}

// BenchmarkImmediateCheck is the cost of the immediate safety check per
// event for RandTree: copy n9's state, run the handler, evaluate the four
// safety properties on the three-node view (the paper forks a process).
//
//	go test ./steering/ -run '^$' -bench ImmediateCheck -benchmem
func BenchmarkImmediateCheck(b *testing.B) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, ev, g := steering.BeforeUpdateSibling(b, spec)
	probe := node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: ev.At}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := steering.ImmediateCheck(core, probe, g, spec.Properties); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImmediateCheckPaxos is the immediate check's cost per event for
// a Paxos acceptor of three members: copy n2's state (it has proposed),
// run its Accept handler, evaluate OneValueChosen on the three-node view.
//
//	go test ./steering/ -run '^$' -bench ImmediateCheck -benchmem
func BenchmarkImmediateCheckPaxos(b *testing.B) {
	core, ev, g, props := paxosAcceptor(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := steering.ImmediateCheck(core, ev, g, props); err != nil {
			b.Fatal(err)
		}
	}
}

// paxosAcceptor is n2 of three Paxos members that have all proposed, the
// Accept of n1's first ballot it is about to handle, the three-node view
// and the safety properties.
func paxosAcceptor(b *testing.B) (*node.Core, node.Event, *consequence.GlobalState, []node.Property) {
	b.Helper()
	spec := paxos.NewSpec(paxos.Options{})
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 3, Workload: func(id node.ID, _ bool) []node.Message {
		return []node.Message{paxos.Propose{Value: "v" + id.String()}}
	}})
	if err != nil {
		b.Fatal(err)
	}
	g := m.Start()
	st, now, _ := g.NodeState(2)
	clone, err := st.Clone(spec.New)
	if err != nil {
		b.Fatal(err)
	}
	core, err := node.NewCore(node.CoreConfig{ID: 2, Factory: spec.New})
	if err != nil {
		b.Fatal(err)
	}
	core.SetState(clone, now)
	ev := node.Event{Kind: node.EventMessage, From: 1, Msg: paxos.Accept{Ballot: paxos.Ballot{Round: 1, Node: 1}, Value: "v1"}, At: now}
	return core, ev, g, spec.Properties
}

// BenchmarkImmediateCheckHop is the immediate check one hop ahead
// (ImmediateCheckHop) on the same two events: RandTree's probe sends
// nothing, so it costs what the paper's check does; the Paxos acceptor's
// Accept sends Accepted to the three learners, each delivered to a copy of
// its state in the view before the properties are judged.
//
//	go test ./steering/ -run '^$' -bench ImmediateCheck -benchmem
func BenchmarkImmediateCheckHop(b *testing.B) {
	b.Run("randtree", func(b *testing.B) {
		spec := randtree.NewSpec(randtree.DefaultOptions())
		core, ev, g := steering.BeforeUpdateSibling(b, spec)
		probe := node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: ev.At}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := steering.ImmediateCheckHop(core, probe, g, spec.Properties); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("paxos", func(b *testing.B) {
		core, ev, g, props := paxosAcceptor(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := steering.ImmediateCheckHop(core, ev, g, props); err != nil {
				b.Fatal(err)
			}
		}
	})
}
