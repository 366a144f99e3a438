package tool

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// TestActorCommute checks the actor model's independence claims
// (ActorModel.Commute), on which partial-order reduction rests, on random
// walks through every service of the catalog with every kind of fault: in
// each state, every pair of actions it declares independent must reach the
// same state in both orders. A wrong claim would make BFS miss states
// without any error. It takes the first 20 steps of one walk per service
// and fault set; TestActorCommuteLong (cli_long_test.go) takes 20 walks of
// 40 steps with the same seeds, the first of them this one. Paxos
// dominates: its states hold many messages in flight, so each declares
// about a hundred independent pairs, each checked with four transitions,
// and more the longer the walk (14 s of CPU under the race detector for
// the 6 walks of 40 steps per case this test used to take, 3.2 s for one
// walk, 1.1 s for its first 20 steps: 9,221 pairs checked of the
// 19,385).
func TestActorCommute(t *testing.T) {
	testActorCommute(t, 1, 20)
}

// testActorCommute checks Commute on walks random walks of steps steps
// per service and fault set.
func testActorCommute(t *testing.T, walks, steps int) {
	faults := []consequence.Faults{
		{},
		{Resets: 1},
		{Resets: 2, SilentResets: true, Breaks: 1},
		{Resets: 1, ResetKinds: consequence.ResetRST | consequence.ResetSilent, Breaks: 2, Refusals: 2, Drops: 1},
	}
	cat := testCatalog()
	for _, name := range cat.names {
		for fi, f := range faults {
			seed := uint64(len(name)*31 + fi)
			t.Run(fmt.Sprintf("%s/faults=%d", name, fi), func(t *testing.T) {
				svc, err := cat.lookup(name, nil, 4)
				if err != nil {
					t.Fatal(err)
				}
				m, err := serviceModel(svc, 4, 1, f)
				if err != nil {
					t.Fatal(err)
				}
				pairs := walkCommute(t, m, seed, walks, steps)
				t.Logf("%d commuting pairs checked (seed %d)", pairs, seed)
			})
		}
	}
}

// walkCommute takes walks random walks of steps steps from m's start
// state and checks Commute in every state; it returns the pairs checked.
func walkCommute(t *testing.T, m *consequence.ActorModel, seed uint64, walks, steps int) int {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	pairs := 0
	for w := range walks {
		s := m.Start()
		for step := range steps {
			n, err := consequence.CheckCommute[*consequence.GlobalState, consequence.ActorAction](m, m, s)
			pairs += n
			if err != nil {
				t.Fatalf("seed %d, walk %d, step %d: %v\nstate:\n%v", seed, w, step, err, s)
			}
			acts := m.Actions(s, nil)
			if len(acts) == 0 {
				break
			}
			next, ok := m.Next(s, acts[rng.IntN(len(acts))].Act)
			if ok {
				s = next
			}
		}
	}
	return pairs
}
