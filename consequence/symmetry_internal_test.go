package consequence

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// TestRenamedFingerprintIdentity: renaming nobody reproduces the real
// fingerprint, along random walks with resets, breaks, datagrams and drops,
// so the symmetric fingerprint hashes the same components as
// GlobalState.fingerprint (a component added there and forgotten here
// fails this test).
func TestRenamedFingerprintIdentity(t *testing.T) {
	rt, err := NewActorModel(randtree.NewSpec(randtree.DefaultOptions()), ActorOptions{
		N: 5,
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1, 2}}}
		},
		Faults: Faults{Resets: 3, Breaks: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := node.Spec{Name: "gossip", New: func() node.Service { return &gossipSvc{} }, Messages: []node.Message{gossip{}}}
	gs, err := NewActorModel(spec, ActorOptions{N: 3, Faults: Faults{Resets: 2, Breaks: 1, Drops: 2}})
	if err != nil {
		t.Fatal(err)
	}
	id := func(x node.ID) node.ID { return x }
	for _, m := range []*ActorModel{rt, gs} {
		checkWalks(t, m, 30, 50, 7, func(g *GlobalState) {
			if got := m.renamedFingerprint(g, id, nil, nil); got != g.fp {
				t.Fatalf("%s: renamed by the identity %v, real %v\n%v", m.spec.Name, got, g.fp, g)
			}
		})
	}
}

// checkWalks calls check on every state of walks seeded random walks.
func checkWalks(t *testing.T, m *ActorModel, walks, steps int, seed uint64, check func(*GlobalState)) {
	t.Helper()
	r := node.NewRand(seed, 1)
	for range walks {
		g := m.Start()
		check(g)
		for range steps {
			acts := m.Actions(g, nil)
			if len(acts) == 0 {
				break
			}
			next, ok := m.Next(g, acts[r.IntN(len(acts))].Act)
			if !ok {
				continue
			}
			g = next
			check(g)
		}
	}
}

// vote is a voter's ballot to the coordinator.
type vote struct{ Yes bool }

func (vote) MessageType() string { return "test.Vote" }

// castVote is the application call that makes a voter vote.
type castVote struct{ Yes bool }

func (castVote) MessageType() string { return "test.CastVote" }

// voterSvc is a toy service symmetric in its voters: node 1 coordinates and
// records who voted what (sets of IDs, so renaming matters); every other
// node votes yes or no once, by a declared application call, and sends its
// vote to node 1. Each voter is idle, or voted yes or no with the vote in
// flight or received: 5 classes, so 5^n reachable states for n voters and
// C(n+4, 4) orbits.
type voterSvc struct {
	Voted    bool
	Yes, No  []node.ID
	groupIDs bool // declare a malformed group (tests)
}

func (s *voterSvc) Init(node.Env)                          {}
func (s *voterSvc) HandleTimer(node.Env, string)           {}
func (s *voterSvc) HandleTransportError(node.Env, node.ID) {}
func (s *voterSvc) HandleApp(env node.Env, m node.Message) {
	if c, ok := m.(castVote); ok && !s.Voted && env.Self() != 1 {
		s.Voted = true
		env.Send(1, vote(c))
	}
}
func (s *voterSvc) HandleMessage(_ node.Env, from node.ID, m node.Message) {
	if m.(vote).Yes {
		s.Yes = insertSorted(s.Yes, from)
	} else {
		s.No = insertSorted(s.No, from)
	}
}
func (s *voterSvc) AppCalls(self node.ID) []node.Message {
	if self == 1 || s.Voted {
		return nil
	}
	return []node.Message{castVote{Yes: true}, castVote{Yes: false}}
}
func (s *voterSvc) SymmetryGroups(ids []node.ID) [][]node.ID {
	if s.groupIDs {
		return [][]node.ID{{1}}
	}
	return [][]node.ID{slices.DeleteFunc(slices.Clone(ids), func(id node.ID) bool { return id == 1 })}
}
func (s *voterSvc) RenameIDs(rename func(node.ID) node.ID) (node.Service, bool) {
	c := &voterSvc{Voted: s.Voted}
	for _, id := range s.Yes {
		c.Yes = insertSorted(c.Yes, rename(id))
	}
	for _, id := range s.No {
		c.No = insertSorted(c.No, rename(id))
	}
	return c, true
}

func insertSorted(ids []node.ID, id node.ID) []node.ID {
	i, _ := slices.BinarySearch(ids, id)
	return slices.Insert(slices.Clone(ids), i, id)
}

func voterSpec(malformed bool) node.Spec {
	return node.Spec{Name: "voters", New: func() node.Service { return &voterSvc{groupIDs: malformed} }, Messages: []node.Message{vote{}, castVote{}}}
}

// TestSymmetryVoterOrbits pins the actor model's symmetry reduction to exact
// orbit counts: for 2..4 voters BFS keeps 5^n states without symmetry and
// C(n+4, 4) with it (15, 35, 70), with 1 and 2 workers.
// TestSymmetryVoterOrbitsFive (symmetry_long_test.go) adds 5 voters (3,125
// states, 126 orbits), which cost three times as much as the three sizes
// here.
func TestSymmetryVoterOrbits(t *testing.T) { checkVoterOrbits(t, 2, 4) }

// checkVoterOrbits is TestSymmetryVoterOrbits for from..to voters.
func checkVoterOrbits(t *testing.T, from, to int) {
	binom := func(n, k int) uint64 {
		r := uint64(1)
		for i := 1; i <= k; i++ {
			r = r * uint64(n-k+i) / uint64(i)
		}
		return r
	}
	for voters := from; voters <= to; voters++ {
		for _, workers := range []int{1, 2} {
			for _, sym := range []bool{false, true} {
				m, err := NewActorModel(voterSpec(false), ActorOptions{N: voters + 1, Symmetry: sym})
				if err != nil {
					t.Fatal(err)
				}
				res, err := NewChecker(m).Workers(workers).Run(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				want := binom(voters+4, 4)
				if !sym {
					want = 1
					for range voters {
						want *= 5
					}
				}
				if res.Unique != want || !res.Completed() || res.Depth != 2*voters {
					t.Fatalf("%d voters, symmetry=%v, workers=%d: %d unique to depth %d (%v), want %d", voters, sym, workers, res.Unique, res.Depth, res.Stop, want)
				}
			}
		}
	}
}

func TestSymmetryErrors(t *testing.T) {
	spec := node.Spec{Name: "gossip", New: func() node.Service { return &gossipSvc{} }, Messages: []node.Message{gossip{}}}
	for _, tc := range []struct {
		spec node.Spec
		n    int
	}{
		{spec, 3},             // declares nothing
		{voterSpec(true), 3},  // a group of one
		{voterSpec(false), 2}, // one voter: a group of one
	} {
		_, err := NewActorModel(tc.spec, ActorOptions{N: tc.n, Symmetry: true})
		if !errors.Is(err, ErrNoSymmetry) || !errors.Is(err, ErrActorModel) {
			t.Fatalf("%s with %d nodes: %v", tc.spec.Name, tc.n, err)
		}
	}
	m, err := NewActorModel(voterSpec(false), ActorOptions{N: 4, Symmetry: true})
	if err != nil || fmt.Sprint(m.SymmetryGroups()) != "[[n2 n3 n4]]" {
		t.Fatalf("groups %v, %v", m.SymmetryGroups(), err)
	}
}

// TestSymmetryPaxosExactOrbits measures how canonical the sorted form is on
// Paxos (members 1..4, n1 proposing, acceptors n2..n4 a group): it
// enumerates every state to depth 7 without symmetry (1,513), names each
// state's orbit by the least fingerprint over all 3! renamings of the group
// (the n! definition, independent of the signatures), and compares the
// number of orbits (541) with the states the symmetric search keeps. Equal
// counts mean the signatures never tied in a way that split an orbit here.
// TestSymmetryPaxosExactOrbitsDepth8 (symmetry_long_test.go) goes a level
// deeper (3,209 states, 1,073 orbits), twice as many.
func TestSymmetryPaxosExactOrbits(t *testing.T) { checkPaxosExactOrbits(t, 7, 1513, 541) }

// checkPaxosExactOrbits is TestSymmetryPaxosExactOrbits to depth, where
// there are states states in orbits orbits.
func checkPaxosExactOrbits(t *testing.T, depth, states, orbitCount int) {
	build := func(sym bool) *ActorModel {
		opts := paxos.Options{Members: []node.ID{1, 2, 3, 4}, Proposers: []node.ID{1}}
		m, err := NewActorModel(paxos.NewSpec(opts), ActorOptions{N: 4, Symmetry: sym,
			Workload: func(id node.ID, restart bool) []node.Message {
				if id != 1 {
					return nil
				}
				return []node.Message{paxos.Propose{Value: paxos.ValueOf(id)}}
			}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain, sym := build(false), build(true)
	group := sym.sym.group
	var perms []map[node.ID]node.ID
	for _, p := range [][3]node.ID{{2, 3, 4}, {2, 4, 3}, {3, 2, 4}, {3, 4, 2}, {4, 2, 3}, {4, 3, 2}} {
		perms = append(perms, map[node.ID]node.ID{2: p[0], 3: p[1], 4: p[2]})
	}
	orbits := map[node.Hash]bool{}
	seen := map[node.Hash]bool{plain.Start().fp: true}
	level := []*GlobalState{plain.Start()}
	for d := 0; ; d++ {
		for _, g := range level {
			var least node.Hash
			for k, p := range perms {
				h := plain.renamedFingerprint(g, func(id node.ID) node.ID {
					if r, ok := p[id]; ok {
						return r
					}
					return id
				}, group, nil)
				if k == 0 || cmpHash(h, least) < 0 {
					least = h
				}
			}
			orbits[least] = true
		}
		if d == depth {
			break
		}
		var next []*GlobalState
		for _, g := range level {
			for _, a := range plain.Actions(g, nil) {
				if s, ok := plain.Next(g, a.Act); ok && !seen[s.fp] {
					seen[s.fp] = true
					next = append(next, s)
				}
			}
		}
		level = next
	}
	res, err := NewChecker(sym).MaxDepth(depth).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != states || len(orbits) != orbitCount || res.Unique != uint64(len(orbits)) {
		t.Fatalf("%d states, %d orbits by renaming; the symmetric search kept %d", len(seen), len(orbits), res.Unique)
	}
}

// pick is the call that points the picker (node 1) at another node.
type pick struct{ To node.ID }

func (pick) MessageType() string { return "test.Pick" }

func (p pick) RenameIDs(rename func(node.ID) node.ID) (node.Message, bool) {
	to := rename(p.To)
	return pick{To: to}, to != p.To
}

// pickerSvc: node 1 forever re-points at one of the other nodes (declared
// calls), which do nothing and form a group. Every successor of a state
// where it points at a member points at another member: a renaming of it.
type pickerSvc struct{ Peer node.ID }

func (s *pickerSvc) Init(node.Env)                                 {}
func (s *pickerSvc) HandleTimer(node.Env, string)                  {}
func (s *pickerSvc) HandleTransportError(node.Env, node.ID)        {}
func (s *pickerSvc) HandleMessage(node.Env, node.ID, node.Message) {}
func (s *pickerSvc) HandleApp(_ node.Env, m node.Message)          { s.Peer = m.(pick).To }
func (s *pickerSvc) SymmetryGroups(ids []node.ID) [][]node.ID      { return [][]node.ID{ids[1:]} }
func (s *pickerSvc) AppCalls(self node.ID) []node.Message {
	if self != 1 {
		return nil
	}
	var out []node.Message
	for id := node.ID(2); id <= 3; id++ {
		if id != s.Peer {
			out = append(out, pick{To: id})
		}
	}
	return out
}
func (s *pickerSvc) RenameIDs(rename func(node.ID) node.ID) (node.Service, bool) {
	if s.Peer == node.None || rename(s.Peer) == s.Peer {
		return s, false
	}
	return &pickerSvc{Peer: rename(s.Peer)}, true
}

// TestSymmetryOrbitQuiescence: with symmetry, a state whose successors all
// lie in its own orbit counts as quiescent — the system can never leave the
// orbit — so a liveness property failing there (symmetric: it fails on the
// whole orbit) is reported, at the depth where the orbit is entered. Without
// symmetry the same livelock is a cycle of distinct states, never quiescent,
// and the exhaustive search reports nothing (random walks are the tool for
// it). The symmetric search reports more here, never less: its verdict is
// still certain.
func TestSymmetryOrbitQuiescence(t *testing.T) {
	spec := node.Spec{Name: "picker", New: func() node.Service { return &pickerSvc{} }, Messages: []node.Message{pick{}},
		Properties: []node.Property{node.Eventually("Settled", func(v node.View) error { return errors.New("never settles") })}}
	for _, sym := range []bool{false, true} {
		m, err := NewActorModel(spec, ActorOptions{N: 3, Symmetry: sym})
		if err != nil {
			t.Fatal(err)
		}
		res, err := NewChecker(m).Properties(m.Properties()...).Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%d states", res.Unique)
		for _, v := range res.Violations {
			got += fmt.Sprintf(", %s@%d", v.Property, v.Depth)
		}
		want := map[bool]string{false: "3 states", true: "2 states, Settled@1"}[sym]
		if got != want {
			t.Fatalf("symmetry=%v: %s, want %s", sym, got, want)
		}
	}
}
