package consequence_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// dgram is the datagram of dgramSvc.
type dgram struct{ P string }

func (dgram) MessageType() string { return "test.Datagram" }
func (d dgram) String() string    { return d.P }

// dgramSvc is the tiny datagram service: on Init, node 1 sends its
// Payloads to node 2 as datagrams, in order; node 2 records what arrives.
type dgramSvc struct {
	Got      []string
	Payloads []string `msgpack:"-"`
}

func (s *dgramSvc) Init(env node.Env) {
	if env.Self() == 1 {
		for _, p := range s.Payloads {
			env.SendDatagram(2, dgram{P: p})
		}
	}
}
func (s *dgramSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	s.Got = append(s.Got, msg.(dgram).P)
}
func (s *dgramSvc) HandleTimer(node.Env, string)           {}
func (s *dgramSvc) HandleApp(node.Env, node.Message)       {}
func (s *dgramSvc) HandleTransportError(node.Env, node.ID) {}

func dgramSpec(payloads ...string) node.Spec {
	return node.Spec{
		Name:     "datagrams",
		New:      func() node.Service { return &dgramSvc{Payloads: payloads} },
		Messages: []node.Message{dgram{}},
	}
}

func dgramModel(t testing.TB, drops int, payloads ...string) *consequence.ActorModel {
	t.Helper()
	m, err := consequence.NewActorModel(dgramSpec(payloads...), consequence.ActorOptions{N: 2, Faults: consequence.Faults{Drops: drops}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// got is node 2's record in g.
func got(g *consequence.GlobalState) []string { return g.Service(2).(*dgramSvc).Got }

// reachedWhen is a safety property that "fails" exactly in the states
// where cond holds: a search reports the first such state with its path,
// so it shows that such a state is reachable.
func reachedWhen(name string, cond func(*consequence.GlobalState) bool) consequence.Property[*consequence.GlobalState] {
	return consequence.Always(name, func(g *consequence.GlobalState) error {
		if cond(g) {
			return fmt.Errorf("%s: got %v, in flight %v", name, got(g), g.Datagrams(1, 2))
		}
		return nil
	})
}

// aLost: B arrived, and A never will — nothing is in flight any more.
var aLost = reachedWhen("a-lost", func(g *consequence.GlobalState) bool {
	return slices.Equal(got(g), []string{"B"}) && len(g.Datagrams(1, 2)) == 0
})

func pathStrings(p []consequence.Action[consequence.ActorAction]) []string {
	var out []string
	for _, a := range p {
		out = append(out, a.Act.String())
	}
	return out
}

// TestDatagramsReorderAndDrop: node 1 sends the datagrams A then B to node
// 2. The explorer reaches both delivery orders; with Faults.Drops = 1 it
// also reaches the state where B arrived and A never will, through a drop,
// and that path round-trips through a report.
//
// The state counts are pinned, for both strategies (consequence
// prediction prunes nothing here: node 2's only local actions are drops,
// and its local fingerprint covers its incoming datagrams). A state is
// (what n2 got, the multiset in flight 1→2, drops spent):
//
//	Drops 0: ([], {A,B}); ([A], {B}), ([B], {A}); ([A,B], {}), ([B,A], {})
//	         = 1 + 2 + 2 = 5 states.
//	Drops 1: depth 0: ([], {A,B}, 0);
//	         depth 1: deliver A ([A], {B}, 0), deliver B ([B], {A}, 0),
//	                  drop A ([], {B}, 1), drop B ([], {A}, 1);
//	         depth 2: ([A,B], {}, 0), ([A], {}, 1), ([B,A], {}, 0),
//	                  ([B], {}, 1) — delivering after a drop gives one of
//	                  these again (([], {B}, 1) → ([B], {}, 1));
//	         = 1 + 4 + 4 = 9 states.
//	Drops 2: as for 1, plus ([], {}, 2), the second drop after either
//	         first drop = 10 states.
//
// Sending equal datagrams (A, A) gives one delivery action per state, not
// two: ([], {A,A}), ([A], {A}), ([A,A], {}) = 3 states.
func TestDatagramsReorderAndDrop(t *testing.T) {
	ctx := context.Background()
	orderAB := reachedWhen("order-ab", func(g *consequence.GlobalState) bool { return slices.Equal(got(g), []string{"A", "B"}) })
	orderBA := reachedWhen("order-ba", func(g *consequence.GlobalState) bool { return slices.Equal(got(g), []string{"B", "A"}) })
	for _, c := range []struct {
		drops    int
		payloads []string
		unique   uint64
		depths   []uint64
	}{
		{0, []string{"A", "B"}, 5, []uint64{1, 2, 2}},
		{1, []string{"A", "B"}, 9, []uint64{1, 4, 4}},
		{2, []string{"A", "B"}, 10, []uint64{1, 4, 5}},
		{0, []string{"A", "A"}, 3, []uint64{1, 1, 1}},
		{1, []string{"A", "A"}, 5, []uint64{1, 2, 2}}, // ([A],{A},0), ([],{A},1); ([A,A],{},0), ([A],{},1)
	} {
		for _, strategy := range []consequence.Strategy{consequence.BFS, consequence.Consequence} {
			name := fmt.Sprintf("%v drops=%d %v", c.payloads, c.drops, strategy)
			m := dgramModel(t, c.drops, c.payloads...)
			res, err := consequence.NewChecker(m).
				Properties(orderAB, orderBA, aLost).Strategy(strategy).Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Unique != c.unique || !slices.Equal(res.DepthCounts, c.depths) || res.Pruned != 0 {
				t.Errorf("%s: %d unique states %v (%d pruned), want %d %v", name, res.Unique, res.DepthCounts, res.Pruned, c.unique, c.depths)
			}
			if c.payloads[1] == "A" {
				continue
			}
			for _, p := range []string{"order-ab", "order-ba"} {
				if _, ok := res.Violated(p); !ok {
					t.Errorf("%s: %s not reached", name, p)
				}
			}
			v, ok := res.Violated("a-lost")
			if ok != (c.drops > 0) {
				t.Fatalf("%s: a-lost reached: %v", name, ok)
			}
			if !ok {
				continue
			}
			path := pathStrings(v.Path)
			if want := []string{"n2 deliver-datagram test.Datagram from n1", "n2 drop-datagram test.Datagram from n1"}; !slices.Equal(path, want) {
				t.Errorf("%s: a-lost path %q, want %q", name, path, want)
			}
			if v.Path[1].Act.Msg.(dgram).P != "A" || !v.Path[1].Local || v.Path[0].Local || v.State.Drops() != 1 {
				t.Errorf("%s: a-lost through %+v", name, v.Path)
			}
			if acts := m.Actions(v.State, nil); len(acts) != 0 {
				t.Errorf("%s: a-lost state has actions %v: A could still arrive", name, acts)
			}
			checkReportRoundTrip(t, m, v, []consequence.Property[*consequence.GlobalState]{aLost})
		}
	}
}

// TestDatagramActions: one delivery per distinct message of a multiset,
// drops only within the budget and as the receiver's local actions, and a
// reset of the receiver loses the datagrams in flight to it.
func TestDatagramActions(t *testing.T) {
	m, err := consequence.NewActorModel(dgramSpec("A", "B", "A"), consequence.ActorOptions{N: 2, Faults: consequence.Faults{Drops: 1, Resets: 1}})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Start()
	var acts []string
	for _, a := range m.Actions(g, nil) {
		if a.Act.Kind == consequence.ActDeliverDatagram || a.Act.Kind == consequence.ActDropDatagram {
			acts = append(acts, fmt.Sprintf("%v %v local=%v", a.Act, a.Act.Msg, a.Local))
		}
	}
	want := []string{
		"n2 deliver-datagram test.Datagram from n1 %s local=false",
		"n2 deliver-datagram test.Datagram from n1 %s local=false",
		"n2 drop-datagram test.Datagram from n1 %s local=true",
		"n2 drop-datagram test.Datagram from n1 %s local=true",
	}
	// The multiset is in hash order: find which of A and B comes first.
	first, second := "A", "B"
	if d := g.Datagrams(1, 2); d[0].Msg.(dgram).P == "B" {
		first, second = "B", "A"
	}
	for i := range want {
		want[i] = fmt.Sprintf(want[i], []string{first, second}[i%2])
	}
	if !slices.Equal(acts, want) {
		t.Fatalf("datagram actions %q, want %q", acts, want)
	}
	if d := g.Datagrams(1, 2); len(d) != 3 || !d[0].Datagram || g.InFlight(1, 2) != nil || g.Connected(1, 2) {
		t.Fatalf("start: datagrams %v, channel %v, connected %v", d, g.InFlight(1, 2), g.Connected(1, 2))
	}
	if !strings.Contains(g.String(), "n1 ~> n2:") {
		t.Errorf("String lacks the datagrams:\n%s", g)
	}
	// Drop one A: the budget is spent, no more drops.
	dropA := apply(t, m, g, "n2 drop-datagram test.Datagram from n1")
	if dropA.Drops() != 1 || len(dropA.Datagrams(1, 2)) != 2 {
		t.Fatalf("after a drop: %d drops, %v in flight", dropA.Drops(), dropA.Datagrams(1, 2))
	}
	for _, a := range m.Actions(dropA, nil) {
		if a.Act.Kind == consequence.ActDropDatagram {
			t.Fatalf("drop enabled beyond the budget: %v", a.Act)
		}
		if _, ok := m.Next(dropA, consequence.ActorAction{Kind: consequence.ActDropDatagram, Node: 2, Peer: 1, Msg: dgram{P: "B"}}); ok {
			t.Fatal("Next dropped beyond the budget")
		}
	}
	// A datagram that is not in flight cannot be delivered.
	if _, ok := m.Next(g, consequence.ActorAction{Kind: consequence.ActDeliverDatagram, Node: 2, Peer: 1, Msg: dgram{P: "C"}}); ok {
		t.Fatal("delivered a datagram that is not in flight")
	}
	// Resetting the receiver loses what was in flight to it.
	r := apply(t, m, g, "n2 reset rst")
	if d := r.Datagrams(1, 2); len(d) != 0 {
		t.Fatalf("datagrams %v survived their receiver's reset", d)
	}
	// Resetting the sender does not (and its Init sends the three again).
	if d := apply(t, m, g, "n1 reset rst").Datagrams(1, 2); len(d) != 6 {
		t.Fatalf("after the sender's reset: %v, want the three in flight and three more", d)
	}
}

// TestDatagramFingerprintIsOrderFree: a multiset of datagrams hashes the
// same whatever order its datagrams were sent or listed in, and differs
// from a multiset with other multiplicities.
func TestDatagramFingerprintIsOrderFree(t *testing.T) {
	spec := dgramSpec()
	base, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	var cps []consequence.Checkpoint
	for _, id := range base.Nodes() {
		st, now, _ := base.Start().NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: now})
	}
	fp := func(payloads ...string) node.Hash {
		var in []node.Envelope
		for _, p := range payloads {
			in = append(in, node.Envelope{From: 1, To: 2, Msg: dgram{P: p}, Datagram: true})
		}
		m, err := consequence.NewActorModelFromCheckpoints(spec, cps, in, consequence.ActorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return m.Start().Fingerprint()
	}
	abc := fp("A", "B", "C")
	for _, order := range [][]string{{"A", "C", "B"}, {"B", "A", "C"}, {"C", "B", "A"}} {
		if got := fp(order...); got != abc {
			t.Errorf("%v: fingerprint %v, want %v as for [A B C]", order, got, abc)
		}
	}
	if fp("A", "B") == fp("A", "B", "B") || fp("A", "A") == fp("A") || fp("A", "B") == fp("B") {
		t.Error("multiplicities do not change the fingerprint")
	}
	// The same datagrams as messages are another state.
	msgs, err := consequence.NewActorModelFromCheckpoints(spec, cps, []node.Envelope{{From: 1, To: 2, Msg: dgram{P: "A"}}}, consequence.ActorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if msgs.Start().Fingerprint() == fp("A") {
		t.Error("a datagram and a message in flight hash alike")
	}
	// States reached by sending A then B and B then A are the same state.
	ab, ba := dgramModel(t, 0, "A", "B").Start(), dgramModel(t, 0, "B", "A").Start()
	if ab.Fingerprint() != ba.Fingerprint() {
		t.Errorf("sent A, B: %v; sent B, A: %v", ab.Fingerprint(), ba.Fingerprint())
	}
	// A datagram to a node outside the snapshot goes to the dummy sink.
	out, err := consequence.NewActorModelFromCheckpoints(spec, cps, []node.Envelope{{From: 1, To: 7, Msg: dgram{P: "A"}, Datagram: true}}, consequence.ActorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Start().Fingerprint() != fp() {
		t.Error("a datagram to the dummy sink is part of the state")
	}
}

// TestDatagramReportRejectsBadRecords: a datagram record needs its message.
func TestDatagramReportRejectsBadRecords(t *testing.T) {
	m := dgramModel(t, 1, "A", "B")
	for _, kind := range []string{"deliver-datagram", "drop-datagram"} {
		if _, err := m.Action(consequence.ActionRecord{Kind: kind, Node: 2, Peer: 1}); !errors.Is(err, consequence.ErrBadReport) {
			t.Errorf("%s without a message: %v", kind, err)
		}
	}
}

// TestDatagramWalks: random walks weigh datagram drops like any kind — with
// drops weighing 0 every walk delivers both datagrams; with drops allowed
// some walk loses one, and the critical transition is that drop.
func TestDatagramWalks(t *testing.T) {
	ctx := context.Background()
	m := dgramModel(t, 1, "A", "B")
	both := consequence.Eventually("both-arrive", func(g *consequence.GlobalState) error {
		if len(got(g)) != 2 {
			return fmt.Errorf("got %v", got(g))
		}
		return nil
	})
	props := []consequence.Property[*consequence.GlobalState]{both}
	opts := consequence.WalkOptions[consequence.ActorAction]{Seed: 1, Walks: 50, DMax: 10, K: 5}
	noDrops := opts
	noDrops.Weight = consequence.KindWeights(map[consequence.ActorActionKind]float64{consequence.ActDropDatagram: 0})
	res, err := consequence.RandomWalks(ctx, m, props, noDrops)
	if err != nil || res.Suspect != nil || res.Live != res.Walks {
		t.Fatalf("without drops: %v, %d of %d live", err, res.Live, res.Walks)
	}
	res, err = consequence.RandomWalks(ctx, m, props, opts)
	if err != nil || res.Suspect == nil {
		t.Fatalf("with drops: %v, no suspect in %d walks", err, res.Walks)
	}
	ct, err := consequence.FindCriticalTransition(ctx, m, props, res.Suspect.Start, res.Suspect.Path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ct.Verdict != consequence.C1 || ct.Action.Act.Kind != consequence.ActDropDatagram {
		t.Fatalf("critical transition %v %v, want C1 at a drop", ct.Verdict, ct.Action.Act)
	}
}
