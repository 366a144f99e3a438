package consequence

import (
	mrand "math/rand/v2"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// trySvc is gossipSvc with TrySend: on each of its first three ticks a
// node tries a message to each other node and sends one plainly; a refusal
// arms the tick again.
type trySvc struct{ Ticks, Got, Refused int }

func (s *trySvc) Init(env node.Env) { env.SetTimer("t", 1) }
func (s *trySvc) HandleTimer(env node.Env, _ string) {
	self := uint64(env.Self())
	env.TrySend(node.ID(self%3+1), gossip{N: s.Ticks})
	env.Send(node.ID(self%3+1), gossip{N: 7})
	env.TrySend(node.ID((self+1)%3+1), gossip{N: s.Ticks % 2})
	if s.Ticks++; s.Ticks < 3 {
		env.SetTimer("t", 1)
	}
}
func (s *trySvc) HandleSendRefused(env node.Env, _ node.ID, _ node.Message) {
	s.Refused++
	env.SetTimer("t", 1)
}
func (s *trySvc) HandleMessage(env node.Env, _ node.ID, m node.Message) { s.Got += 1 + m.(gossip).N }
func (s *trySvc) HandleApp(node.Env, node.Message)                      {}
func (s *trySvc) HandleTransportError(node.Env, node.ID)                {}

// TestActorIncrementalFingerprintRefusals is TestActorIncrementalFingerprint
// for a service that sends with TrySend, with refusals among the faults
// (and resets, silent and not, and breaks cutting windows short). Every
// state also keeps its windows consistent: each channel's window count is
// its marked messages, and none is left once the budget is spent. Each
// fault set takes 20 walks of up to 40 steps (seed 5): every walk spends
// its two resets, and refusals are taken 40 and 60 times.
func TestActorIncrementalFingerprintRefusals(t *testing.T) {
	spec := node.Spec{Name: "try", New: func() node.Service { return &trySvc{} }, Messages: []node.Message{gossip{}}}
	for _, f := range []Faults{
		{Resets: 2, Breaks: 1, Refusals: 2},
		{Resets: 2, ResetKinds: ResetBoth, StaleConnections: true, Refusals: 3},
	} {
		m, err := NewActorModel(spec, ActorOptions{N: 3, Faults: f})
		if err != nil {
			t.Fatal(err)
		}
		const seed = 5
		kinds := checkIncrementalWalks(t, m, 20, 40, seed)
		if kinds[ActRefuse] == 0 || kinds[ActReset] == 0 {
			t.Errorf("%+v: kinds taken %v, want refusals and resets", f, kinds)
		}
		checkWindows(t, m, 20, 40, seed)
	}
}

// checkWindows walks random paths (seeded by seed) and fails t unless
// every state's window counts match its marks and no mark is left once
// the refusal budget is spent.
func checkWindows(t *testing.T, m *ActorModel, walks, steps int, seed uint64) {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(seed, seed+2))
	for walk := 0; walk < walks; walk++ {
		g := m.Start()
		for step := 0; step < steps; step++ {
			for _, c := range g.chans {
				n := 0
				for _, it := range c.items {
					if it.win != 0 {
						n++
					}
				}
				if n != c.window || (n > 0 && !m.canRefuse(g)) {
					t.Fatalf("seed %d walk %d step %d: channel %v→%v has %d marks, window %d, refusals %d", seed, walk, step, c.from, c.to, n, c.window, g.refusals)
				}
			}
			acts := m.Actions(g, nil)
			if len(acts) == 0 {
				break
			}
			g, _ = m.Next(g, acts[rng.IntN(len(acts))].Act)
		}
	}
}
