// Package paper builds the live states of the CrystalBall paper's RandTree
// scenarios, for the experiments and the tests that start from them
// (consequence prediction, execution steering).
package paper

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// Figure2Nodes are the nodes of the paper's Figure 2.
var Figure2Nodes = []node.ID{1, 9, 13}

// figure2Steps are the events after the three inits of the first row of
// Figure 2 (services/randtree/testdata/figure2.txt): n13 joins as the only
// child of n9, then n1 joins and takes the root position with n9 as its
// only child.
var figure2Steps = []string{
	"n9 app randtree.JoinOverlay",
	"n13 app randtree.JoinOverlay",
	"n13 deliver randtree.Join from n9",
	"n9 deliver randtree.Join from n13",
	"n13 deliver randtree.JoinReply from n9",
	"n1 app randtree.JoinOverlay",
	"n9 deliver randtree.Join from n1",
	"n1 deliver randtree.Join from n9",
	"n9 deliver randtree.JoinReply from n1",
	"n13 deliver randtree.NewRoot from n9",
}

// Figure2Workload is the application workload of Figure 2: n9 and n13
// bootstrap through each other, n1 through n9, and each joins again the
// same way after a reset.
func Figure2Workload(id node.ID, restart bool) []node.Message {
	targets := map[node.ID][]node.ID{1: {9}, 9: {13}, 13: {9}}
	return []node.Message{randtree.JoinOverlay{Targets: targets[id]}}
}

// Figure2 runs the 13 steps of the first row of Figure 2 (three inits and
// ten events) through an actor model of spec and returns the checkpoints
// of n1, n9 and n13 in the state reached — what a snapshot gathered there
// holds (no message is in flight). spec is RandTree with any options.
func Figure2(spec node.Spec) ([]consequence.Checkpoint, error) {
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{Nodes: Figure2Nodes, Workload: Figure2Workload})
	if err != nil {
		return nil, err
	}
	g := m.Start()
	for _, step := range figure2Steps {
		found := false
		for _, a := range m.Actions(g, nil) {
			if a.Act.String() != step {
				continue
			}
			if next, ok := m.Next(g, a.Act); ok {
				g, found = next, true
			}
			break
		}
		if !found {
			return nil, fmt.Errorf("paper: figure 2: step %q is not enabled", step)
		}
	}
	var cps []consequence.Checkpoint
	for _, id := range g.Nodes() {
		st, now, _ := g.NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			return nil, fmt.Errorf("paper: figure 2: checkpoint of %v: %w", id, err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: now})
	}
	return cps, nil
}

// Figure2Snapshot is Figure 2's live state as the snapshot n9 gathers
// there: the checkpoints Figure2 returns, each with checkpoint number 7
// (the cut), no message recorded in flight, taken at the last node's
// clock. The snapshot is the caller's to modify.
func Figure2Snapshot(spec node.Spec) (*snapshot.Snapshot, error) {
	cps, err := Figure2(spec)
	if err != nil {
		return nil, err
	}
	s := &snapshot.Snapshot{Gatherer: 9, CN: 7}
	for _, cp := range cps {
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: cp.ID, CN: 7, State: cp.Bytes})
		s.At = cp.At
	}
	return s, nil
}
