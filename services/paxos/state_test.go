package paxos

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

var t0 = time.Unix(1_000_000, 0).UTC()

func newCore(t *testing.T, id node.ID, opts Options) *node.Core {
	t.Helper()
	c, err := node.NewCore(node.CoreConfig{ID: id, Factory: NewSpec(opts).New, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(node.Event{Kind: node.EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	return c
}

func step(t *testing.T, c *node.Core, ev node.Event) node.Effects {
	t.Helper()
	if ev.At.IsZero() {
		ev.At = t0
	}
	fx, err := c.Step(ev)
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

func deliver(t *testing.T, c *node.Core, from node.ID, m node.Message) node.Effects {
	t.Helper()
	return step(t, c, node.Event{Kind: node.EventMessage, From: from, Msg: m})
}

func sends(fx node.Effects) []string {
	var out []string
	for _, e := range fx.Sends {
		out = append(out, fmt.Sprintf("%v->%v %v", e.From, e.To, e.Msg))
	}
	return out
}

func stateOfCore(c *node.Core) *State { return c.Service().(*State) }

func TestOptionsBugNames(t *testing.T) {
	if got := BugNames(); !slices.Equal(got, []string{"bug1", "bug2"}) {
		t.Fatalf("BugNames() = %q", got)
	}
	var o Options
	if got := o.String(); got != "members=[n1 n2 n3] retry=2s bugs=[]" {
		t.Fatalf("zero Options = %q, want correct Paxos among n1..n3", got)
	}
	if err := o.EnableBug("bug2"); err != nil || !o.BugVolatileAcceptor || o.BugLastPromise {
		t.Fatalf("EnableBug(bug2): %v, %+v", err, o)
	}
	if err := o.EnableBug("all"); err != nil || !slices.Equal(o.Bugs(), []string{"bug1", "bug2"}) {
		t.Fatalf("EnableBug(all): %v, bugs %q", err, o.Bugs())
	}
	if err := o.EnableFix("fix-bug1"); err != nil || o.BugLastPromise || !o.BugVolatileAcceptor {
		t.Fatalf("EnableFix(fix-bug1): %v, %+v", err, o)
	}
	if err := o.EnableFix("all"); err != nil || len(o.Bugs()) != 0 {
		t.Fatalf("EnableFix(all): %v, bugs %q", err, o.Bugs())
	}
	for _, bad := range []string{"bug3", "", "BUG1"} {
		if err := o.EnableBug(bad); err == nil || !strings.HasPrefix(err.Error(), "paxos: unknown bug") {
			t.Errorf("EnableBug(%q) = %v, want an unknown-bug error", bad, err)
		}
	}
	if got := (Options{}).WithBugs().Bugs(); !slices.Equal(got, []string{"bug1", "bug2"}) {
		t.Fatalf("WithBugs().Bugs() = %q", got)
	}
}

func TestOptionsMembersNormalised(t *testing.T) {
	in := []node.ID{5, 2, node.None, 5, 9}
	o := Options{Members: in, RetryTimeout: -time.Second}.withDefaults()
	if !slices.Equal(o.Members, []node.ID{2, 5, 9}) || o.RetryTimeout != DefaultRetryTimeout || o.majority() != 2 {
		t.Fatalf("withDefaults: members %v retry %v majority %d", o.Members, o.RetryTimeout, o.majority())
	}
	if !slices.Equal(in, []node.ID{5, 2, node.None, 5, 9}) {
		t.Fatalf("withDefaults modified the caller's Members: %v", in)
	}
	if o := (Options{Members: []node.ID{1, 2, 3, 4}}).withDefaults(); o.majority() != 3 {
		t.Fatalf("majority of 4 = %d, want 3", o.majority())
	}
}

// Every handler ignores input that does not fit the protocol, rather than
// acting on it or panicking.
func TestMalformedInputIsIgnored(t *testing.T) {
	c := newCore(t, 2, Options{})
	deliver(t, c, 3, Prepare{Ballot: Ballot{Round: 2, Node: 3}})
	before := stateOfCore(c).String()
	for _, tc := range []struct {
		from node.ID
		msg  node.Message
	}{
		{7, Prepare{Ballot: Ballot{Round: 9, Node: 7}}},            // not a member
		{3, Prepare{Ballot: Ballot{Round: 9, Node: 1}}},            // someone else's ballot
		{3, Prepare{Ballot: Ballot{Node: 3}}},                      // round 0
		{3, Prepare{Ballot: Ballot{Round: 3}}},                     // no owner
		{3, Prepare{Ballot: Ballot{Round: 2, Node: 3}}},            // already promised
		{1, Prepare{Ballot: Ballot{Round: 1, Node: 1}}},            // below the promise
		{3, Accept{Ballot: Ballot{Round: 9, Node: 3}}},             // no value
		{3, Accept{Ballot: Ballot{Round: 9, Node: 1}, Value: "x"}}, // someone else's ballot
		{1, Accept{Ballot: Ballot{Round: 1, Node: 1}, Value: "x"}}, // below the promise
		{3, Learn{Ballot: Ballot{Round: 1, Node: 1}}},              // no value
		{3, Learn{Value: "x"}},                                     // no ballot
		{3, Promise{Ballot: Ballot{Round: 1, Node: 2}}},            // not proposing
		{3, Propose{Value: "x"}},                                   // an application call on the wire
	} {
		fx := deliver(t, c, tc.from, tc.msg)
		if len(fx.Sends) != 0 || len(fx.Timers) != 0 {
			t.Errorf("%v from %v: effects %v", tc.msg, tc.from, sends(fx))
		}
		if got := stateOfCore(c).String(); got != before {
			t.Errorf("%v from %v changed the state:\n%s\nwant\n%s", tc.msg, tc.from, got, before)
		}
	}
	if fx := step(t, c, node.Event{Kind: node.EventApp, Msg: Propose{}}); len(fx.Sends) != 0 {
		t.Errorf("empty proposal started a ballot: %v", sends(fx))
	}
	if fx := step(t, c, node.Event{Kind: node.EventApp, Msg: Prepare{}}); len(fx.Sends) != 0 {
		t.Errorf("a message as an application call started a ballot: %v", sends(fx))
	}
}

// A proposer counts each acceptor once, rejects a promise that contradicts
// itself, and a learner counts each acceptor once and one value per ballot.
func TestPromisesAndLearnsCountEachAcceptorOnce(t *testing.T) {
	c := newCore(t, 1, Options{Members: []node.ID{1, 2, 3, 4, 5}})
	step(t, c, node.Event{Kind: node.EventApp, Msg: Propose{Value: "v1"}})
	b := Ballot{Round: 1, Node: 1}
	deliver(t, c, 2, Promise{Ballot: b})
	deliver(t, c, 2, Promise{Ballot: b})
	deliver(t, c, 3, Promise{Ballot: b, Accepted: Ballot{Round: 1, Node: 4}}) // a ballot without a value
	deliver(t, c, 3, Promise{Ballot: b, Value: "x"})                          // a value without a ballot
	if got := stateOfCore(c).Promises; !slices.Equal(got, []node.ID{2}) {
		t.Fatalf("promises %v, want [n2]", got)
	}
	fx := deliver(t, c, 3, Promise{Ballot: b, Accepted: Ballot{Round: 1, Node: 4}, Value: "v4"})
	if len(fx.Sends) != 0 {
		t.Fatalf("Accept sent with 2 of 5 promises: %v", sends(fx))
	}
	fx = deliver(t, c, 5, Promise{Ballot: b})
	if got := sends(fx); len(got) != 5 || got[0] != `n1->n1 Accept(1.n1 "v4")` {
		t.Fatalf("third promise: %v, want Accept of v4 to all five", got)
	}

	l := Ballot{Round: 2, Node: 3}
	deliver(t, c, 2, Learn{Ballot: l, Value: "v4"})
	deliver(t, c, 2, Learn{Ballot: l, Value: "v4"})
	deliver(t, c, 4, Learn{Ballot: l, Value: "other"})
	deliver(t, c, 3, Learn{Ballot: Ballot{Round: 1, Node: 3}, Value: "v4"})
	if s := stateOfCore(c); s.Learned != "" || len(s.Tallies) != 2 || !slices.Equal(s.Tallies[1].From, []node.ID{2}) {
		t.Fatalf("after duplicate and conflicting learns: %v", s)
	}
	deliver(t, c, 4, Learn{Ballot: l, Value: "v4"})
	fx = deliver(t, c, 5, Learn{Ballot: l, Value: "v4"})
	if s := stateOfCore(c); s.Learned != "v4" || s.Tallies != nil || s.Phase != PhaseIdle {
		t.Fatalf("after a majority of learns: %v", s)
	}
	if len(fx.Timers) != 1 || !fx.Timers[0].Cancel || fx.Timers[0].Name != TimerRetry {
		t.Fatalf("learning must cancel the retry timer: %+v", fx.Timers)
	}
}

// A proposer's ballot is above every round it used or saw as an acceptor.
func TestBallotAboveEverythingSeen(t *testing.T) {
	c := newCore(t, 2, Options{})
	deliver(t, c, 3, Prepare{Ballot: Ballot{Round: 7, Node: 3}})
	fx := step(t, c, node.Event{Kind: node.EventApp, Msg: Propose{Value: "v2"}})
	if got := sends(fx); len(got) != 3 || got[0] != "n2->n1 Prepare(8.n2)" {
		t.Fatalf("proposal after seeing 7.n3: %v", got)
	}
	if len(fx.Timers) != 1 || fx.Timers[0].Name != TimerRetry {
		t.Fatalf("no retry timer: %+v", fx.Timers)
	}
	d := fx.Timers[0].At.Sub(t0)
	if d < DefaultRetryTimeout || d >= 2*DefaultRetryTimeout {
		t.Fatalf("retry after %v, want within [%v, %v)", d, DefaultRetryTimeout, 2*DefaultRetryTimeout)
	}
	if fx := step(t, c, node.Event{Kind: node.EventApp, Msg: Propose{Value: "again"}}); len(fx.Sends) != 0 {
		t.Fatalf("a second Propose while proposing: %v", sends(fx))
	}
	fx = step(t, c, node.Event{Kind: node.EventTimer, Timer: TimerRetry})
	if got := sends(fx); len(got) != 3 || got[0] != "n2->n1 Prepare(9.n2)" {
		t.Fatalf("retry: %v", got)
	}
}

// acceptorState runs one node to a promise of 4.n3 and an accepted v1 at
// 2.n1, with a learned value and a proposal of its own, then resets it.
func resetAfterAccepting(t *testing.T, opts Options) (before, after *State) {
	t.Helper()
	c := newCore(t, 2, opts)
	step(t, c, node.Event{Kind: node.EventApp, Msg: Propose{Value: "v2"}})
	deliver(t, c, 1, Accept{Ballot: Ballot{Round: 2, Node: 1}, Value: "v1"})
	deliver(t, c, 3, Prepare{Ballot: Ballot{Round: 4, Node: 3}})
	deliver(t, c, 1, Learn{Ballot: Ballot{Round: 2, Node: 1}, Value: "v1"})
	deliver(t, c, 3, Learn{Ballot: Ballot{Round: 2, Node: 1}, Value: "v1"})
	before = stateOfCore(c).Clone().(*State)
	fx := step(t, c, node.Event{Kind: node.EventReset})
	if len(fx.Sends) != 0 || len(fx.Timers) != 0 || len(c.State().Timers) != 0 {
		t.Fatalf("reset had effects %v %+v", sends(fx), fx.Timers)
	}
	return before, stateOfCore(c)
}

func TestResetKeepsTheAcceptorOnDisk(t *testing.T) {
	before, after := resetAfterAccepting(t, Options{})
	if before.String() != `promised=4.n3 accepted=2.n1:"v1" learned="v1" round=1 proposal="v2" idle` {
		t.Fatalf("before the reset: %v", before)
	}
	if got, want := after.String(), `promised=4.n3 accepted=2.n1:"v1" learned="v1" round=1 proposal=- idle`; got != want {
		t.Fatalf("after the reset: %s, want %s", got, want)
	}
}

func TestResetWithBug2ForgetsTheAcceptor(t *testing.T) {
	_, after := resetAfterAccepting(t, Options{BugVolatileAcceptor: true})
	if got, want := after.String(), `promised=- accepted=- learned="v1" round=1 proposal=- idle`; got != want {
		t.Fatalf("after the reset with bug2: %s, want %s", got, want)
	}
}

func TestRecoverIgnoresAForeignService(t *testing.T) {
	s := newState(Options{}.withDefaults())
	s.Recover(nil)
	s.Recover(&otherService{})
	if s.String() != newState(Options{}).String() {
		t.Fatalf("recovering from a foreign value changed the state: %v", s)
	}
}

type otherService struct{}

func (*otherService) Init(node.Env)                                 {}
func (*otherService) HandleMessage(node.Env, node.ID, node.Message) {}
func (*otherService) HandleTimer(node.Env, string)                  {}
func (*otherService) HandleApp(node.Env, node.Message)              {}
func (*otherService) HandleTransportError(node.Env, node.ID)        {}

// busyState is a node in the middle of everything: promises collected,
// tallies open, a proposal of its own.
func busyState(t *testing.T) *node.Core {
	t.Helper()
	c := newCore(t, 1, Options{Members: []node.ID{1, 2, 3, 4, 5}})
	deliver(t, c, 2, Accept{Ballot: Ballot{Round: 1, Node: 2}, Value: "v2"})
	step(t, c, node.Event{Kind: node.EventApp, Msg: Propose{Value: "v1"}})
	deliver(t, c, 3, Promise{Ballot: Ballot{Round: 2, Node: 1}, Accepted: Ballot{Round: 1, Node: 2}, Value: "v2"})
	deliver(t, c, 2, Learn{Ballot: Ballot{Round: 1, Node: 2}, Value: "v2"})
	deliver(t, c, 4, Learn{Ballot: Ballot{Round: 1, Node: 2}, Value: "v2"})
	deliver(t, c, 4, Learn{Ballot: Ballot{Round: 1, Node: 4}, Value: "v4"})
	return c
}

func TestCheckpointRoundTrip(t *testing.T) {
	c := busyState(t)
	b, err := c.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	st, err := node.DecodeCheckpoint(b, NewSpec(Options{Members: []node.ID{1, 2, 3, 4, 5}}).New)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Service.(*State).String(), stateOfCore(c).String(); got != want {
		t.Fatalf("round trip: %s, want %s", got, want)
	}
	h1, err := c.Hash()
	if err != nil {
		t.Fatal(err)
	}
	if h2, _ := st.Hash(); h1 != h2 {
		t.Fatalf("hash changed across a checkpoint round trip: %v vs %v", h1, h2)
	}
	// A different state hashes differently.
	deliver(t, c, 5, Learn{Ballot: Ballot{Round: 1, Node: 4}, Value: "v4"})
	if h3, _ := c.Hash(); h3 == h1 {
		t.Fatal("a new Learn did not change the hash")
	}
}

func TestAppAndRestartCalls(t *testing.T) {
	c := newCore(t, 3, Options{})
	s := stateOfCore(c)
	if got := s.AppCalls(3); !reflect.DeepEqual(got, []node.Message{Propose{Value: "v3"}}) {
		t.Fatalf("idle member's AppCalls = %v", got)
	}
	if got := s.AppCalls(7); got != nil {
		t.Fatalf("a non-member may not propose: %v", got)
	}
	if got := s.RestartCalls(3); got != nil {
		t.Fatalf("RestartCalls without a proposal = %v", got)
	}
	step(t, c, node.Event{Kind: node.EventApp, Msg: Propose{Value: "mine"}})
	s = stateOfCore(c)
	if got := s.AppCalls(3); got != nil {
		t.Fatalf("a proposing node's AppCalls = %v", got)
	}
	if got := s.RestartCalls(3); !reflect.DeepEqual(got, []node.Message{Propose{Value: "mine"}}) {
		t.Fatalf("RestartCalls = %v, want the proposal again", got)
	}
	for _, from := range []node.ID{1, 2} {
		deliver(t, c, from, Learn{Ballot: Ballot{Round: 1, Node: 1}, Value: "v1"})
	}
	s = stateOfCore(c)
	if s.AppCalls(3) != nil || s.RestartCalls(3) != nil {
		t.Fatalf("a node that learned still calls: %v / %v", s.AppCalls(3), s.RestartCalls(3))
	}
}

func TestBallotOrder(t *testing.T) {
	bs := []Ballot{{Round: 2, Node: 1}, {}, {Round: 1, Node: 3}, {Round: 1, Node: 1}}
	slices.SortFunc(bs, Ballot.Compare)
	if got := fmt.Sprint(bs); got != "[- 1.n1 1.n3 2.n1]" {
		t.Fatalf("sorted ballots %s", got)
	}
	if (Ballot{}).Valid() || !(Ballot{}).IsZero() || !(Ballot{Round: 1, Node: 1}).Valid() {
		t.Fatal("zero ballot must be invalid and zero, 1.n1 valid")
	}
}

// TestEncodeMsgpackMatchesReflection holds the hand-written encoder to the
// layout reflection derives from State's fields and tags, which is what the
// decoder reads: a field added to State without EncodeMsgpack fails here.
func TestEncodeMsgpackMatchesReflection(t *testing.T) {
	type plainState State // same fields and tags, no EncodeMsgpack
	big := benchState(25).Service.(*State)
	big.Round = 1 << 40
	big.Last, big.LastValue = Ballot{Round: 300, Node: 1 << 33}, "last"
	big.Tallies = append(big.Tallies, Tally{Ballot: Ballot{Round: 7, Node: 3}, Value: "v3", From: []node.ID{}})
	for _, s := range []*State{newState(Options{}), stateOfCore(busyState(t)), big} {
		servicetest.EncodingMatchesReflection(t, s, (*plainState)(s))
	}
}
