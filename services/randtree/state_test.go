package randtree

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
	s := newState(AllFixes())
	s.Status = StatusJoined
	s.Root = 1
	s.Parent = 4
	s.Children = ids(7, 9)
	s.Siblings = ids(5)
	s.Peers = ids(1, 2, 4)
	s.Targets = ids(4, 2)
	s.NextTarget = 1
	s.PendingRoot = 2
	return s
}

func sampleNodeState(t testing.TB) node.State {
	t.Helper()
	return node.State{
		Service: sampleState(),
		Timers:  []node.Timer{{Name: TimerRecovery, At: time.Unix(5, 0).UTC()}},
		Rand:    node.NewRand(7, 6),
	}
}

func TestCloneIsIndependent(t *testing.T) {
	orig := sampleState()
	want := orig.String()
	c := orig.Clone().(*State)
	if c.String() != want || c.opts != orig.opts {
		t.Fatalf("clone differs: %v", c)
	}
	// Mutate every slice of the clone in place and through the helpers.
	c.Children[0] = 99
	c.Siblings = insert(c.Siblings, 6)
	c.Peers[1] = 3
	c.Targets[0] = 8
	c.Children = remove(c.Children, 9)
	if got := orig.String(); got != want {
		t.Fatalf("original changed by mutating its clone:\n got %s\nwant %s", got, want)
	}
	// Growing one set of a clone must not spill into the next one.
	c2 := orig.Clone().(*State)
	c2.Children = insert(c2.Children, 100)
	c2.Siblings = insert(c2.Siblings, 101)
	c2.Peers = append(c2.Peers, 102)
	if got := c2.String(); got != "joined root=n1 parent=n4 children=[n7 n9 n100] siblings=[n5 n101] peers=[n1 n2 n4 n102] targets=[n4 n2] pending-root=n2" {
		t.Fatalf("growing a cloned set clobbered another: %s", got)
	}
	empty := newState(DefaultOptions()).Clone().(*State)
	if empty.Children != nil || empty.Peers != nil || empty.Targets != nil || empty.Siblings != nil {
		t.Fatalf("clone of empty sets must keep them nil: %#v", empty)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	spec := NewSpec(AllFixes())
	st := sampleNodeState(t)
	back, cp := servicetest.CheckpointRoundTrip(t, spec, st)
	// The configuration is not state: it comes from the factory.
	if back.Service.(*State).opts != AllFixes() {
		t.Fatalf("decoded state lost the factory's options")
	}
	// The paper's RandTree checkpoints average 176 bytes; ours carry no
	// field names.
	if len(cp) > 80 {
		t.Errorf("checkpoint of %d bytes for a small node, want compact", len(cp))
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
	if err := o.EnableFix("bogus"); err == nil || !strings.HasPrefix(err.Error(), "randtree: ") {
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
	if got := AllFixes().String(); got != "max-children=3 join-retry=2s recovery=5s fixes=[update-sibling new-root-child root-siblings recovery-timer accept-sibling join-reply-in-init stale-child]" {
		t.Errorf("String: %s", got)
	}
	s := NewSpec(Options{MaxChildren: -1}).New().(*State)
	if s.opts.MaxChildren != DefaultMaxChildren {
		t.Errorf("NewSpec did not default MaxChildren: %+v", s.opts)
	}
}

// TestRandomRuns drives a few nodes through random events — deliveries,
// timers, joins, silent and RST resets — with random fixes, and checks at
// every step what must hold whatever the protocol's bugs: the state stays in
// canonical form, survives a checkpoint round trip with the same hash, and
// a Copy stepped on its own leaves the original untouched.
func TestRandomRuns(t *testing.T) {
	runs, steps := 200, 150
	if testing.Short() {
		runs = 30
	}
	for run := range runs {
		rng := rand.New(rand.NewPCG(uint64(run), 1))
		opts := DefaultOptions()
		opts.MaxChildren = 1 + rng.IntN(3)
		for _, name := range FixNames() {
			if rng.IntN(2) == 0 {
				_ = opts.EnableFix(name)
			}
		}
		w := newWorld(t, opts, 2+rng.IntN(4), uint64(run))
		for range steps {
			w.randomStep(rng)
		}
	}
}

// channel is a directed pair of nodes.
type channel struct{ from, to node.ID }

// world is a minimal random driver over node.Cores, independent of the
// script harness.
type world struct {
	t      *testing.T
	spec   node.Spec
	ids    []node.ID
	cores  map[node.ID]*node.Core
	queues map[channel][]node.Message
	now    time.Time
}

func newWorld(t *testing.T, opts Options, n int, seed uint64) *world {
	w := &world{t: t, spec: NewSpec(opts), cores: map[node.ID]*node.Core{},
		queues: map[channel][]node.Message{}, now: time.Unix(0, 0).UTC()}
	for i := range n {
		id := node.ID(2*i + 1)
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
	switch k := rng.IntN(20); {
	case k < 12 && len(chs) > 0:
		ch := chs[rng.IntN(len(chs))]
		msg := w.queues[ch][0]
		w.queues[ch] = w.queues[ch][1:]
		w.step(w.cores[ch.to], node.Event{Kind: node.EventMessage, From: ch.from, Msg: msg})
	case k < 15:
		if ts := c.State().Timers; len(ts) > 0 {
			w.step(c, node.Event{Kind: node.EventTimer, Timer: ts[rng.IntN(len(ts))].Name})
		}
	case k < 18:
		var targets []node.ID
		for range 1 + rng.IntN(2) {
			targets = append(targets, w.ids[rng.IntN(len(w.ids))])
		}
		w.step(c, node.Event{Kind: node.EventApp, Msg: JoinOverlay{Targets: targets}})
	case k < 19:
		w.step(c, node.Event{Kind: node.EventReset})
	default:
		w.step(c, node.Event{Kind: node.EventReset})
		for _, p := range w.ids {
			if p != id {
				delete(w.queues, channel{id, p})
				delete(w.queues, channel{p, id})
				w.step(w.cores[p], node.Event{Kind: node.EventTransportError, Peer: id})
			}
		}
	}
}

func (w *world) step(c *node.Core, ev node.Event) {
	t := w.t
	t.Helper()
	w.now = w.now.Add(time.Second)
	ev.At = w.now
	if c.Started() && ev.Kind != node.EventInit {
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
		if e.To == c.ID() {
			t.Fatalf("%v sent %v to itself", c.ID(), e.Msg)
		}
		ch := channel{e.From, e.To}
		w.queues[ch] = append(w.queues[ch], e.Msg)
	}
	s := c.Service().(*State)
	for name, set := range map[string][]node.ID{"children": s.Children, "siblings": s.Siblings, "peers": s.Peers} {
		if set != nil && len(set) == 0 {
			t.Fatalf("%v: empty non-nil %s", c.ID(), name)
		}
		for i, id := range set {
			if id == node.None || (i > 0 && set[i-1] >= id) {
				t.Fatalf("%v: %s %v not a sorted set", c.ID(), name, set)
			}
		}
	}
	if contains(s.Peers, c.ID()) || contains(s.Children, c.ID()) || contains(s.Siblings, c.ID()) {
		t.Fatalf("%v: names itself: %v", c.ID(), s)
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

// TestEncodeMsgpackMatchesReflection holds the hand-written encoder to the
// layout reflection derives from State's fields and tags, which is what the
// decoder reads: a field added to State without EncodeMsgpack fails here.
func TestEncodeMsgpackMatchesReflection(t *testing.T) {
	type plainState State // same fields and tags, no EncodeMsgpack
	big := benchState(40).Service.(*State)
	big.NextTarget = 300
	big.PendingRoot = 1 << 40
	for _, s := range []*State{newState(DefaultOptions()), sampleState(), big} {
		servicetest.EncodingMatchesReflection(t, s, (*plainState)(s))
	}
}
