package paxos

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// benchMembers are the group sizes benchmarked: the paper's three nodes and
// a 25-node group (the emulator's default size).
var benchMembers = []int{3, 25}

func memberIDs(n int) []node.ID {
	ids := make([]node.ID, n)
	for i := range ids {
		ids[i] = node.ID(i + 1)
	}
	return ids
}

// benchState is the state the explorer meets most in Figure 13: an
// acceptor that promised and accepted, whose proposer is collecting
// promises for its own ballot and whose learner has a tally open with a
// minority of the members.
func benchState(members int) node.State {
	ids := memberIDs(members)
	s := newState(Options{Members: ids}.withDefaults())
	s.Promised = Ballot{Round: 2, Node: 2}
	s.Accepted, s.AcceptedValue = Ballot{Round: 1, Node: 1}, "v1"
	s.Round, s.Proposal = 2, "v2"
	s.Phase, s.Ballot = PhasePreparing, s.Promised
	s.Promises = ids[:len(ids)/2]
	s.Highest, s.HighestValue = s.Accepted, s.AcceptedValue
	s.Tallies = []Tally{{Ballot: s.Accepted, Value: "v1", From: ids[:len(ids)/2]}}
	return node.State{
		Service: s,
		Timers:  []node.Timer{{Name: TimerRetry, At: time.Unix(100, 0).UTC()}},
		Rand:    node.NewRand(1, 2),
	}
}

func BenchmarkState(b *testing.B) {
	for _, n := range benchMembers {
		st := benchState(n)
		b.Run(fmt.Sprintf("Hash/members=%d", n), func(b *testing.B) { servicetest.BenchHash(b, st) })
		b.Run(fmt.Sprintf("AppendCheckpoint/members=%d", n), func(b *testing.B) { servicetest.BenchAppendCheckpoint(b, st, 1024) })
		b.Run(fmt.Sprintf("Clone/members=%d", n), func(b *testing.B) { servicetest.BenchClone(b, st) })
	}
}

// BenchmarkStep measures one handler step through node.Core.Step: an
// acceptor promising a Prepare (one send) and accepting an Accept (a Learn
// to every member). Each iteration carries a higher ballot, so every step
// does the full work rather than being refused.
func BenchmarkStep(b *testing.B) {
	for _, n := range benchMembers {
		for _, kind := range []string{"Prepare", "Accept"} {
			b.Run(fmt.Sprintf("%s/members=%d", kind, n), func(b *testing.B) {
				c, err := node.NewCore(node.CoreConfig{ID: 1, Factory: NewSpec(Options{Members: memberIDs(n)}).New})
				if err != nil {
					b.Fatal(err)
				}
				at := time.Unix(1_000_000, 0).UTC()
				if _, err := c.Step(node.Event{Kind: node.EventInit, At: at}); err != nil {
					b.Fatal(err)
				}
				ev := node.Event{Kind: node.EventMessage, At: at, From: 2}
				b.ReportAllocs()
				round := uint64(0)
				for b.Loop() {
					round++
					bal := Ballot{Round: round, Node: 2}
					if kind == "Prepare" {
						ev.Msg = Prepare{Ballot: bal}
					} else {
						ev.Msg = Accept{Ballot: bal, Value: "v2"}
					}
					fx, err := c.Step(ev)
					if err != nil {
						b.Fatal(err)
					}
					if len(fx.Sends) == 0 {
						b.Fatalf("%v was refused", ev.Msg)
					}
				}
			})
		}
	}
}
