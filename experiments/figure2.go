package experiments

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
)

// figure2Emulated builds the same live state in emulation, the way a
// deployment reaches it: 13 RandTree nodes of spec on the emulated
// wide-area network (seed seed), of which n9 and n13 are told to join
// through each other 1 s in and n1 through n9 at 3 s — the application
// calls of Figure 2's first row; the others stay idle. At 6 s the tree is
// n1 → n9 → n13, and it returns the checkpoints of n1, n9 and n13 and the
// messages in flight among them, as a snapshot gathered there would hold
// them. It fails if the run did not reach that tree.
func figure2Emulated(spec node.Spec, seed uint64) ([]consequence.Checkpoint, []node.Envelope, error) {
	e, err := emulation.New(emulation.Config{Spec: spec, Nodes: 13, Seed: seed, StartSpread: time.Millisecond})
	if err != nil {
		return nil, nil, fmt.Errorf("experiments: figure 2 in emulation: %w", err)
	}
	runUntil := func(d time.Duration) error {
		if err := e.RunUntil(emulation.Epoch.Add(d)); err != nil {
			return fmt.Errorf("experiments: figure 2 in emulation: %w", err)
		}
		return nil
	}
	steps := []struct {
		at    time.Duration
		calls map[node.ID]node.ID // joiner → target
	}{
		{time.Second, map[node.ID]node.ID{9: 13, 13: 9}},
		{3 * time.Second, map[node.ID]node.ID{1: 9}},
	}
	for _, st := range steps {
		if err := runUntil(st.at); err != nil {
			return nil, nil, err
		}
		for _, id := range []node.ID{1, 9, 13} {
			if to, ok := st.calls[id]; ok {
				if err := e.Submit(id, randtree.JoinOverlay{Targets: []node.ID{to}}); err != nil {
					return nil, nil, fmt.Errorf("experiments: figure 2 in emulation: %w", err)
				}
			}
		}
	}
	if err := runUntil(6 * time.Second); err != nil {
		return nil, nil, err
	}
	var cps []consequence.Checkpoint
	for _, id := range paper.Figure2Nodes {
		c := e.Core(id)
		if c == nil {
			return nil, nil, fmt.Errorf("experiments: figure 2 in emulation: no core for %v", id)
		}
		b, err := c.Checkpoint()
		if err != nil {
			return nil, nil, fmt.Errorf("experiments: figure 2 in emulation: checkpoint of %v: %w", id, err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: c.Now()})
	}
	want := map[node.ID]node.ID{1: node.None, 9: 1, 13: 9} // parents
	for id, parent := range want {
		s, _ := e.Core(id).State().Service.(*randtree.State)
		if s == nil || s.Parent != parent || s.Root != 1 {
			return nil, nil, fmt.Errorf("experiments: figure 2 in emulation (seed %d): %v is %v, want root n1 and parent %v", seed, id, s, parent)
		}
	}
	var inFlight []node.Envelope
	for _, env := range e.InFlight() {
		if slices.Contains(paper.Figure2Nodes, env.From) && slices.Contains(paper.Figure2Nodes, env.To) {
			inFlight = append(inFlight, env)
		}
	}
	return cps, inFlight, nil
}
