package consequence_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// refNote is refSvc's message.
type refNote struct{ T string }

func (refNote) MessageType() string { return "test.Note" }
func (n refNote) String() string    { return n.T }

// refSvc is the tiny service of the refusal tests: node 1 sends notes to
// node 2 as its scenario says, mostly with TrySend; node 2 records what
// arrives (Got); node 1 records what it sent (Sent, never taking back a
// refused note: the bug of the "announced" invariant) and its events
// (Log).
type refSvc struct {
	Sent, Got, Log []string
	Scenario       string `msgpack:"-"`
}

func (s *refSvc) Init(env node.Env) {
	if env.Self() != 1 {
		return
	}
	switch s.Scenario {
	case "two", "ack":
		s.try(env, "A")
		s.try(env, "B")
	case "order":
		s.try(env, "A")
		s.send(env, "B")
		s.send(env, "C")
	case "plain":
		s.send(env, "A")
		s.send(env, "B")
	case "retry":
		s.try(env, "A")
	case "self":
		// A note to itself first: no shell refuses one.
		env.TrySend(1, refNote{T: "S"})
		s.try(env, "A")
	case "ack2":
		s.try(env, "A")
		s.try(env, "B")
		s.try(env, "C")
	case "twins", "twins-z":
		env.SetTimer("x", time.Second)
		env.SetTimer("y", time.Second)
		if s.Scenario == "twins-z" {
			// A local action n1 still has after x or y.
			env.SetTimer("z", time.Minute)
		}
	}
}

func (s *refSvc) try(env node.Env, t string) {
	s.Sent = append(s.Sent, t)
	env.TrySend(2, refNote{T: t})
}

func (s *refSvc) send(env node.Env, t string) {
	s.Sent = append(s.Sent, t)
	env.Send(2, refNote{T: t})
}

func (s *refSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	t := msg.(refNote).T
	if env.Self() == 1 {
		s.Log = append(s.Log, t)
		return
	}
	s.Got = append(s.Got, t)
	if (s.Scenario == "ack" && t == "A") || (s.Scenario == "ack2" && t == "B") {
		env.Send(1, refNote{T: "ack"})
	}
}

func (s *refSvc) HandleTimer(env node.Env, name string) {
	switch name {
	case "retry":
		s.try(env, "A")
	case "x", "y":
		// Both leave the same service state: a plain send and a TrySend of
		// the same note differ only in whether it may be refused.
		env.CancelTimer("x")
		env.CancelTimer("y")
		if name == "x" {
			env.Send(2, refNote{T: "A"})
		} else {
			env.TrySend(2, refNote{T: "A"})
		}
		s.Sent = []string{"A"}
	}
}

func (s *refSvc) HandleSendRefused(env node.Env, to node.ID, msg node.Message) {
	s.Log = append(s.Log, "refused "+msg.(refNote).T)
	if s.Scenario == "retry" {
		env.SetTimer("retry", time.Second)
	}
}

func (s *refSvc) HandleApp(node.Env, node.Message)       {}
func (s *refSvc) HandleTransportError(node.Env, node.ID) {}

var _ node.SendRefusedHandler = (*refSvc)(nil)

func refSpec(scenario string) node.Spec {
	return node.Spec{
		Name:     "refusals",
		New:      func() node.Service { return &refSvc{Scenario: scenario} },
		Messages: []node.Message{refNote{}},
	}
}

func refModel(t testing.TB, scenario string, f consequence.Faults) *consequence.ActorModel {
	t.Helper()
	m, err := consequence.NewActorModel(refSpec(scenario), consequence.ActorOptions{N: 2, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func refNode(g *consequence.GlobalState, id node.ID) *refSvc { return g.Service(id).(*refSvc) }

// refReached is a safety property that "fails" exactly where cond holds:
// a search reports the first such state, so it shows one is reachable.
func refReached(name string, cond func(*consequence.GlobalState) bool) consequence.Property[*consequence.GlobalState] {
	return consequence.Always(name, func(g *consequence.GlobalState) error {
		if cond(g) {
			return fmt.Errorf("%s: n1 %+v, n2 got %v", name, *refNode(g, 1), refNode(g, 2).Got)
		}
		return nil
	})
}

// announced is the invariant only a refusal breaks: every note node 1
// sent has arrived at node 2 or is still on its way.
var announced = consequence.Always("announced", func(g *consequence.GlobalState) error {
	have := slices.Clone(refNode(g, 2).Got)
	for _, e := range g.InFlight(1, 2) {
		if e.Msg != nil {
			have = append(have, e.Msg.(refNote).T)
		}
	}
	for _, t := range refNode(g, 1).Sent {
		if !slices.Contains(have, t) {
			return fmt.Errorf("n1 sent %s, which n2 neither got nor will", t)
		}
	}
	return nil
})

// TestRefusalStateCounts pins the state counts, for both strategies. A
// state is (n2 got, n1's log, channel 1→2 with the window marked *,
// refusals spent, n1's timers).
//
//	two, Refusals 0: ([], A B), ([A], B), ([A B], ) = 3.
//	two, Refusals 1: depth 0 ([], A* B*); depth 1 deliver A ([A], B*),
//	  refuse A ([], [refused A], B, 1) — the budget spent, B leaves the
//	  window —, refuse B ([], [refused B], A, 1); depth 2 ([A B]),
//	  ([A], [refused B], 1) twice (refuse B after A, or A after refuse B),
//	  ([B], [refused A], 1) = 1 + 3 + 3 = 7.
//	two, Refusals 2: as 1, and at depth 2 both refused ([], [refused A,
//	  refused B], 2): B, sent after A, stays refusable after A's refusal;
//	  A, sent before B, is not after B's = 1 + 3 + 4 = 8.
//	retry, Refusals 0: (A*... unmarked), ([A]) = 2.
//	retry, Refusals 1: ([], A*); ([A]), ([], retry armed, 1); ([], A, 1);
//	  ([A], 1) = 5.
//	retry, Refusals 2: ([], A*); ([A]), (retry, 1); (A*, 1);
//	  ([A], 1), (retry, 2); (A, 2); ([A], 2) = 8.
//	plain (no TrySend): 3 states with any budget.
//	twins, Refusals 1: depth 1 timer x (A plain) and timer y (A*) — the
//	  same but for the window, two states; depth 2 deliver ([A]) from both,
//	  refuse A ([], [refused A], 1) = 1 + 2 + 2 = 5; with Refusals 0 the
//	  two depth-1 states are one: 3.
func TestRefusalStateCounts(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		scenario string
		refusals int
		unique   uint64
		depths   []uint64
	}{
		{"two", 0, 3, []uint64{1, 1, 1}},
		{"two", 1, 7, []uint64{1, 3, 3}},
		{"two", 2, 8, []uint64{1, 3, 4}},
		{"retry", 0, 2, []uint64{1, 1}},
		{"retry", 1, 5, []uint64{1, 2, 1, 1}},
		{"retry", 2, 8, []uint64{1, 2, 1, 2, 1, 1}},
		{"plain", 0, 3, []uint64{1, 1, 1}},
		{"plain", 1, 3, []uint64{1, 1, 1}},
		{"twins", 0, 3, []uint64{1, 1, 1}},
		{"twins", 1, 5, []uint64{1, 2, 2}},
	} {
		for _, strategy := range []consequence.Strategy{consequence.BFS, consequence.Consequence} {
			name := fmt.Sprintf("%s refusals=%d %v", c.scenario, c.refusals, strategy)
			m := refModel(t, c.scenario, consequence.Faults{Refusals: c.refusals})
			res, err := consequence.NewChecker(m).Strategy(strategy).Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Unique != c.unique || !slices.Equal(res.DepthCounts, c.depths) {
				t.Errorf("%s: %d unique states %v, want %d %v", name, res.Unique, res.DepthCounts, c.unique, c.depths)
			}
		}
	}
}

// TestRefusalFromEqualLocalStates: timers x and y leave node 1 in the same
// local state, but only y's note may be refused. The refusal is reached by
// both strategies — for consequence prediction because node 1's local
// fingerprint covers its window: without it, the refusal after y would be
// pruned as a local action already explored after x (timer z is one).
func TestRefusalFromEqualLocalStates(t *testing.T) {
	refusedA := refReached("refused-a", func(g *consequence.GlobalState) bool {
		return slices.Contains(refNode(g, 1).Log, "refused A")
	})
	for _, strategy := range []consequence.Strategy{consequence.BFS, consequence.Consequence} {
		m := refModel(t, "twins-z", consequence.Faults{Refusals: 1})
		res, err := consequence.NewChecker(m).Properties(refusedA).Strategy(strategy).Run(context.Background())
		if err != nil || len(res.Violations) != 1 {
			t.Fatalf("%v: reached %v (%v), want the refusal", strategy, res.Violations, err)
		}
		want := []string{"n1 timer y", "n1 refuse-send test.Note to n2"}
		if got := pathStrings(res.Violations[0].Path); !slices.Equal(got, want) {
			t.Errorf("%v: path %q, want %q", strategy, got, want)
		}
	}
}

// TestRefusalNoTrySendIsFree: a service that never calls TrySend explores
// the very same states, fingerprints included, with or without a
// refusal budget (the steering rounds' default budget is 1).
func TestRefusalNoTrySendIsFree(t *testing.T) {
	ctx := context.Background()
	seen := func(f consequence.Faults) []string {
		m := refModel(t, "plain", f)
		var fps []string
		all := consequence.Always("all", func(g *consequence.GlobalState) error {
			fps = append(fps, g.Fingerprint().String())
			return nil
		})
		if _, err := consequence.NewChecker(m).Workers(1).Properties(all).Run(ctx); err != nil {
			t.Fatal(err)
		}
		return fps
	}
	for _, f := range []consequence.Faults{{Resets: 1, Breaks: 1}, {Drops: 1}} {
		without := seen(f)
		f.Refusals = 1
		if with := seen(f); !slices.Equal(with, without) {
			t.Errorf("%+v: fingerprints %v, without refusals %v", f, with, without)
		}
	}
}

// TestRefusalBreaksAnnounced: the "announced" invariant holds in every
// state without refusals, and with one refusal it fails at depth 1, the
// path's last action the refusal; the path replays through a report.
func TestRefusalBreaksAnnounced(t *testing.T) {
	ctx := context.Background()
	for _, strategy := range []consequence.Strategy{consequence.BFS, consequence.Consequence} {
		m := refModel(t, "two", consequence.Faults{})
		res, err := consequence.NewChecker(m).Properties(announced).Strategy(strategy).Run(ctx)
		if err != nil || len(res.Violations) != 0 {
			t.Fatalf("%v without refusals: %v, %v", strategy, res.Violations, err)
		}
		m = refModel(t, "two", consequence.Faults{Refusals: 1})
		res, err = consequence.NewChecker(m).Properties(announced).Strategy(strategy).Run(ctx)
		if err != nil || len(res.Violations) == 0 {
			t.Fatalf("%v with a refusal: no violation (%v)", strategy, err)
		}
		v := res.Violations[0]
		want := []string{"n1 refuse-send test.Note to n2"}
		if got := pathStrings(v.Path); !slices.Equal(got, want) || v.Depth != 1 {
			t.Fatalf("%v: violation at depth %d, path %q; want %q", strategy, v.Depth, got, want)
		}
		last := v.Path[len(v.Path)-1]
		if !last.Local || !last.Fault || last.Node != 0 {
			t.Errorf("the refusal is %+v, want a local fault of n1 (index 0)", last)
		}
		rep, err := m.Report(v)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rep)
		if err != nil || !strings.Contains(string(b), `"kind":"refuse-send"`) {
			t.Fatalf("report %s, %v", b, err)
		}
		var back consequence.ActorReport
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if _, g, err := m.ReplayReport(back, []consequence.Property[*consequence.GlobalState]{announced}); err != nil || g.Refusals() != 1 {
			t.Fatalf("replay: %v (refusals %d)", err, g.Refusals())
		}
		// On a model without the budget the refusal is not enabled.
		if _, _, err := refModel(t, "two", consequence.Faults{}).ReplayReport(back, nil); err == nil {
			t.Error("the report replayed on a model without refusals")
		}
	}
}

// TestRefusalOnlyFromTheWindow: once node 1 has handled another event (the
// ack of A), B, still in flight, can no longer be refused; before it, it
// can.
func TestRefusalOnlyFromTheWindow(t *testing.T) {
	ctx := context.Background()
	logIs := func(want ...string) func(*consequence.GlobalState) bool {
		return func(g *consequence.GlobalState) bool { return slices.Equal(refNode(g, 1).Log, want) }
	}
	late := refReached("refused-after-ack", logIs("ack", "refused B"))
	early := refReached("refused-before-ack", logIs("refused B", "ack"))
	for _, strategy := range []consequence.Strategy{consequence.BFS, consequence.Consequence} {
		m := refModel(t, "ack", consequence.Faults{Refusals: 1})
		res, err := consequence.NewChecker(m).Properties(late, early).Strategy(strategy).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, v := range res.Violations {
			names = append(names, v.Property)
		}
		if !slices.Equal(names, []string{"refused-before-ack"}) {
			t.Errorf("%v: reached %v, want only refused-before-ack", strategy, names)
		}
	}
	// Step by step: after the ack, no refusal is enabled.
	m := refModel(t, "ack", consequence.Faults{Refusals: 1})
	g := m.Start()
	for _, a := range []consequence.ActorAction{
		{Kind: consequence.ActDeliver, Node: 2, Peer: 1, Msg: refNote{"A"}},
		{Kind: consequence.ActDeliver, Node: 1, Peer: 2, Msg: refNote{"ack"}},
	} {
		if refusals(m, g) == 0 {
			t.Fatalf("before %v: no refusal enabled", a)
		}
		next, ok := m.Next(g, a)
		if !ok {
			t.Fatalf("%v not enabled", a)
		}
		g = next
	}
	if n := refusals(m, g); n != 0 {
		t.Errorf("after the ack: %d refusals enabled, want 0", n)
	}
	if _, ok := m.Next(g, consequence.ActorAction{Kind: consequence.ActRefuse, Node: 1, Peer: 2, Msg: refNote{"B"}}); ok {
		t.Error("B refused after n1 handled the ack")
	}
}

// refusals counts the refusal actions enabled in g.
func refusals(m *consequence.ActorModel, g *consequence.GlobalState) int {
	n := 0
	for _, a := range m.Actions(g, nil) {
		if a.Act.Kind == consequence.ActRefuse {
			n++
		}
	}
	return n
}

// TestRefusalsInSendOrder: one step's two TrySends may both be refused,
// as a shell refuses them, in the order they were sent: after A's refusal
// B is still refusable (its handler ran, but a shell reports every refusal
// of a step before any other event), after B's, A is not.
func TestRefusalsInSendOrder(t *testing.T) {
	logIs := func(want ...string) func(*consequence.GlobalState) bool {
		return func(g *consequence.GlobalState) bool { return slices.Equal(refNode(g, 1).Log, want) }
	}
	inOrder := refReached("in-order", logIs("refused A", "refused B"))
	reversed := refReached("reversed", logIs("refused B", "refused A"))
	for _, strategy := range []consequence.Strategy{consequence.BFS, consequence.Consequence} {
		m := refModel(t, "two", consequence.Faults{Refusals: 2})
		res, err := consequence.NewChecker(m).Properties(inOrder, reversed).Strategy(strategy).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, v := range res.Violations {
			names = append(names, v.Property)
		}
		if !slices.Equal(names, []string{"in-order"}) {
			t.Errorf("%v: reached %v, want only in-order", strategy, names)
		}
	}
	// What a refusal leaves of the window (C) is gone once node 1 handles
	// anything but a refusal (the ack of B).
	m := refModel(t, "ack2", consequence.Faults{Refusals: 2})
	g := m.Start()
	for _, a := range []consequence.ActorAction{
		{Kind: consequence.ActRefuse, Node: 1, Peer: 2, Msg: refNote{"A"}},
		{Kind: consequence.ActDeliver, Node: 2, Peer: 1, Msg: refNote{"B"}},
		{Kind: consequence.ActDeliver, Node: 1, Peer: 2, Msg: refNote{"ack"}},
	} {
		if n := refusals(m, g); n == 0 {
			t.Fatalf("before %v: no refusal enabled", a)
		}
		next, ok := m.Next(g, a)
		if !ok {
			t.Fatalf("%v not enabled", a)
		}
		g = next
	}
	if n := refusals(m, g); n != 0 || len(g.InFlight(1, 2)) != 1 {
		t.Errorf("after the ack: %d refusals enabled (in flight %v)", n, g.InFlight(1, 2))
	}
}

// TestRefusalNeverToSelf: of node 1's TrySends to itself and to node 2,
// only the one to node 2 may be refused, as in both shells.
func TestRefusalNeverToSelf(t *testing.T) {
	m := refModel(t, "self", consequence.Faults{Refusals: 1})
	var got []string
	for _, a := range m.Actions(m.Start(), nil) {
		if a.Act.Kind == consequence.ActRefuse {
			got = append(got, a.Act.String()+" "+fmt.Sprint(a.Act.Msg))
		}
	}
	if want := []string{"n1 refuse-send test.Note to n2 A"}; !slices.Equal(got, want) {
		t.Errorf("refusals %q, want %q", got, want)
	}
	if self := m.Start().InFlight(1, 1); len(self) != 1 || self[0].Refusable {
		t.Errorf("in flight to itself: %v", self)
	}
	if _, ok := m.Next(m.Start(), consequence.ActorAction{Kind: consequence.ActRefuse, Node: 1, Peer: 1, Msg: refNote{"S"}}); ok {
		t.Error("a note to itself was refused")
	}
}

// TestRefusalKeepsOrder: refusing A leaves B and C, sent behind it, in the
// channel in order; every end state has n2 got B C (A refused) or A B C.
func TestRefusalKeepsOrder(t *testing.T) {
	m := refModel(t, "order", consequence.Faults{Refusals: 1})
	g, ok := m.Next(m.Start(), consequence.ActorAction{Kind: consequence.ActRefuse, Node: 1, Peer: 2, Msg: refNote{"A"}})
	if !ok {
		t.Fatal("refusing A: not enabled")
	}
	if got := fmt.Sprint(g.InFlight(1, 2)); got != "[{n1 n2 0 B} {n1 n2 0 C}]" {
		t.Errorf("in flight after refusing A: %s", got)
	}
	if got := refNode(g, 1).Log; !slices.Equal(got, []string{"refused A"}) {
		t.Errorf("n1's log: %v", got)
	}
	// B and C were sent with Send: never refusable.
	if _, ok := m.Next(m.Start(), consequence.ActorAction{Kind: consequence.ActRefuse, Node: 1, Peer: 2, Msg: refNote{"B"}}); ok {
		t.Error("B, sent with Send, was refused")
	}
	ends := map[string]bool{}
	end := consequence.Always("end", func(g *consequence.GlobalState) error {
		if len(g.InFlight(1, 2)) == 0 {
			ends[strings.Join(refNode(g, 2).Got, " ")] = true
		}
		return nil
	})
	if _, err := consequence.NewChecker(m).Workers(1).Properties(end).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"A B C": true, "B C": true}; fmt.Sprint(ends) != fmt.Sprint(want) {
		t.Errorf("end states: %v, want %v", ends, want)
	}
}

// TestRefusalBudget: along no path are more sends refused than
// Faults.Refusals, and the budget is reached.
func TestRefusalBudget(t *testing.T) {
	for budget := 0; budget <= 3; budget++ {
		most := 0
		p := consequence.Always("count", func(g *consequence.GlobalState) error {
			most = max(most, g.Refusals())
			if g.Refusals() > budget {
				return fmt.Errorf("%d refusals", g.Refusals())
			}
			return nil
		})
		m := refModel(t, "retry", consequence.Faults{Refusals: budget})
		res, err := consequence.NewChecker(m).Workers(1).Properties(p).Run(context.Background())
		if err != nil || len(res.Violations) != 0 || most != budget {
			t.Errorf("budget %d: most %d refusals, violations %v, %v", budget, most, res.Violations, err)
		}
	}
	if _, err := consequence.NewActorModel(refSpec("two"), consequence.ActorOptions{N: 2, Faults: consequence.Faults{Refusals: -1}}); err == nil {
		t.Error("a negative refusal budget was accepted")
	}
}

// TestRefusalWalks: random walks take refusals by their weight: every walk
// does when they weigh much more than the other actions, none when they
// weigh 0.
func TestRefusalWalks(t *testing.T) {
	ctx := context.Background()
	refused := consequence.Eventually("refused", func(g *consequence.GlobalState) error {
		if slices.ContainsFunc(refNode(g, 1).Log, func(s string) bool { return strings.HasPrefix(s, "refused") }) {
			return nil
		}
		return fmt.Errorf("nothing refused")
	})
	m := refModel(t, "two", consequence.Faults{Refusals: 1})
	const seed = 7
	opts := consequence.WalkOptions[consequence.ActorAction]{Seed: seed, Walks: 20, DMax: 5,
		Weight: consequence.KindWeights(map[consequence.ActorActionKind]float64{consequence.ActRefuse: 1e6})}
	res, err := consequence.RandomWalks(ctx, m, []consequence.Property[*consequence.GlobalState]{refused}, opts)
	if err != nil || res.Live != res.Walks || res.Walks != 20 {
		t.Fatalf("seed %d: %d of %d walks refused a send (%v)", seed, res.Live, res.Walks, err)
	}
	opts.Weight = consequence.KindWeights(map[consequence.ActorActionKind]float64{consequence.ActRefuse: 0})
	res, err = consequence.RandomWalks(ctx, m, []consequence.Property[*consequence.GlobalState]{refused}, opts)
	if err != nil || res.Live != 0 || res.Suspect == nil {
		t.Fatalf("seed %d, refusals weighing 0: %d walks refused a send (%v)", seed, res.Live, err)
	}
}

// TestRefusalDeterministic: the same search with 1 and 4 workers reaches
// the same states and violations with the same paths.
func TestRefusalDeterministic(t *testing.T) {
	run := func(workers int) string {
		m := refModel(t, "retry", consequence.Faults{Refusals: 2, Resets: 1, Breaks: 1})
		res, err := consequence.NewChecker(m).Workers(workers).Properties(announced).MaxViolations(100).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprint(res.Unique, res.DepthCounts)
		for _, v := range res.Violations {
			s += fmt.Sprint(v.Depth, pathStrings(v.Path))
		}
		return s
	}
	if a, b := run(1), run(4); a != b {
		t.Errorf("1 worker: %s\n4 workers: %s", a, b)
	}
}

// TestRefuseString renders the action.
func TestRefuseString(t *testing.T) {
	a := consequence.ActorAction{Kind: consequence.ActRefuse, Node: 1, Peer: 2, Msg: refNote{"A"}}
	if got := a.String(); got != "n1 refuse-send test.Note to n2" {
		t.Errorf("String = %q", got)
	}
}
