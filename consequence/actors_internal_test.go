package consequence

import (
	mrand "math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// TestActorIncrementalFingerprint walks random paths with every kind of
// action and checks that the incrementally updated fingerprint (and the
// earliest timer the virtual clock keeps) always equals the one computed
// from scratch, and that the parent of every step
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
		kinds := checkIncrementalWalks(t, m, 20, 60, 1)
		for k := ActDeliver; k <= ActBreak; k++ {
			if kinds[k] == 0 {
				t.Errorf("silent=%v: no action of kind %d taken", silent, k)
			}
		}
	}
}

// gossip is the message of gossipSvc.
type gossip struct{ N int }

func (gossip) MessageType() string { return "test.Gossip" }

// gossipSvc mixes datagrams and messages: on each of its first three ticks
// a node sends a datagram to the next node and a message to the one after;
// it counts what it receives.
type gossipSvc struct{ Ticks, Got int }

func (s *gossipSvc) Init(env node.Env) { env.SetTimer("t", 1) }
func (s *gossipSvc) HandleTimer(env node.Env, _ string) {
	self := uint64(env.Self())
	env.SendDatagram(node.ID(self%3+1), gossip{N: s.Ticks % 2})
	env.Send(node.ID((self+1)%3+1), gossip{N: s.Ticks})
	if s.Ticks++; s.Ticks < 3 {
		env.SetTimer("t", 1)
	}
}
func (s *gossipSvc) HandleMessage(env node.Env, _ node.ID, m node.Message) { s.Got += 1 + m.(gossip).N }
func (s *gossipSvc) HandleApp(node.Env, node.Message)                      {}
func (s *gossipSvc) HandleTransportError(node.Env, node.ID)                {}

// TestActorIncrementalFingerprintDatagrams is TestActorIncrementalFingerprint
// for a service that sends datagrams, with drops among the faults.
func TestActorIncrementalFingerprintDatagrams(t *testing.T) {
	spec := node.Spec{Name: "gossip", New: func() node.Service { return &gossipSvc{} }, Messages: []node.Message{gossip{}}}
	m, err := NewActorModel(spec, ActorOptions{N: 3, Faults: Faults{Resets: 2, Breaks: 1, Drops: 2}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := checkIncrementalWalks(t, m, 50, 40, 3)
	for k := ActDeliver; k <= ActDropDatagram; k++ {
		if kinds[k] == 0 && k != ActApp {
			t.Errorf("no action of kind %d taken", k)
		}
	}
}

// checkIncrementalWalks takes walks random paths of up to steps actions
// from m's start state (seeded by seed) and fails t unless every step
// leaves its parent untouched, keeps the cached connection hash and the
// datagram sets' hash order, and updates the fingerprint incrementally to
// what a computation from scratch gives. It returns how many actions of
// each kind it took.
func checkIncrementalWalks(t *testing.T, m *ActorModel, walks, steps int, seed uint64) map[ActorActionKind]int {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(seed, seed+1))
	kinds := map[ActorActionKind]int{}
	for walk := 0; walk < walks; walk++ {
		g := m.Start()
		for step := 0; step < steps; step++ {
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
			if f, ok := scanFirstDue(next); ok != next.hasFirst || !f.Equal(next.first) {
				t.Fatalf("%v: earliest timer %v %v incrementally, %v %v from scratch", a, next.first, next.hasFirst, f, ok)
			}
			if next.fp != next.fingerprint() {
				t.Fatalf("seed %d walk %d step %d %v: incremental %v, from scratch %v", seed, walk, step, a, next.fp, next.fingerprint())
			}
			for _, d := range next.dgrams {
				if !slices.IsSortedFunc(d.items, func(x, y inflight) int { return cmpHash(x.h, y.h) }) {
					t.Fatalf("%v: datagrams %v→%v out of hash order", a, d.from, d.to)
				}
			}
			kinds[a.Kind]++
			g = next
		}
	}
	return kinds
}

// scanFirstDue is firstDue computed from every node's timers, without the
// nodes' cached earliest timers (the incremental update checks against it).
func scanFirstDue(g *GlobalState) (time.Time, bool) {
	var first time.Time
	found := false
	for _, n := range g.nodes {
		for _, t := range n.st.Timers {
			if d := due(n, t); !found || d.Before(first) {
				first, found = d, true
			}
		}
	}
	return first, found
}
