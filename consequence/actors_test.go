package consequence_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// apply runs the action of g whose String is want, failing if there is
// none.
func apply(t testing.TB, m *consequence.ActorModel, g *consequence.GlobalState, want string) *consequence.GlobalState {
	t.Helper()
	var names []string
	for _, a := range m.Actions(g, nil) {
		if a.Act.String() == want {
			next, ok := m.Next(g, a.Act)
			if !ok {
				t.Fatalf("%s: not enabled", want)
			}
			return next
		}
		names = append(names, a.Act.String())
	}
	t.Fatalf("no action %q among %q", want, names)
	return nil
}

// figure2Steps are the ten events after the three inits of
// services/randtree/testdata/figure2.txt, up to its first "state".
var figure2Steps = []string{
	"n9 app randtree.JoinOverlay",
	"n13 app randtree.JoinOverlay",
	"n13 deliver randtree.Join from n9",
	"n9 deliver randtree.Join from n13",
	"n13 deliver randtree.JoinReply from n9",
	"n1 app randtree.JoinOverlay",
	"n9 deliver randtree.Join from n1",
	"n1 deliver randtree.Join from n9",
	"n9 deliver randtree.JoinReply from n1",
	"n13 deliver randtree.NewRoot from n9",
}

// figure2Start runs the 13 steps of the first row of the paper's Figure 2
// through an actor model of n1, n9 and n13, checks the state the scenario
// script shows, and builds a model from the nodes' checkpoints there (with
// opts), as a gathered snapshot would.
func figure2Start(t testing.TB, ro randtree.Options, opts consequence.ActorOptions) *consequence.ActorModel {
	t.Helper()
	spec := randtree.NewSpec(ro)
	targets := map[node.ID][]node.ID{1: {9}, 9: {13}, 13: {9}}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{
		Nodes: []node.ID{1, 9, 13},
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: targets[id]}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Start()
	for _, step := range figure2Steps {
		g = apply(t, m, g, step)
	}
	want := map[node.ID]string{
		1:  "joined root=n1 parent=none children=[n9] siblings=[] peers=[n9] targets=[n9]",
		9:  "joined root=n1 parent=n1 children=[n13] siblings=[] peers=[n1 n13] targets=[n13]",
		13: "joined root=n1 parent=n9 children=[] siblings=[] peers=[n1 n9] targets=[n9]",
	}
	var cps []consequence.Checkpoint
	for _, id := range g.Nodes() {
		if got := fmt.Sprint(g.Service(id)); got != want[id] {
			t.Fatalf("%v: %s, want %s", id, got, want[id])
		}
		if !g.TimerScheduled(id, randtree.TimerRecovery) {
			t.Fatalf("%v: no recovery timer", id)
		}
		st, now, _ := g.NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: now})
	}
	for _, from := range g.Nodes() {
		for _, to := range g.Nodes() {
			if env := g.InFlight(from, to); len(env) != 0 {
				t.Fatalf("%v -> %v: %d messages in flight after the scenario", from, to, len(env))
			}
		}
	}
	pm, err := consequence.NewActorModelFromCheckpoints(spec, cps, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

func figure2Props(m *consequence.ActorModel) []consequence.Property[*consequence.GlobalState] {
	var out []consequence.Property[*consequence.GlobalState]
	for _, p := range m.Properties() {
		if p.Name == consequence.CrashProperty || p.Name == randtree.ChildrenSiblingsDisjoint {
			out = append(out, p)
		}
	}
	return out
}

// figure2Budget is the state budget of the Figure 2 prediction tests.
const figure2Budget = 20_000

// TestFigure2Prediction is the paper's §1.2 prediction: from the live state
// of Figure 2's first row, consequence prediction with silent resets finds
// the children ∩ siblings violation through n13's silent reset and rejoin;
// the path replays to it; with the paper's fixes it is not found in the
// same budget.
func TestFigure2Prediction(t *testing.T) {
	opts := consequence.ActorOptions{Faults: consequence.Faults{Resets: 1, SilentResets: true}}
	m := figure2Start(t, randtree.DefaultOptions(), opts)
	start := time.Now()
	res, err := consequence.NewChecker(m).
		Properties(figure2Props(m)...).
		Strategy(consequence.Consequence).
		MaxStates(figure2Budget).
		StopOnViolation(true).
		Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, ok := res.Violated(randtree.ChildrenSiblingsDisjoint)
	if !ok {
		t.Fatalf("no violation of %s in %d states (stop: %v)", randtree.ChildrenSiblingsDisjoint, res.Unique, res.Stop)
	}
	var path []string
	for _, a := range v.Path {
		path = append(path, a.Act.String())
	}
	t.Logf("found at depth %d after %d unique states (%d generated, %d pruned) in %v: %s; %v",
		v.Depth, res.Unique, res.Generated, res.Pruned, time.Since(start).Round(time.Millisecond), strings.Join(path, ", "), v.Err)
	for _, want := range []string{
		"n13 reset silent",
		"n13 app randtree.JoinOverlay",
		"n9 deliver randtree.UpdateSibling from n1",
	} {
		if !slices.Contains(path, want) {
			t.Errorf("path %q lacks %q", path, want)
		}
	}
	joinAtRoot := slices.ContainsFunc(v.Path, func(a consequence.Action[consequence.ActorAction]) bool {
		return a.Act.Kind == consequence.ActDeliver && a.Act.Node == 1 && a.Act.Msg != nil && a.Act.Msg.MessageType() == "randtree.Join"
	})
	if !joinAtRoot {
		t.Errorf("path %q delivers no Join at n1", path)
	}
	if !strings.Contains(v.Err.Error(), "n9: n13 is both a child and a sibling") {
		t.Errorf("violation %q", v.Err)
	}
	end, err := consequence.Replay[*consequence.GlobalState, consequence.ActorAction](m, v.Start, v.Path)
	if err != nil {
		t.Fatal(err)
	}
	if end.Fingerprint() != v.Fingerprint {
		t.Fatalf("replay reached %v, violation at %v", end.Fingerprint(), v.Fingerprint)
	}
	if err := randtree.SafetyProperties()[0].Check(end); err == nil || err.Error() != v.Err.Error() {
		t.Fatalf("replayed state: %v, want %v", err, v.Err)
	}

	checkReportRoundTrip(t, m, v, figure2Props(m))

	// The exhaustive baseline from the same state, for comparison.
	bres, err := consequence.NewChecker(m).
		Properties(figure2Props(m)...).
		MaxStates(figure2Budget).
		StopOnViolation(true).
		Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if bv, ok := bres.Violated(randtree.ChildrenSiblingsDisjoint); ok {
		t.Logf("bfs: found at depth %d after %d unique states", bv.Depth, bres.Unique)
	} else {
		t.Logf("bfs: not found in %d unique states, depth %d", bres.Unique, bres.Depth)
	}

	fixed := figure2Start(t, randtree.AllFixes(), opts)
	fres, err := consequence.NewChecker(fixed).
		Properties(figure2Props(fixed)...).
		Strategy(consequence.Consequence).
		MaxStates(figure2Budget).
		Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(fres.Violations) != 0 {
		t.Fatalf("fixed RandTree: %v after %d states", fres.Violations[0].Err, fres.Unique)
	}
	t.Logf("fixed: no violation in %d unique states, depth %d (stop: %v)", fres.Unique, fres.Depth, fres.Stop)
}

// TestActorDeterminism: the same search from Figure 2's live state, with
// the same state budget, finds the same states and violations with 1 and 2
// workers, packed or not. The budget of 1,000 states cuts BFS's level 6
// part-way (348 of its 826 states), after its first violation (at depth
// 5); consequence prediction completes in 109 states.
func TestActorDeterminism(t *testing.T) {
	opts := consequence.ActorOptions{Faults: consequence.Faults{Resets: 1, SilentResets: true}}
	run := func(workers int, strategy consequence.Strategy, pack bool) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
		m := figure2Start(t, randtree.DefaultOptions(), opts)
		c := consequence.NewChecker(m).
			Properties(m.Properties()...).
			Strategy(strategy).
			MaxStates(1000).
			MaxViolations(2).
			Workers(workers)
		res, err := consequence.SetPacking(consequence.SetMinParallel(c, 1), pack).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	summary := func(r *consequence.Result[*consequence.GlobalState, consequence.ActorAction]) string {
		var b strings.Builder
		fmt.Fprintf(&b, "unique=%d generated=%d pruned=%d depth=%d counts=%v stop=%v\n", r.Unique, r.Generated, r.Pruned, r.Depth, r.DepthCounts, r.Stop)
		for _, v := range r.Violations {
			fmt.Fprintf(&b, "%s@%d %v:", v.Property, v.Depth, v.Fingerprint)
			for _, a := range v.Path {
				fmt.Fprintf(&b, " %v;", a.Act)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	for _, s := range []consequence.Strategy{consequence.BFS, consequence.Consequence} {
		one, two := summary(run(1, s, false)), summary(run(2, s, false))
		if one != two {
			t.Fatalf("%v: 1 worker:\n%s2 workers:\n%s", s, one, two)
		}
		// A packed search (levels as words, states rebuilt to be
		// expanded) finds the same, on one worker and on two.
		for _, w := range []int{1, 2} {
			if packed := summary(run(w, s, true)); packed != one {
				t.Fatalf("%v, %d workers: packed:\n%sunpacked:\n%s", s, w, packed, one)
			}
		}
		if !strings.Contains(one, "@") {
			t.Fatalf("%v: no violation recorded:\n%s", s, one)
		}
		t.Logf("%v: %s", s, strings.SplitN(one, "\n", 2)[0])
	}
}

// pingSvc is a tiny service for the crash and dummy-node tests: node 1
// sends Ping to To on its "tick" timer; a node that receives a Ping with
// Boom set panics.
type pingSvc struct {
	Got  int
	To   node.ID `msgpack:"-"`
	Boom bool    `msgpack:"-"`
}

type ping struct{ N int }

func (ping) MessageType() string { return "test.Ping" }

func (s *pingSvc) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("tick", time.Second)
	}
}
func (s *pingSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	if s.Boom {
		panic("boom")
	}
	s.Got++
}
func (s *pingSvc) HandleTimer(env node.Env, name string)           { env.Send(s.To, ping{N: 1}) }
func (s *pingSvc) HandleApp(env node.Env, call node.Message)       {}
func (s *pingSvc) HandleTransportError(env node.Env, peer node.ID) {}

func pingSpec(to node.ID, boom bool) node.Spec {
	return node.Spec{
		Name:     "ping",
		New:      func() node.Service { return &pingSvc{To: to, Boom: boom} },
		Messages: []node.Message{ping{}},
	}
}

// TestActorCrash: a panic in a handler is a violation of the crash
// property with its path, not a crash of the search.
func TestActorCrash(t *testing.T) {
	m, err := consequence.NewActorModel(pingSpec(2, true), consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).
		Properties(m.Properties()...).
		Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, ok := res.Violated(consequence.CrashProperty)
	if !ok {
		t.Fatalf("no crash found: %+v", res)
	}
	var path []string
	for _, a := range v.Path {
		path = append(path, a.Act.String())
	}
	if want := []string{"n1 timer tick", "n2 deliver test.Ping from n1"}; !slices.Equal(path, want) {
		t.Fatalf("path %q, want %q", path, want)
	}
	var c *consequence.Crash
	if !errors.As(v.Err, &c) || c.Node != 2 || c.Value != "boom" || !strings.Contains(c.Error(), "message test.Ping from n1") {
		t.Fatalf("crash %v (%#v)", v.Err, c)
	}
	checkReportRoundTrip(t, m, v, m.Properties())
	if acts := m.Actions(v.State, nil); len(acts) != 0 {
		t.Fatalf("crashed state has actions %v", acts)
	}
	if res.Unique != 3 || v.Depth != 2 {
		t.Fatalf("search: %v, %d states, violation at depth %d", res.Stop, res.Unique, v.Depth)
	}
}

// TestActorDummyNode: messages to nodes outside the snapshot vanish;
// messages from outside in the snapshot's channels are delivered.
func TestActorDummyNode(t *testing.T) {
	m, err := consequence.NewActorModel(pingSpec(99, false), consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	g := apply(t, m, m.Start(), "n1 timer tick")
	if g.Fingerprint() == m.Start().Fingerprint() {
		t.Fatal("firing the timer did not change the state")
	}
	if got := m.Actions(g, nil); len(got) != 0 {
		t.Fatalf("actions after a send to an outsider: %v", got)
	}
	if g.Service(99) != nil || len(g.InFlight(1, 99)) != 0 || slices.Contains(g.Nodes(), 99) {
		t.Fatal("the outsider n99 appears in the state")
	}

	// From a snapshot: an envelope to an outsider is dropped, one from an
	// outsider is delivered.
	st, now, _ := m.Start().NodeState(2)
	b, err := st.AppendCheckpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := consequence.NewActorModelFromCheckpoints(pingSpec(99, false),
		[]consequence.Checkpoint{{ID: 2, Bytes: b, At: now}},
		[]node.Envelope{{From: 2, To: 7, Msg: ping{N: 1}}, {From: 7, To: 2, Msg: ping{N: 2}}},
		consequence.ActorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := sm.Start()
	if len(s.InFlight(2, 7)) != 0 || len(s.InFlight(7, 2)) != 1 {
		t.Fatalf("in flight: 2->7 %v, 7->2 %v", s.InFlight(2, 7), s.InFlight(7, 2))
	}
	s = apply(t, sm, s, "n2 deliver test.Ping from n7")
	if got := s.Service(2).(*pingSvc).Got; got != 1 {
		t.Fatalf("n2 got %d pings", got)
	}
}

// TestActorFingerprint: independent events commute to the same
// fingerprint; different states have different ones.
func TestActorFingerprint(t *testing.T) {
	targets := map[node.ID][]node.ID{1: {2}, 3: {4}}
	m, err := consequence.NewActorModel(randtree.NewSpec(randtree.DefaultOptions()), consequence.ActorOptions{
		N: 4,
		Workload: func(id node.ID, restart bool) []node.Message {
			if targets[id] == nil {
				return nil
			}
			return []node.Message{randtree.JoinOverlay{Targets: targets[id]}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Start()
	a, b := "n1 app randtree.JoinOverlay", "n3 app randtree.JoinOverlay"
	sa, sb := apply(t, m, s, a), apply(t, m, s, b)
	ab, ba := apply(t, m, sa, b), apply(t, m, sb, a)
	if ab.Fingerprint() != ba.Fingerprint() {
		t.Fatalf("a;b = %v, b;a = %v", ab.Fingerprint(), ba.Fingerprint())
	}
	if ab.String() != ba.String() {
		t.Fatalf("a;b:\n%sb;a:\n%s", ab, ba)
	}
	// Deliver the two Joins in either order as well.
	d1, d2 := "n2 deliver randtree.Join from n1", "n4 deliver randtree.Join from n3"
	x, y := apply(t, m, apply(t, m, ab, d1), d2), apply(t, m, apply(t, m, ba, d2), d1)
	if x.Fingerprint() != y.Fingerprint() {
		t.Fatal("deliveries in either order differ")
	}
	seen := map[node.Hash]string{}
	for name, g := range map[string]*consequence.GlobalState{"start": s, "a": sa, "b": sb, "ab": ab, "ab+d1": apply(t, m, ab, d1), "x": x} {
		if prev, ok := seen[g.Fingerprint()]; ok {
			t.Fatalf("%s and %s share fingerprint %v", prev, name, g.Fingerprint())
		}
		seen[g.Fingerprint()] = name
	}
	// The start state is unchanged by all of this (immutability).
	if fresh, _ := consequence.NewActorModel(randtree.NewSpec(randtree.DefaultOptions()), consequence.ActorOptions{N: 4, Workload: func(id node.ID, _ bool) []node.Message {
		if targets[id] == nil {
			return nil
		}
		return []node.Message{randtree.JoinOverlay{Targets: targets[id]}}
	}}); fresh.Start().Fingerprint() != s.Fingerprint() || fresh.Start().String() != s.String() {
		t.Fatal("the start state changed")
	}
}

// TestActorFaults: a reset with RST keeps what the node had sent and
// queues a transport error for the peer after it (the emulator delivers
// both); a break discards what is in flight and queues a transport error
// both ways.
func TestActorFaults(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	wl := func(id node.ID, restart bool) []node.Message {
		return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
	}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Workload: wl, Faults: consequence.Faults{Resets: 1, Breaks: 1}})
	if err != nil {
		t.Fatal(err)
	}
	g := apply(t, m, m.Start(), "n1 app randtree.JoinOverlay") // n1 becomes root
	g = apply(t, m, g, "n2 app randtree.JoinOverlay")          // Join to n1
	if !g.Connected(1, 2) {
		t.Fatal("no connection after a send")
	}
	r := apply(t, m, g, "n2 reset rst")
	if got := r.InFlight(2, 1); len(got) != 2 || got[0].Msg == nil || got[1].Msg != nil {
		t.Fatalf("2->1 after reset: %v, want the Join then a transport error", got)
	}
	if r.Connected(1, 2) || len(r.Pending(2)) != 1 || r.Resets() != 1 {
		t.Fatalf("after reset: connected %v, pending %v, resets %d", r.Connected(1, 2), r.Pending(2), r.Resets())
	}
	r = apply(t, m, apply(t, m, r, "n1 deliver randtree.Join from n2"), "n1 transport-error from n2")
	for _, a := range m.Actions(r, nil) {
		if a.Act.Kind == consequence.ActReset {
			t.Fatalf("reset budget exceeded: %v", a.Act)
		}
	}
	b := apply(t, m, g, "n1 break n2")
	if got := b.InFlight(1, 2); len(got) != 1 || got[0].Msg != nil {
		t.Fatalf("1->2 after break: %v", got)
	}
	if got := b.InFlight(2, 1); len(got) != 1 || got[0].Msg != nil {
		t.Fatalf("2->1 after break: %v", got)
	}
}

// TestActorFromEmulator builds a model from an emulated RandTree run and
// checks that it holds the emulator's node states and in-flight messages.
func TestActorFromEmulator(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	e, err := emulation.New(emulation.Config{
		Spec: spec, Nodes: 8, Seed: 1,
		Workload: func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Stop at the first moment after the nodes started joining at which
	// several messages are in flight.
	var inflight []node.Envelope
	for e.Step() {
		if inflight = e.InFlight(); e.Elapsed() > 5*time.Second && len(inflight) >= 2 {
			break
		}
	}
	if err := e.Err(); err != nil || len(inflight) < 2 {
		t.Fatalf("emulation: %v, %d in flight", err, len(inflight))
	}
	m, err := consequence.NewActorModelFromLive(spec, e, consequence.ActorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Start()
	if !slices.Equal(g.Nodes(), e.View().Nodes()) {
		t.Fatalf("nodes %v, emulator %v", g.Nodes(), e.View().Nodes())
	}
	for _, id := range g.Nodes() {
		want, _ := e.Core(id).Hash()
		st, _, _ := g.NodeState(id)
		if got, _ := st.Hash(); got != want {
			t.Fatalf("%v: state hash differs", id)
		}
	}
	n := 0
	for _, from := range g.Nodes() {
		for _, to := range g.Nodes() {
			var want []string
			for _, env := range inflight {
				if env.From == from && env.To == to {
					want = append(want, fmt.Sprint(env.Msg))
				}
			}
			var got []string
			for _, env := range g.InFlight(from, to) {
				got = append(got, fmt.Sprint(env.Msg))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%v -> %v: model %q, emulator %q", from, to, got, want)
			}
			n += len(got)
		}
	}
	if n != len(inflight) {
		t.Fatalf("%d messages in flight in the model, %d in the emulator", n, len(inflight))
	}
	t.Logf("%d nodes, %d messages in flight", len(g.Nodes()), n)
	res, err := consequence.NewChecker(m).
		Properties(m.Properties()...).MaxStates(2000).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Unique == 0 {
		t.Fatal("nothing explored")
	}
}

// checkReportRoundTrip turns v into a report, through JSON and back, and
// replays it; a tampered report is refused.
func checkReportRoundTrip(t *testing.T, m *consequence.ActorModel, v consequence.Violation[*consequence.GlobalState, consequence.ActorAction], props []consequence.Property[*consequence.GlobalState]) {
	t.Helper()
	rep, err := m.Report(v)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back consequence.ActorReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	path, end, err := m.ReplayReport(back, props)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if end.Fingerprint() != v.Fingerprint || len(path) != len(v.Path) {
		t.Fatalf("replayed report reached %v in %d steps, violation %v in %d", end.Fingerprint(), len(path), v.Fingerprint, len(v.Path))
	}
	for i := range path {
		if path[i].Act.String() != v.Path[i].Act.String() || path[i].Node != v.Path[i].Node || path[i].Local != v.Path[i].Local {
			t.Fatalf("step %d: %+v, want %+v", i, path[i], v.Path[i])
		}
	}
	back.Error = "something else"
	if _, _, err := m.ReplayReport(back, props); !errors.Is(err, consequence.ErrBadReport) {
		t.Fatalf("tampered report: %v", err)
	}
	back.Path = back.Path[:len(back.Path)-1]
	if _, _, err := m.ReplayReport(back, props); !errors.Is(err, consequence.ErrBadReport) {
		t.Fatalf("truncated report: %v", err)
	}
}
