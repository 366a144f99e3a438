package paper

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// MaceMCNodes are the nodes of MaceMC's RandTree scenario as JoinReplyInFlight
// builds it: n1 is the root, n5 and n6 its two children (MaxChildren 2),
// n9 the joining node (MaceMC's C).
var MaceMCNodes = []node.ID{1, 5, 6, 9}

// MaceMCWorkload is the scenario's workload: every node joins through the
// root n1, and again after a reset.
func MaceMCWorkload(id node.ID, restart bool) []node.Message {
	return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
}

// MaceMCOptions are the options the scenario needs: two children per node,
// so that the root passes a join down to one of two children; fixes as
// given.
func MaceMCOptions(fixes randtree.Options) randtree.Options {
	fixes.MaxChildren = 2
	return fixes
}

// macemcSteps build the tree n1{n5, n6}, then n9 joins through the full
// root, which passes the join down to one of its children.
var macemcSteps = []string{
	"n1 app randtree.JoinOverlay",
	"n5 app randtree.JoinOverlay",
	"n1 deliver randtree.Join from n5",
	"n5 deliver randtree.JoinReply from n1",
	"n6 app randtree.JoinOverlay",
	"n1 deliver randtree.Join from n6",
	"n6 deliver randtree.JoinReply from n1",
	"n5 deliver randtree.UpdateSibling from n1",
	"n9 app randtree.JoinOverlay",
	"n1 deliver randtree.Join from n9",
}

// JoinPassedDown is the live state in which MaceMC's RandTree liveness bug
// can strike, as a snapshot gathered by the child A of the root that the
// root passed n9's join down to (n5 or n6, the root's random choice,
// returned): the tree n1{n5, n6}, n9 joining, the Join on its way from n1
// to A. A will accept n9 and send it a JoinReply over a new connection. If
// n9 resets before the reply arrives, its new incarnation gets the reply
// in Init and ignores it (without FixJoinReplyInInit) and joins again
// through n1; if that join lands at the other child, A keeps n9 as a child
// for ever (without FixStaleChild): ParentChildAgree never holds again.
// spec is RandTree with MaceMCOptions; nodes recover from resets with
// MaceMCWorkload.
func JoinPassedDown(spec node.Spec) (*snapshot.Snapshot, node.ID, error) {
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{Nodes: MaceMCNodes, Workload: MaceMCWorkload})
	if err != nil {
		return nil, node.None, err
	}
	g := m.Start()
	for _, step := range macemcSteps {
		if g, err = takeStep(m, g, step); err != nil {
			return nil, node.None, fmt.Errorf("paper: MaceMC scenario: %w", err)
		}
	}
	a := childWithJoin(g)
	if a == node.None {
		return nil, node.None, fmt.Errorf("paper: MaceMC scenario: n1 passed the join to no child")
	}
	s, err := SnapshotOfState(g, a)
	return s, a, err
}

// childWithJoin returns the child of n1 that n1 passed n9's join to.
func childWithJoin(g *consequence.GlobalState) node.ID {
	for _, c := range []node.ID{5, 6} {
		if len(g.InFlight(1, c)) > 0 {
			return c
		}
	}
	return node.None
}

// takeStep takes the enabled action of g whose String is step.
func takeStep(m *consequence.ActorModel, g *consequence.GlobalState, step string) (*consequence.GlobalState, error) {
	for _, a := range m.Actions(g, nil) {
		if a.Act.String() != step {
			continue
		}
		if next, ok := m.Next(g, a.Act); ok {
			return next, nil
		}
	}
	return nil, fmt.Errorf("step %q is not enabled", step)
}

// SnapshotOfState packages g as the snapshot gatherer would gather it:
// every node's checkpoint with number 7 and every channel's messages in
// flight, complete.
func SnapshotOfState(g *consequence.GlobalState, gatherer node.ID) (*snapshot.Snapshot, error) {
	s := &snapshot.Snapshot{Gatherer: gatherer, CN: 7}
	for _, id := range g.Nodes() {
		st, now, _ := g.NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			return nil, fmt.Errorf("checkpoint of %v: %w", id, err)
		}
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: id, CN: 7, State: b})
		if now.After(s.At) {
			s.At = now
		}
	}
	for _, to := range g.Nodes() {
		for _, from := range g.Nodes() {
			ch := snapshot.Channel{From: from, To: to, Complete: true}
			for _, env := range g.InFlight(from, to) {
				env.CN = 7
				ch.Messages = append(ch.Messages, env)
			}
			s.Channels = append(s.Channels, ch)
		}
	}
	return s, nil
}
