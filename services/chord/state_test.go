package chord

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// sampleState is a joined node with every field set.
func sampleState() *State {
	s := newState(byID())
	s.Status = StatusJoined
	s.Bootstrap = 1
	s.Pred = 20
	s.Successors = ids(40, 50, 1)
	s.initFingers(30)
	for _, x := range []node.ID{40, 50, 1, 20} {
		s.learn(30, x)
	}
	return s
}

func sampleNodeState() node.State {
	return node.State{
		Service: sampleState(),
		Timers:  []node.Timer{{Name: TimerStabilize, At: time.Unix(5, 0).UTC()}},
		Rand:    node.NewRand(7, 6),
	}
}

func TestLearnBuildsTheTable(t *testing.T) {
	s := sampleState()
	if got, want := s.String(), "joined pred=n20 successors=[n40 n50 n1 n20] fingers=[n40 n50 n1] bootstrap=n1"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// Fingers of n30 on a 64-ring start at 31, 32, 34, 38, 46, 62: the
	// first known node at or after each, before n30 itself.
	if want := ids(40, 40, 40, 40, 50, 1); !slices.Equal(s.Fingers, want) {
		t.Errorf("fingers %v, want %v", s.Fingers, want)
	}
	// A nearer node displaces the farthest successor and takes over the
	// fingers it is better for.
	s.learn(30, 35)
	if want := ids(35, 40, 50, 1); !slices.Equal(s.Successors, want) {
		t.Errorf("successors %v, want %v", s.Successors, want)
	}
	if want := ids(35, 35, 35, 40, 50, 1); !slices.Equal(s.Fingers, want) {
		t.Errorf("fingers %v, want %v", s.Fingers, want)
	}
	// Routing: the closest known node before a key.
	for _, tc := range []struct {
		key  uint64
		want node.ID
	}{{36, 35}, {45, 40}, {0, 50}, {10, 1}, {31, node.None}, {30, 1}} {
		if got := s.closestPreceding(30, tc.key); got != tc.want {
			t.Errorf("closestPreceding(%d) = %v, want %v", tc.key, got, tc.want)
		}
	}
	// forget: the predecessor is cleared, fingers fall back to the next
	// larger finger, and the list is refilled from the fingers.
	s.Pred = 35
	if !s.forget(30, 35) {
		t.Error("forget did not report the predecessor")
	}
	if s.Pred != node.None {
		t.Errorf("pred %v after forgetting it", s.Pred)
	}
	if want := ids(40, 40, 40, 40, 50, 1); !slices.Equal(s.Fingers, want) {
		t.Errorf("fingers after forget %v, want %v", s.Fingers, want)
	}
	if want := ids(40, 50, 1); !slices.Equal(s.Successors, want) {
		t.Errorf("successors after forget %v, want %v", s.Successors, want)
	}
	for _, x := range []node.ID{40, 50, 1} {
		s.forget(30, x)
	}
	if s.Successors != nil || s.successor(30) != 30 || slices.ContainsFunc(s.Fingers, func(f node.ID) bool { return f != 30 }) {
		t.Errorf("forgetting everyone: %v", s)
	}
}

func TestRing(t *testing.T) {
	r := newRing(byID())
	for _, tc := range []struct {
		x, a, b     uint64
		open, right bool
	}{
		{5, 1, 10, true, true},
		{10, 1, 10, false, true},
		{1, 1, 10, false, false},
		{0, 60, 2, true, true}, // wraps
		{61, 60, 2, true, true},
		{30, 60, 2, false, false},
		{7, 7, 7, false, true}, // (a, a) is the ring but a; (a, a] all of it
		{8, 7, 7, true, true},
		{70, 1, 10, true, true}, // identifiers are taken modulo 2^bits
	} {
		if got := r.between(tc.x, tc.a, tc.b); got != tc.open {
			t.Errorf("between(%d, %d, %d) = %v", tc.x, tc.a, tc.b, got)
		}
		if got := r.betweenIncl(tc.x, tc.a, tc.b); got != tc.right {
			t.Errorf("betweenIncl(%d, %d, %d) = %v", tc.x, tc.a, tc.b, got)
		}
	}
	if got := r.fingerStart(62, 3); got != 6 {
		t.Errorf("fingerStart(62, 3) = %d", got)
	}
	full := newRing(Options{Bits: 64})
	if full.mask != ^uint64(0) || full.fingerStart(^uint64(0), 63) != 1<<63-1 {
		t.Errorf("64-bit ring: mask %x", full.mask)
	}
	// Hashed placement scatters consecutive IDs and stays within the ring.
	h := newRing(DefaultOptions())
	seen := map[uint64]bool{}
	ordered := true
	for id := node.ID(1); id <= 100; id++ {
		p := h.pos(id)
		if p > h.mask || seen[p] {
			t.Fatalf("position %d of %v out of range or repeated", p, id)
		}
		seen[p] = true
		if id > 1 && p < h.pos(id-1) {
			ordered = false
		}
	}
	if ordered {
		t.Error("hashed positions follow ID order")
	}
}

func TestCloneIsIndependent(t *testing.T) {
	orig := sampleState()
	want := orig.String()
	c := orig.Clone().(*State)
	if c.String() != want || c.opts != orig.opts || c.ring != orig.ring {
		t.Fatalf("clone differs: %v", c)
	}
	c.Successors[0] = 99
	c.Fingers[0] = 98
	c.learn(30, 31)
	c.forget(30, 50)
	if got := orig.String(); got != want {
		t.Fatalf("original changed by mutating its clone:\n got %s\nwant %s", got, want)
	}
	// Growing the successor list of a clone must not spill into its
	// fingers.
	c2 := orig.Clone().(*State)
	c2.Successors = ids(40)
	c2.addSuccessor(30, 45)
	c2.addSuccessor(30, 46)
	if !slices.Equal(c2.Fingers, orig.Fingers) {
		t.Fatalf("growing a cloned list clobbered the fingers: %v", c2.Fingers)
	}
	empty := newState(DefaultOptions()).Clone().(*State)
	if empty.Successors != nil || empty.Fingers != nil {
		t.Fatalf("clone of an empty state must keep nil tables: %#v", empty)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	spec := NewSpec(byID().Fixed())
	st := sampleNodeState()
	back, _ := servicetest.CheckpointRoundTrip(t, spec, st)
	bs := back.Service.(*State)
	// The configuration is not state: it comes from the factory.
	if bs.opts != byID().Fixed() || bs.ring != newRing(byID()) {
		t.Fatalf("decoded state lost the factory's options")
	}
}

func TestOptions(t *testing.T) {
	var o Options
	for _, name := range FixNames() {
		if err := o.EnableFix("fix-" + name); err != nil {
			t.Fatal(err)
		}
	}
	if o != (Options{}).Fixed() {
		t.Errorf("enabling every fix by name: %+v", o)
	}
	if err := o.EnableFix("bogus"); err == nil || !strings.HasPrefix(err.Error(), "chord: ") {
		t.Errorf("unknown fix: %v", err)
	}
	var all Options
	if err := all.EnableFix("all"); err != nil || all != (Options{}).Fixed() {
		t.Errorf("all: %+v %v", all, err)
	}
	d := DefaultOptions()
	if len(d.Fixes()) != 0 || (Options{}).withDefaults() != d {
		t.Errorf("defaults: %+v", d)
	}
	if got := AllFixes().String(); got != "bits=32 placement=hashed successors=4 join-retry=2s stabilize=1s fix-fingers=2s recovery=30s fixes=[self-predecessor node-ordering]" {
		t.Errorf("String: %s", got)
	}
	s := NewSpec(Options{Bits: 65, MaxSuccessors: -1, Placement: 9}).New().(*State)
	if s.opts.Bits != DefaultBits || s.opts.MaxSuccessors != DefaultMaxSuccessors || s.opts.Placement != PlaceHashed {
		t.Errorf("NewSpec did not default out-of-range options: %+v", s.opts)
	}
	if p, err := ParsePlacement("by-id"); err != nil || p != PlaceByID || p.String() != "by-id" {
		t.Errorf("ParsePlacement(by-id) = %v, %v", p, err)
	}
	if _, err := ParsePlacement("sorted"); err == nil || !strings.HasPrefix(err.Error(), "chord: ") {
		t.Errorf("ParsePlacement(sorted): %v", err)
	}
}

func TestAppCalls(t *testing.T) {
	s := newState(DefaultOptions())
	if calls := s.AppCalls(3); calls != nil {
		t.Errorf("fresh node declares %v", calls)
	}
	if calls := s.RestartCalls(3); calls != nil {
		t.Errorf("a node that never joined restarts with %v", calls)
	}
	s.Bootstrap = 1
	if calls := s.AppCalls(3); len(calls) != 1 || calls[0] != (JoinOverlay{Bootstrap: 1}) {
		t.Errorf("init node with a bootstrap declares %v", calls)
	}
	s.Status = StatusJoined
	if calls := s.AppCalls(3); calls != nil {
		t.Errorf("joined node declares %v", calls)
	}
	if calls := s.RestartCalls(3); len(calls) != 1 || calls[0] != (JoinOverlay{Bootstrap: 1}) {
		t.Errorf("restart calls %v", calls)
	}
}

// TestRandomRuns drives a few nodes through random events — deliveries,
// timers, joins, silent and RST resets, broken connections and forged
// messages — and checks at every step what must hold whatever the
// protocol's bugs: the routing table stays in canonical form, the state
// survives a checkpoint round trip with the same hash, a Copy stepped on
// its own leaves the original untouched; and with both corrections the
// safety properties hold in every state. Run r uses seed r (printed on
// failure).
func TestRandomRuns(t *testing.T) {
	const runs, steps = 400, 200
	violated := map[string]int{}
	for run := range runs {
		rng := rand.New(rand.NewPCG(uint64(run), 2))
		opts := byID()
		opts.MaxSuccessors = 1 + rng.IntN(4)
		fixed := run%2 == 1
		if fixed {
			opts = opts.Fixed()
		}
		w := newWorld(t, opts, 2+rng.IntN(5), uint64(run))
		// The copy and checkpoint checks are the expensive part; a
		// sample of the runs makes them.
		w.deep = run%8 == 0
		for range steps {
			w.randomStep(rng)
			for _, p := range SafetyProperties() {
				if err := p.Check(w); err != nil {
					if fixed {
						t.Fatalf("run=%d (seed %d): %s violated with both corrections: %v", run, run, p.Name, err)
					}
					violated[p.Name]++
				}
			}
		}
	}
	// The paper's code does reach both inconsistencies under random
	// events; without that the check above would prove nothing about the
	// corrections.
	for _, p := range SafetyProperties() {
		if violated[p.Name] == 0 {
			t.Errorf("%s never violated in the runs of the paper's code", p.Name)
		}
	}
	t.Logf("violating states in the runs of the paper's code: %v", violated)
}

// channel is a directed pair of nodes.
type channel struct{ from, to node.ID }

// world is a minimal random driver over node.Cores, independent of the
// script harness. It is a node.View of its nodes.
type world struct {
	t      *testing.T
	spec   node.Spec
	ids    []node.ID
	cores  map[node.ID]*node.Core
	queues map[channel][]node.Message
	now    time.Time
	// deep adds, at every step, the copy and checkpoint round-trip checks.
	deep bool
}

func newWorld(t *testing.T, opts Options, n int, seed uint64) *world {
	w := &world{t: t, spec: NewSpec(opts), cores: map[node.ID]*node.Core{},
		queues: map[channel][]node.Message{}, now: time.Unix(0, 0).UTC()}
	for i := range n {
		id := node.ID(7*i + 3)
		c, err := node.NewCore(node.CoreConfig{ID: id, Factory: w.spec.New, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		w.ids = append(w.ids, id)
		w.cores[id] = c
		w.step(c, node.Event{Kind: node.EventInit})
	}
	return w
}

func (w *world) Nodes() []node.ID { return w.ids }

func (w *world) Service(id node.ID) node.Service {
	if c, ok := w.cores[id]; ok {
		return c.Service()
	}
	return nil
}

func (w *world) TimerScheduled(id node.ID, name string) bool {
	_, ok := w.cores[id].State().TimerAt(name)
	return ok
}

func (w *world) randomID(rng *rand.Rand) node.ID {
	if rng.IntN(10) == 0 {
		return node.ID(rng.IntN(64)) // None, or a node that does not exist
	}
	return w.ids[rng.IntN(len(w.ids))]
}

func (w *world) randomStep(rng *rand.Rand) {
	var chs []channel
	for ch, q := range w.queues {
		if len(q) > 0 {
			chs = append(chs, ch)
		}
	}
	slices.SortFunc(chs, func(a, b channel) int {
		if a.from != b.from {
			return cmp.Compare(a.from, b.from)
		}
		return cmp.Compare(a.to, b.to)
	})
	id := w.ids[rng.IntN(len(w.ids))]
	c := w.cores[id]
	switch k := rng.IntN(40); {
	case k < 24 && len(chs) > 0:
		ch := chs[rng.IntN(len(chs))]
		msg := w.queues[ch][0]
		w.queues[ch] = w.queues[ch][1:]
		w.step(w.cores[ch.to], node.Event{Kind: node.EventMessage, From: ch.from, Msg: msg})
	case k < 30:
		if ts := c.State().Timers; len(ts) > 0 {
			w.step(c, node.Event{Kind: node.EventTimer, Timer: ts[rng.IntN(len(ts))].Name})
		}
	case k < 34:
		w.step(c, node.Event{Kind: node.EventApp, Msg: JoinOverlay{Bootstrap: w.randomID(rng)}})
	case k < 35:
		w.step(c, node.Event{Kind: node.EventReset})
	case k < 36:
		w.step(c, node.Event{Kind: node.EventReset})
		for _, p := range w.ids {
			if p != id {
				delete(w.queues, channel{id, p})
				delete(w.queues, channel{p, id})
				w.step(w.cores[p], node.Event{Kind: node.EventTransportError, Peer: id})
			}
		}
	case k < 38:
		w.step(c, node.Event{Kind: node.EventTransportError, Peer: w.randomID(rng) | 1})
	default:
		// A forged message: any type, arbitrary keys and lists.
		var list []node.ID
		for range rng.IntN(7) {
			list = append(list, w.randomID(rng))
		}
		msgs := []node.Message{
			FindPred{Key: rng.Uint64(), Who: w.randomID(rng)},
			FindPredReply{Key: c.Service().(*State).RingID(id), Successors: list},
			FindPredReply{Key: rng.Uint64(), Successors: list},
			GetPred{},
			GetPredReply{Pred: w.randomID(rng), Successors: list},
			UpdatePred{},
		}
		from := w.randomID(rng) | 1
		w.step(c, node.Event{Kind: node.EventMessage, From: from, Msg: msgs[rng.IntN(len(msgs))]})
	}
}

func (w *world) step(c *node.Core, ev node.Event) {
	t := w.t
	t.Helper()
	w.now = w.now.Add(time.Second)
	ev.At = w.now
	if w.deep && c.Started() && ev.Kind != node.EventInit {
		// A copy stepped alone must not disturb the original.
		before, err := c.Hash()
		if err != nil {
			t.Fatal(err)
		}
		cp, err := c.Copy()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cp.Step(ev); err != nil {
			t.Fatal(err)
		}
		if after, _ := c.Hash(); after != before {
			t.Fatalf("%v: stepping a copy changed the original (%v)", c.ID(), ev)
		}
	}
	fx, err := c.Step(ev)
	if err != nil {
		t.Fatalf("%v: %v: %v", c.ID(), ev, err)
	}
	for _, e := range fx.Sends {
		if e.To == node.None {
			t.Fatalf("%v sent %v to none", c.ID(), e.Msg)
		}
		if _, ok := w.cores[e.To]; !ok {
			continue // to a node that does not exist: lost
		}
		ch := channel{e.From, e.To}
		w.queues[ch] = append(w.queues[ch], e.Msg)
	}
	checkTable(t, c.ID(), c.Service().(*State))
	if !w.deep {
		return
	}
	cpBytes, err := c.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := node.NewCore(node.CoreConfig{ID: c.ID(), Factory: w.spec.New})
	if err != nil {
		t.Fatal(err)
	}
	if err := restored.Restore(cpBytes); err != nil {
		t.Fatal(err)
	}
	h1, _ := c.Hash()
	h2, _ := restored.Hash()
	if h1 != h2 {
		t.Fatalf("%v: hash changed across checkpoint round trip", c.ID())
	}
}

// checkTable checks the routing table's representation: a successor list
// of distinct nodes other than self and None, nearest first, within bound
// and nil when empty; a full finger table once joined, none before; and
// the refill invariant (a list with room holds every finger).
func checkTable(t *testing.T, self node.ID, s *State) {
	t.Helper()
	r := s.ring
	if s.Successors != nil && len(s.Successors) == 0 {
		t.Fatalf("%v: empty non-nil successor list", self)
	}
	if len(s.Successors) > s.opts.MaxSuccessors {
		t.Fatalf("%v: %d successors, bound %d", self, len(s.Successors), s.opts.MaxSuccessors)
	}
	for i, x := range s.Successors {
		if x == node.None || x == self {
			t.Fatalf("%v: successor list %v names none or itself", self, s.Successors)
		}
		if i > 0 && r.dist(r.pos(self), r.pos(s.Successors[i-1])) >= r.dist(r.pos(self), r.pos(x)) {
			t.Fatalf("%v: successor list %v not nearest first", self, s.Successors)
		}
	}
	switch {
	case s.Status == StatusJoined && len(s.Fingers) != r.bits:
		t.Fatalf("%v: joined with %d fingers", self, len(s.Fingers))
	case s.Status != StatusJoined && s.Fingers != nil:
		t.Fatalf("%v: %v with fingers", self, s.Status)
	}
	if len(s.Successors) < s.opts.MaxSuccessors {
		for _, f := range s.Fingers {
			if f != self && !slices.Contains(s.Successors, f) {
				t.Fatalf("%v: finger %v missing from successor list %v with room", self, f, s.Successors)
			}
		}
	}
}

// TestEncodeMsgpackMatchesReflection holds the hand-written encoder to the
// layout reflection derives from State's fields and tags, which is what the
// decoder reads: a field added to State without EncodeMsgpack fails here.
func TestEncodeMsgpackMatchesReflection(t *testing.T) {
	type plainState State // same fields and tags, no EncodeMsgpack
	big := benchState(1000).Service.(*State)
	big.Pred = 1 << 40
	for _, s := range []*State{newState(DefaultOptions()), sampleState(), big} {
		servicetest.EncodingMatchesReflection(t, s, (*plainState)(s))
	}
}
