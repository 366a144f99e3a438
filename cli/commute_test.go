package cli

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
// without any error.
func TestActorCommute(t *testing.T) {
	faults := []consequence.Faults{
		{},
		{Resets: 1},
		{Resets: 2, SilentResets: true, Breaks: 1},
		{Resets: 1, ResetKinds: consequence.ResetRST | consequence.ResetSilent, Breaks: 2, Refusals: 2, Drops: 1},
	}
	cat := builtinCatalog()
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
				pairs := walkCommute(t, m, seed)
				t.Logf("%d commuting pairs checked (seed %d)", pairs, seed)
			})
		}
	}
}

// walkCommute takes 20 random walks of 40 steps (6 under the race
// detector, which slows the handlers tenfold) from m's start state and
// checks Commute in every state; it returns the pairs checked.
func walkCommute(t *testing.T, m *consequence.ActorModel, seed uint64) int {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	pairs := 0
	walks := 20
	if raceEnabled {
		walks = 6
	}
	for w := range walks {
		s := m.Start()
		for step := range 40 {
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
