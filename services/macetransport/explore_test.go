package macetransport

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// exploreModel is MaceMC's case as the explorer sees it: two nodes, n1's
// application sending two messages to n2, datagrams reordered at will and
// up to drops of them lost.
func exploreModel(t *testing.T, opts Options, drops int) *consequence.ActorModel {
	t.Helper()
	spec, err := NewSpec(opts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{
		N: 2, Seed: 1, Faults: consequence.Faults{Drops: drops},
		Workload: func(id node.ID, restart bool) []node.Message {
			if id != 1 || restart {
				return nil
			}
			return []node.Message{SendMessages{To: 2, Count: 2}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBFSKeepsSafety: every state BFS reaches from the initial state in 14
// steps — every reordering of the packets in flight, every timeout, up to
// two packets lost — keeps the safety properties, with and without the
// correction (the bug is a liveness bug: the transport never delivers out
// of order or twice, it just stops delivering). The state counts pin the
// model: a change to the protocol shows here first.
func TestBFSKeepsSafety(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		unique uint64
	}{
		{"bug", DefaultOptions(), 9878},
		{"fixed", AllFixes(), 9832},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := exploreModel(t, tc.opts, 2)
			res, err := consequence.NewChecker[*consequence.GlobalState, consequence.ActorAction](m).
				Properties(m.Properties()...).Strategy(consequence.BFS).MaxDepth(14).Workers(1).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range res.Violations {
				t.Errorf("%s: %v", tc.name, v)
			}
			if res.Unique != tc.unique || res.Depth != 14 {
				t.Errorf("%s: %d unique states to depth %d, want %d to depth 14", tc.name, res.Unique, res.Depth, tc.unique)
			}
		})
	}
}
