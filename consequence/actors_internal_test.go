package consequence

import (
	mrand "math/rand/v2"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// TestActorIncrementalFingerprint walks random paths with every kind of
// action and checks that the incrementally updated fingerprint always
// equals the one computed from scratch, and that the parent of every step
// keeps its fingerprint (successors never modify their parent).
func TestActorIncrementalFingerprint(t *testing.T) {
	for _, silent := range []bool{false, true} {
		m, err := NewActorModel(randtree.NewSpec(randtree.DefaultOptions()), ActorOptions{
			N: 5,
			Workload: func(id node.ID, restart bool) []node.Message {
				return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1, 2}}}
			},
			Faults: Faults{Resets: 3, SilentResets: silent, Breaks: 2},
		})
		if err != nil {
			t.Fatal(err)
		}
		rng := mrand.New(mrand.NewPCG(1, 2))
		kinds := map[ActorActionKind]int{}
		for walk := 0; walk < 20; walk++ {
			g := m.Start()
			for step := 0; step < 60; step++ {
				acts := m.Actions(g, nil)
				if len(acts) == 0 {
					break
				}
				a := acts[rng.IntN(len(acts))].Act
				before, str := g.fp, g.String()
				next, ok := m.Next(g, a)
				if !ok {
					t.Fatalf("%v not enabled", a)
				}
				if g.fp != before || g.fingerprint() != before || g.String() != str {
					t.Fatalf("%v modified its parent", a)
				}
				if next.connsH != connsComponent(next.conns) {
					t.Fatalf("%v: stale connection hash", a)
				}
				if next.fp != next.fingerprint() {
					t.Fatalf("silent=%v walk %d step %d %v: incremental %v, from scratch %v", silent, walk, step, a, next.fp, next.fingerprint())
				}
				kinds[a.Kind]++
				g = next
			}
		}
		for k := ActDeliver; k <= ActBreak; k++ {
			if kinds[k] == 0 {
				t.Errorf("silent=%v: no action of kind %d taken", silent, k)
			}
		}
	}
}
