package pastry

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

func ids(xs ...node.ID) []node.ID { return xs }

// byID are the options of the hand-built states: identifier = ID in an
// 8-bit space of four base-4 digits.
func byID() Options {
	o := DefaultOptions()
	o.Placement = PlaceByID
	o.Bits = 8
	return o.withDefaults()
}

// joinedState is n30 of a ring n10..n50 that knows every node, with a
// probe outstanding to n40.
func joinedState() *State {
	s := newState(byID())
	s.Status = StatusJoined
	s.Bootstrap = 10
	s.Table = make([]node.ID, s.sp.digits*s.sp.cols())
	for _, x := range ids(10, 20, 40, 50) {
		s.learn(30, x)
	}
	s.missed(40)
	return s
}

func sampleNodeState() node.State {
	return node.State{
		Service: joinedState(),
		Timers:  []node.Timer{{Name: TimerProbe, At: time.Unix(5, 0).UTC()}},
		Rand:    node.NewRand(7, 6),
	}
}

func TestLearnAndPurge(t *testing.T) {
	s := joinedState()
	if got, want := s.String(), "joined left=[n20 n10] right=[n40 n50] table=[n10 n20 n40 n50] misses=[n40:1] bootstrap=n10"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// n30 = 0132: n10 = 0022 and n40 = 0220, n50 = 0302 share no digit
	// beyond the first; n20 = 0110 shares "01".
	if r, c, ok := s.slot(30, 20); !ok || r != 2 || c != 1 {
		t.Errorf("slot(n20) = %d, %d, %v", r, c, ok)
	}
	// A nearer node displaces the farthest leaf of its side.
	if !s.learn(30, 35) {
		t.Error("learning n35 did not change the leaf set")
	}
	if !slices.Equal(s.Right, ids(35, 40)) {
		t.Errorf("right %v", s.Right)
	}
	// Purging removes a node everywhere, including its probe count.
	l, r := s.purge(30, 40)
	if l || !r || s.knows(40) || s.missCount(40) != 0 {
		t.Errorf("purge n40: left %v right %v, state %v", l, r, s)
	}
	if !s.wants(30, 40) {
		t.Error("does not want back a purged leaf")
	}
}

func TestRouting(t *testing.T) {
	s := joinedState()
	for _, tc := range []struct {
		key    uint64
		joiner node.ID
		want   node.ID
	}{
		{31, 31, 30}, // closest to itself: deliver
		{24, 24, 20}, // n20 and n30 are 4 and 6 away
		{25, 25, 20}, // a tie: the smaller ID
		{48, 48, 50}, // within the leaf set's range
		{40, 40, 40}, // the joiner's own entry: the bug
	} {
		if got := s.nextHop(30, tc.key, tc.joiner); got != tc.want {
			t.Errorf("nextHop(%d) = %v, want %v", tc.key, got, tc.want)
		}
	}
	// With the correction a Join is never routed to its joiner.
	s.opts.FixRapidRejoin = true
	if got := s.nextHop(30, 40, 40); got != 50 && got != 30 {
		t.Errorf("fixed nextHop(40) = %v", got)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	orig := joinedState()
	want := orig.String()
	c := orig.Clone().(*State)
	if c.String() != want || c.opts != orig.opts || c.sp != orig.sp {
		t.Fatalf("clone differs: %v", c)
	}
	c.Left[0] = 99
	c.Table[0] = 98
	c.Misses[0].Count = 7
	c.learn(30, 31)
	c.purge(30, 50)
	if got := orig.String(); got != want {
		t.Fatalf("original changed by mutating its clone:\n got %s\nwant %s", got, want)
	}
	empty := newState(DefaultOptions()).Clone().(*State)
	if empty.Left != nil || empty.Table != nil || empty.Misses != nil {
		t.Fatalf("clone of an empty state must keep nil tables: %#v", empty)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	spec := NewSpec(byID().Fixed())
	st := sampleNodeState()
	back, _ := servicetest.CheckpointRoundTrip(t, spec, st)
	bs := back.Service.(*State)
	// The configuration is not state: it comes from the factory.
	if bs.opts != byID().Fixed() || bs.sp != newSpace(byID()) {
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
		t.Errorf("every fix by name is not Fixed(): %+v", o)
	}
	var all Options
	if err := all.EnableFix("all"); err != nil || all != o {
		t.Errorf("all: %v %+v", err, all)
	}
	if err := o.EnableFix("nope"); err == nil || !strings.HasPrefix(err.Error(), "pastry: ") {
		t.Errorf("unknown fix: %v", err)
	}
	if got, want := AllFixes().String(), "bits=16 digit=2 placement=hashed leaves=4 join-retry=2s probe=1s misses=2 fixes=[rapid-rejoin]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	for _, bad := range []Options{
		{Bits: -1}, {Bits: 65}, {DigitBits: -2}, {DigitBits: 9}, {LeafSize: 3}, {LeafSize: -2},
		{JoinRetry: -time.Second}, {ProbeInterval: -1}, {MissLimit: -1}, {Bits: 15, DigitBits: 2},
	} {
		if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "pastry: ") {
			t.Errorf("Validate(%+v) = %v", bad, err)
		}
		// NewSpec never runs on them: invalid values take the defaults.
		if d := bad.withDefaults(); d.Validate() != nil {
			t.Errorf("withDefaults(%+v) = %+v is invalid", bad, d)
		}
	}
	if _, err := ParsePlacement("round"); err == nil {
		t.Error("ParsePlacement accepted a bad name")
	}
}

func TestAppCalls(t *testing.T) {
	s := newState(byID())
	if s.AppCalls(3) != nil || s.RestartCalls(3) != nil {
		t.Error("a fresh node declares calls")
	}
	s = joinedState()
	if got := s.RestartCalls(30); len(got) != 1 || got[0] != (JoinOverlay{Bootstrap: 10}) {
		t.Errorf("restart calls %v", got)
	}
	if s.AppCalls(30) != nil {
		t.Error("a joined node declares calls")
	}
	if got := s.Neighbors(30); !slices.Equal(got, ids(10, 20, 40, 50)) {
		t.Errorf("neighbors %v", got)
	}
}

// TestEncodeMsgpackMatchesReflection holds the hand-written encoder to the
// layout reflection derives from State's fields and tags, which is what the
// decoder reads: a field added to State without EncodeMsgpack fails here.
func TestEncodeMsgpackMatchesReflection(t *testing.T) {
	type plainState State // same fields and tags, no EncodeMsgpack
	big := benchState(1000).Service.(*State)
	big.Bootstrap = 1 << 40
	big.Misses[0].Count = 300
	for _, s := range []*State{newState(DefaultOptions()), joinedState(), big} {
		servicetest.EncodingMatchesReflection(t, s, (*plainState)(s))
	}
}

// TestHostileMessages: oversized lists and forged hop counts are cut or
// dropped, never followed without bound, and never panic.
func TestHostileMessages(t *testing.T) {
	h, err := nodetest.New(harnessConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"options placement=by-id bits=8", "start n10 n20", "app n10 join n10"} {
		if _, err := h.Exec(line); err != nil {
			t.Fatal(err)
		}
	}
	s := h.Service(10).(*State)
	long := make([]node.ID, 10_000)
	for i := range long {
		long[i] = node.ID(i + 1)
	}
	if got := len(s.bounded(long)); got != s.opts.LeafSize+1 {
		t.Errorf("bounded kept %d entries", got)
	}
	if got := len(s.maxSeen(long)); got != s.maxHops()*(s.sp.cols()+1) {
		t.Errorf("maxSeen kept %d entries", got)
	}
	// A Join with a forged hop count is dropped; one at the limit too.
	for _, hops := range []int{-5, s.maxHops()} {
		env := &recEnv{self: 10}
		s.onJoin(env, Join{Joiner: 20, Hops: hops, Seen: long})
		if len(env.sent) != 0 {
			t.Errorf("hops %d: sent %v", hops, env.sent)
		}
	}
	env := &recEnv{self: 10}
	s.onJoin(env, Join{Joiner: 20, Seen: long})
	if len(env.sent) != 1 || len(env.sent[0].(JoinReply).Seen) > s.maxHops()*(s.sp.cols()+1)+1 {
		t.Errorf("a Join with a long Seen: sent %d messages", len(env.sent))
	}
}

// recEnv is a node.Env that records datagrams.
type recEnv struct {
	node.Env
	self node.ID
	sent []node.Message
}

func (e *recEnv) Self() node.ID                          { return e.self }
func (e *recEnv) SendDatagram(_ node.ID, m node.Message) { e.sent = append(e.sent, m) }
