package paxos

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// figure13Round1 returns the checkpoints of the nodes at the end of
// Figure 13's first round, as testdata/figure13*.txt reach it: A (n1)
// learned v1, which it and B (n2) accepted at 1.n1; B heard only its own
// Learn; C (n3) heard nothing. Nothing is in flight.
func figure13Round1(tb testing.TB, opts Options) []consequence.Checkpoint {
	tb.Helper()
	opts = opts.withDefaults()
	b := Ballot{Round: 1, Node: 1}
	a := newState(opts)
	a.Promised, a.Accepted, a.AcceptedValue, a.Learned, a.Round, a.Proposal = b, b, "v1", "v1", 1, "v1"
	bs := newState(opts)
	bs.Promised, bs.Accepted, bs.AcceptedValue = b, b, "v1"
	bs.Tallies = []Tally{{Ballot: b, Value: "v1", From: []node.ID{2}}}
	var cps []consequence.Checkpoint
	for i, s := range []*State{a, bs, newState(opts)} {
		id := node.ID(i + 1)
		st := node.State{Service: s, Rand: node.NewRand(0, uint64(id))}
		buf, err := st.AppendCheckpoint(nil)
		if err != nil {
			tb.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: buf, At: consequence.DefaultStart})
	}
	return cps
}

// BenchmarkPredictFigure13 is the paper's "time from live state to
// predicted violation" for Paxos (6 s in the paper): a search from the end
// of Figure 13's first round until it finds the OneValueChosen violation,
// with bug1 and no faults, and with bug2 and one reset allowed, by
// consequence prediction and by exhaustive BFS. With bug2 the reset's RST
// reaches B (the members are connected: State.Neighbors) and B consumes the
// transport error before A's Promise, hence depth 9.
func BenchmarkPredictFigure13(b *testing.B) {
	for _, tc := range []struct {
		name   string
		opts   Options
		faults consequence.Faults
		depth  int
	}{
		{"bug1", Options{BugLastPromise: true}, consequence.Faults{}, 7},
		{"bug2-reset", Options{BugVolatileAcceptor: true}, consequence.Faults{Resets: 1}, 9},
	} {
		spec := NewSpec(tc.opts)
		m, err := consequence.NewActorModelFromCheckpoints(spec, figure13Round1(b, tc.opts), nil, consequence.ActorOptions{Faults: tc.faults})
		if err != nil {
			b.Fatal(err)
		}
		var props []consequence.Property[*consequence.GlobalState]
		for _, p := range m.Properties() {
			if p.Name == OneValueChosen {
				props = append(props, p)
			}
		}
		for _, strategy := range []consequence.Strategy{consequence.Consequence, consequence.BFS} {
			b.Run(tc.name+"/"+strategy.String(), func(b *testing.B) {
				var unique uint64
				for b.Loop() {
					res, err := consequence.NewChecker(m).
						Properties(props...).
						Strategy(strategy).
						StopOnViolation(true).
						Run(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					v, ok := res.Violated(OneValueChosen)
					if !ok || v.Depth != tc.depth {
						b.Fatalf("violation found: %v at depth %d, want depth %d", ok, v.Depth, tc.depth)
					}
					unique = res.Unique
				}
				b.ReportMetric(float64(unique), "states")
			})
		}
	}
}
