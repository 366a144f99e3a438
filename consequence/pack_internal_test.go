package consequence

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// packModel is a configuration the packing tests explore.
type packModel struct {
	name     string
	m        *ActorModel
	maxDepth int
	// quickDepth is TestPackRoundTrip's depth: the least at which every
	// kind below is still taken, or maxDepth-2.
	quickDepth int
	// kinds are the actions (actionKind) the search must take.
	kinds []string
}

// packModels returns actor models with every fault kind between them:
// resets of both kinds (with and without stale connections), breaks,
// refused sends (Chord and Paxos do not use TrySend: trySvc does),
// datagrams with drops, and timers re-armed at different
// clocks (Paxos's randomised retries, Chord's periodic stabilisation).
func packModels(t testing.TB) []packModel {
	t.Helper()
	build := func(spec node.Spec, opts ActorOptions) *ActorModel {
		m, err := NewActorModel(spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	rt := func(node.ID, bool) []node.Message {
		return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
	}
	ch := func(node.ID, bool) []node.Message { return []node.Message{chord.JoinOverlay{Bootstrap: 1}} }
	px := func(id node.ID, _ bool) []node.Message {
		return []node.Message{paxos.Propose{Value: paxos.ValueOf(id)}}
	}
	try := node.Spec{Name: "try", New: func() node.Service { return &trySvc{} }, Messages: []node.Message{gossip{}}}
	px1 := func(id node.ID, _ bool) []node.Message {
		if id != 1 {
			return nil
		}
		return []node.Message{paxos.Propose{Value: paxos.ValueOf(id)}}
	}
	gsp := node.Spec{Name: "gossip", New: func() node.Service { return &gossipSvc{} }, Messages: []node.Message{gossip{}}}
	return []packModel{
		{"randtree-both", build(randtree.NewSpec(randtree.DefaultOptions()), ActorOptions{N: 4, Workload: rt,
			Faults: Faults{Resets: 1, ResetKinds: ResetBoth, StaleConnections: true, Breaks: 1}}), 5, 3,
			[]string{"deliver", "transport-error", "app", "timer", "reset rst", "reset silent", "break"}},
		{"chord-baseline", build(chord.NewSpec(chord.DefaultOptions()), ActorOptions{N: 5, Seed: 1, Workload: ch,
			Faults: Faults{Resets: 1, SilentResets: true, Breaks: 1, Refusals: 1}}), 5, 3,
			[]string{"deliver", "app", "timer", "reset silent", "break"}},
		{"paxos-bugs", build(paxos.NewSpec(paxos.Options{}.WithBugs()), ActorOptions{N: 3, Workload: px,
			Faults: Faults{Resets: 1, Breaks: 1, Refusals: 1}}), 4, 2,
			[]string{"deliver", "app", "timer", "reset rst", "break"}},
		{"gossip-datagrams", build(gsp, ActorOptions{N: 3, Faults: Faults{Resets: 1, SilentResets: true, Breaks: 1, Drops: 2}}), 5, 3,
			[]string{"deliver", "timer", "deliver-datagram", "drop-datagram", "reset silent", "break"}},
		{"paxos-symmetric", build(paxos.NewSpec(paxos.Options{Members: []node.ID{1, 2, 3, 4}, Proposers: []node.ID{1}}),
			ActorOptions{N: 4, Symmetry: true, Workload: px1, Faults: Faults{Resets: 1}}), 6, 3,
			[]string{"deliver", "app", "reset rst"}},
		{"try-refusals", build(try, ActorOptions{N: 3, Faults: Faults{Resets: 1, ResetKinds: ResetBoth, StaleConnections: true, Breaks: 1, Refusals: 2}}), 4, 2,
			[]string{"deliver", "timer", "refuse-send", "reset silent", "reset rst", "break"}},
	}
}

// packedLevel is a BFS level kept as the engine will keep it: entry i is
// words[off[i]:off[i+1]] with fingerprint fps[i].
type packedLevel struct {
	words []uint32
	off   []uint32
	fps   []node.Hash
}

func (l *packedLevel) add(p Packer[*GlobalState], g *GlobalState) {
	if len(l.off) == 0 {
		l.off = append(l.off, 0)
	}
	l.words = p.Pack(l.words, g)
	l.off = append(l.off, uint32(len(l.words)))
	l.fps = append(l.fps, g.m.Fingerprint(g))
}

// push appends an entry packed elsewhere.
func (l *packedLevel) push(e []uint32, fp node.Hash) {
	if len(l.off) == 0 {
		l.off = append(l.off, 0)
	}
	l.words = append(l.words, e...)
	l.off = append(l.off, uint32(len(l.words)))
	l.fps = append(l.fps, fp)
}

func (l *packedLevel) len() int { return len(l.fps) }

func (l *packedLevel) entry(i int) []uint32 { return l.words[l.off[i]:l.off[i+1]] }

// packedResult is what packedBFS found.
type packedResult struct {
	unique      uint64
	depthCounts []uint64
	entryWords  uint64 // words of every entry packed
	kinds       map[string]int
}

// packedBFS explores m breadth-first to maxDepth keeping each level packed
// with one Packer, as the engine is to do: a frontier state is unpacked to
// be expanded and dropped afterwards. Each level is expanded by workers
// goroutines, each taking a contiguous part of the frontier and packing
// its successors into its own level, merged in frontier order, so the
// result does not depend on workers. With check, every new state also
// goes through checkRoundTrip.
func packedBFS(t testing.TB, m *ActorModel, maxDepth, workers int, check bool) packedResult {
	t.Helper()
	return packedBFSFunc(t, m, m.NewPacker(), maxDepth, 1<<62, workers, check, nil)
}

// packedBFSFunc is packedBFS with packer p, stopping also once maxStates
// are known (the last level cut short), and calling onLevel, if set, after
// each level is merged, with the level expanded and the new one.
func packedBFSFunc(t testing.TB, m *ActorModel, p Packer[*GlobalState], maxDepth, maxStates, workers int, check bool,
	onLevel func(depth int, cur, next *packedLevel, unique uint64)) packedResult {
	t.Helper()
	seen := map[node.Hash]bool{}
	var cur packedLevel
	for _, g := range m.Init() {
		if fp := m.Fingerprint(g); !seen[fp] {
			seen[fp] = true
			if check {
				checkRoundTrip(t, p, g)
			}
			cur.add(p, g)
		}
	}
	res := packedResult{unique: uint64(cur.len()), depthCounts: []uint64{uint64(cur.len())}, entryWords: uint64(len(cur.words)), kinds: map[string]int{}}
	for depth := 0; depth < maxDepth && cur.len() > 0; depth++ {
		parts := make([]packedLevel, workers)
		kinds := make([]map[string]int, workers)
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := cur.len()*w/workers, cur.len()*(w+1)/workers
			wg.Add(1)
			go func() {
				defer wg.Done()
				var acts []Action[ActorAction]
				kinds[w] = map[string]int{}
				for i := lo; i < hi; i++ {
					g := p.Unpack(cur.entry(i), cur.fps[i])
					acts = m.Actions(g, acts[:0])
					for _, a := range acts {
						s, ok := m.Next(g, a.Act)
						if !ok {
							continue
						}
						kinds[w][actionKind(a.Act)]++
						parts[w].add(p, s)
						if check {
							checkRoundTrip(t, p, s)
						}
					}
				}
			}()
		}
		wg.Wait()
		for _, k := range kinds {
			for name, n := range k {
				res.kinds[name] += n
			}
		}
		var next packedLevel
		for _, part := range parts {
			for i := range part.len() {
				if fp := part.fps[i]; !seen[fp] && res.unique+uint64(next.len()) < uint64(maxStates) {
					seen[fp] = true
					next.push(part.entry(i), fp)
				}
			}
		}
		if next.len() == 0 {
			break
		}
		res.unique += uint64(next.len())
		if onLevel != nil {
			onLevel(depth+1, &cur, &next, res.unique)
		}
		res.depthCounts = append(res.depthCounts, uint64(next.len()))
		res.entryWords += uint64(len(next.words))
		cur = next
		if res.unique >= uint64(maxStates) {
			break
		}
	}
	return res
}

// actionKind names a's kind as reports do ("reset silent" and "reset
// rst" apart).
func actionKind(a ActorAction) string {
	switch a.Kind {
	case ActDeliver:
		if a.Msg == nil {
			return "transport-error"
		}
		return "deliver"
	case ActReset:
		if a.Silent {
			return "reset silent"
		}
		return "reset rst"
	}
	f := strings.Fields(a.String())
	return f[1]
}

// checkRoundTrip fails t unless the state Unpack rebuilds from g's words
// is g to every observer: the same fingerprint (kept and from scratch),
// the same rendering, clock and connection caches, the same actions in
// the same order, the same successors (by fingerprint), and the same words
// when packed again. Safe for concurrent use.
func checkRoundTrip(t testing.TB, p Packer[*GlobalState], g *GlobalState) {
	words := p.Pack(nil, g)
	m := g.m
	u := p.Unpack(words, m.Fingerprint(g))
	switch {
	case u.Fingerprint() != g.Fingerprint() || u.fingerprint() != g.fp || m.Fingerprint(u) != m.Fingerprint(g):
		t.Errorf("fingerprint %v, from scratch %v, want %v\n%v", u.Fingerprint(), u.fingerprint(), g.fp, g)
		return
	case u.String() != g.String():
		t.Errorf("unpacked\n%v\nwant\n%v", u, g)
		return
	case u.hasFirst != g.hasFirst || !u.first.Equal(g.first) || u.clockH != g.clockH ||
		u.connsH != g.connsH || u.staleH != g.staleH || u.Refusals() != g.Refusals() || u.Drops() != g.Drops():
		t.Errorf("caches differ after unpacking\n%v", g)
		return
	case !slices.Equal(p.Pack(nil, u), words):
		t.Errorf("repacking gives other words\n%v", g)
		return
	}
	ga, ua := m.Actions(g, nil), m.Actions(u, nil)
	if len(ga) != len(ua) {
		t.Errorf("%d actions after unpacking, want %d\n%v", len(ua), len(ga), g)
		return
	}
	for k := range ga {
		if actionString(ga[k]) != actionString(ua[k]) {
			t.Errorf("action %d: %s after unpacking, want %s", k, actionString(ua[k]), actionString(ga[k]))
			return
		}
		gs, gok := m.Next(g, ga[k].Act)
		us, uok := m.Next(u, ua[k].Act)
		if gok != uok || (gok && (gs.fp != us.fp || us.fp != us.fingerprint())) {
			t.Errorf("successor under %v differs after unpacking", ga[k].Act)
			return
		}
	}
}

// actionString renders an action with everything that identifies it.
func actionString(a Action[ActorAction]) string {
	return fmt.Sprintf("%d %v %v %v %v %q %v %v", a.Node, a.Local, a.Fault, a.Act.Kind, a.Act.Peer, a.Act.Timer, a.Act.Silent, a.Act) +
		fmt.Sprintf(" %#v", a.Act.Msg)
}

// TestPackRoundTrip explores every packModels configuration with packed
// levels and checks every unique state's round trip (checkRoundTrip), and
// that the packed search finds exactly the states, level by level, that
// the Checker finds. It explores to packModel.quickDepth, two levels less
// than packModel.maxDepth, three for the symmetric Paxos, whose states cost
// the most and which still takes every kind of its c.kinds a level
// earlier (about 810 states in all; every action kind of c.kinds is
// taken); TestPackRoundTripFull (make test-long) explores to maxDepth.
func TestPackRoundTrip(t *testing.T) { checkPackRoundTrip(t, true) }

// checkPackRoundTrip is TestPackRoundTrip to depth packModel.quickDepth
// (quick) or packModel.maxDepth.
func checkPackRoundTrip(t *testing.T, quick bool) {
	for _, c := range packModels(t) {
		t.Run(c.name, func(t *testing.T) {
			depth := c.maxDepth
			if quick {
				depth = c.quickDepth
			}
			got := packedBFS(t, c.m, depth, 1, true)
			res, err := NewChecker(c.m).Strategy(BFS).MaxDepth(depth).Workers(1).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got.unique != res.Unique || !slices.Equal(got.depthCounts, res.DepthCounts) {
				t.Fatalf("packed BFS: %d unique %v, Checker: %d unique %v", got.unique, got.depthCounts, res.Unique, res.DepthCounts)
			}
			t.Logf("%d unique states to depth %d, %.2f words per entry; actions taken %v", got.unique, depth, float64(got.entryWords)/float64(got.unique), got.kinds)
			for _, k := range c.kinds {
				if got.kinds[k] == 0 {
					t.Errorf("no %q action taken", k)
				}
			}
		})
	}
}

// TestPackRandomWalks extends the round trip past BFS's first levels:
// random walks (seeded; the seed is printed) from each packModels start
// state, every state reached by Next from an unpacked parent (so with
// interning at creation), each checked with checkRoundTrip and for its
// incremental fingerprint; a walk goes on from the unpacked state, as a
// packed search does. It takes 4 walks of 80 steps per configuration
// (up to 1,920 states checked in all, most of them deeper than the round
// trip's levels); TestPackRandomWalksFull (make test-long) takes 40.
func TestPackRandomWalks(t *testing.T) { checkPackRandomWalks(t, 17, 4, 80) }

// checkPackRandomWalks is TestPackRandomWalks with walks walks of steps
// steps per configuration, drawn from seed.
func checkPackRandomWalks(t *testing.T, seed uint64, walks, steps int) {
	t.Logf("seed %d", seed)
	for _, c := range packModels(t) {
		t.Run(c.name, func(t *testing.T) {
			rng := mrand.New(mrand.NewPCG(seed, 1))
			p := c.m.NewPacker()
			for range walks {
				g := p.Unpack(p.Pack(nil, c.m.Start()), c.m.Start().fp)
				for range steps {
					acts := c.m.Actions(g, nil)
					if len(acts) == 0 {
						break
					}
					next, ok := c.m.Next(g, acts[rng.IntN(len(acts))].Act)
					if !ok {
						continue
					}
					if next.fp != next.fingerprint() {
						t.Fatalf("incremental fingerprint %v, from scratch %v", next.fp, next.fingerprint())
					}
					checkRoundTrip(t, p, next)
					if t.Failed() {
						return
					}
					g = p.Unpack(p.Pack(nil, next), next.fp)
				}
			}
		})
	}
}

// TestPackConcurrent runs the packed search with several goroutines
// interning into one packer at once (run it with -race), and checks that
// the counts do not depend on their number. It explores Chord and Paxos
// two levels less than packModel.maxDepth; TestPackConcurrentFull (make
// test-long) one level less.
func TestPackConcurrent(t *testing.T) { checkPackConcurrent(t, 2) }

// checkPackConcurrent is TestPackConcurrent to depth packModel.maxDepth-less.
func checkPackConcurrent(t *testing.T, less int) {
	for _, c := range packModels(t)[1:3] {
		t.Run(c.name, func(t *testing.T) {
			one := packedBFS(t, c.m, c.maxDepth-less, 1, false)
			for _, workers := range []int{2, 4} {
				got := packedBFS(t, c.m, c.maxDepth-less, workers, workers == 2)
				if got.unique != one.unique || !slices.Equal(got.depthCounts, one.depthCounts) {
					t.Fatalf("%d workers: %d unique %v, one worker: %d unique %v", workers, got.unique, got.depthCounts, one.unique, one.depthCounts)
				}
			}
		})
	}
}

// TestInternNodeKey shows that the content key, not the local fingerprint,
// identifies a node state: two node states that differ only in the node's
// clock, or only in a timer's deadline, have the same local fingerprint
// and must get different handles; an equal copy gets the same one.
func TestInternNodeKey(t *testing.T) {
	m := packModels(t)[2].m // Paxos: a proposer arms a retry timer
	n := nodeWithTimer(t, m)
	withNow := *n
	withNow.now = n.now.Add(time.Millisecond)
	withDeadline := *n
	withDeadline.st.Timers = slices.Clone(n.st.Timers)
	withDeadline.st.Timers[0].At = n.st.Timers[0].At.Add(time.Millisecond)
	same := *n
	same.st.Timers = slices.Clone(n.st.Timers)
	for _, x := range []*actorNode{&withNow, &withDeadline, &same} {
		if err := m.hashNode(x); err != nil {
			t.Fatal(err)
		}
		if x.hash != n.hash {
			t.Fatal("the local fingerprint moved: the test no longer shows anything")
		}
	}
	in := newInterner()
	h := in.nodeHandle(0, n)
	if in.nodeHandle(0, &withNow) == h {
		t.Error("node states differing only in their clock share a handle")
	}
	if in.nodeHandle(0, &withDeadline) == h {
		t.Error("node states differing only in a timer's deadline share a handle")
	}
	if in.nodeHandle(0, &same) != h {
		t.Error("equal node states got different handles")
	}
	if in.nodeHandle(1, n) == h {
		t.Error("the same node state at another node index shares a handle")
	}
	if in.nodeTab.len() != 4 {
		t.Errorf("%d node states interned, want 4", in.nodeTab.len())
	}
}

// nodeWithTimer returns the first node state with a timer met along the
// path that always takes m's first local action.
func nodeWithTimer(t *testing.T, m *ActorModel) *actorNode {
	t.Helper()
	g := m.Start()
	for range 100 {
		for _, n := range g.nodes {
			if len(n.st.Timers) > 0 {
				return n
			}
		}
		acts := m.Actions(g, nil)
		k := slices.IndexFunc(acts, func(a Action[ActorAction]) bool { return a.Local && !a.Fault })
		if k < 0 {
			break
		}
		g, _ = m.Next(g, acts[k].Act)
	}
	t.Fatal("no node state with a timer")
	return nil
}

// TestInternConcurrent interns overlapping contents from several
// goroutines (run it with -race): each content gets one handle and one
// canonical value whoever interns it first, and values read by handle
// without locks are the ones interned.
func TestInternConcurrent(t *testing.T) {
	const goroutines, keys = 4, 4999 // prime: every goroutine's walk visits every key
	var tab internTable[*int]
	handles := make([][]uint32, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			handles[g] = make([]uint32, keys)
			for k := range keys {
				// Each goroutine walks the keys in its own order.
				key := (k*(2*g+1) + g*977) % keys
				v := key
				h, canon, _ := tab.intern(node.Hash{Hi: uint64(key) * 0x9E3779B97F4A7C15, Lo: uint64(key)}, &v, nil)
				if *canon != key {
					t.Errorf("key %d: canonical value %d", key, *canon)
				}
				if got, ok := tab.get(h); !ok || *got != key {
					t.Errorf("key %d: handle %#x reads another value", key, h)
				}
				handles[g][key] = h
			}
		}()
	}
	wg.Wait()
	for g := 1; g < goroutines; g++ {
		if !slices.Equal(handles[g], handles[0]) {
			t.Fatalf("goroutine %d got other handles than goroutine 0", g)
		}
	}
	if tab.len() != keys {
		t.Fatalf("%d values, want %d", tab.len(), keys)
	}
}

// TestDetach checks that a detached state is the same state, and that its
// successors no longer grow the search's intern tables.
func TestDetach(t *testing.T) {
	m := packModels(t)[1].m
	p := m.NewPacker()
	u := p.Unpack(p.Pack(nil, m.Start()), m.Start().fp)
	d := p.(Detacher[*GlobalState]).Detach(u)
	if d.in != nil || d.fp != u.fp || d.String() != u.String() {
		t.Fatal("Detach changed the state or kept the interner")
	}
	in := u.in
	before := in.nodeTab.len() + in.chanTab.len() + in.pairTab.len()
	for _, a := range m.Actions(d, nil) {
		if s, ok := m.Next(d, a.Act); ok && s.in != nil {
			t.Fatalf("a successor of a detached state under %v has the interner", a.Act)
		}
	}
	if after := in.nodeTab.len() + in.chanTab.len() + in.pairTab.len(); after != before {
		t.Errorf("successors of a detached state interned %d parts", after-before)
	}
	for _, a := range m.Actions(u, nil) {
		m.Next(u, a.Act)
	}
	if after := in.nodeTab.len() + in.chanTab.len() + in.pairTab.len(); after == before {
		t.Error("successors of the attached state interned nothing: the test shows nothing")
	}
}

// TestUnpackBadWords checks that words no Pack produced make Unpack panic
// with a clear message rather than rebuild a wrong state.
func TestUnpackBadWords(t *testing.T) {
	m := packModels(t)[0].m
	p := m.NewPacker()
	good := p.Pack(nil, m.Start())
	for name, w := range map[string][]uint32{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"too long":  append(slices.Clone(good), 0),
		"bad node":  append(append(slices.Clone(good[:2]), 12345), good[3:]...),
	} {
		func() {
			defer func() {
				r := recover()
				if err, ok := r.(error); !ok || !errorsHasPrefix(err, "consequence: unpacking a frontier entry") {
					t.Errorf("%s: recovered %v, want an unpacking error", name, r)
				}
			}()
			p.Unpack(w, m.Start().fp)
		}()
	}
}

func errorsHasPrefix(err error, prefix string) bool {
	return len(err.Error()) >= len(prefix) && err.Error()[:len(prefix)] == prefix
}
