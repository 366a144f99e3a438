package steering

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// fakeHost is the layer.RuntimeHost of a runtime that is not there: the test
// goroutine plays the core goroutine and calls the hooks itself.
type fakeHost struct {
	core *node.Core
	woke chan struct{}
}

func newFakeHost(core *node.Core) *fakeHost {
	return &fakeHost{core: core, woke: make(chan struct{}, 16)}
}

func (h *fakeHost) ID() node.ID                 { return h.core.ID() }
func (h *fakeHost) Checkpoint() ([]byte, error) { return h.core.Checkpoint() }
func (h *fakeHost) Service() node.Service       { return h.core.Service() }
func (h *fakeHost) Core() *node.Core            { return h.core }
func (h *fakeHost) Wake() {
	select {
	case h.woke <- struct{}{}:
	default:
	}
}

// awaitRound checks that the round (run at once by the SyncRunner) was
// handed back and woke the host, then applies it as a pipeline would
// (NextTick has come, Tick).
func awaitRound(t *testing.T, l *Layer, h *fakeHost) { t.Helper(); applyRound(t, l, h) }

// applyRound is awaitRound returning what the layer's Tick sent.
func applyRound(t *testing.T, l *Layer, h *fakeHost) []node.Envelope {
	t.Helper()
	select {
	case <-h.woke:
	default:
		t.Fatal("no round result")
	}
	now := time.Now()
	if at := l.NextTick(); at.IsZero() || at.After(now) {
		t.Fatalf("a round result is waiting but NextTick = %v", at)
	}
	out, err := l.Tick(now)
	if err != nil {
		t.Fatal(err)
	}
	if at := l.NextTick(); !at.IsZero() && !at.After(now) {
		t.Fatalf("NextTick = %v after Tick applied every result", at)
	}
	return out
}

// figure2 returns the snapshot of Figure 2's live state gathered at n9
// (nothing in flight).
func figure2(t testing.TB, spec node.Spec) *snapshot.Snapshot {
	t.Helper()
	s, err := paper.Figure2Snapshot(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// BeforeUpdateSibling walks Figure 2's violating path up to the step
// before the last — n13 has reset and rejoined through n9, n1 has placed it
// and told n9 — and returns n9's core there and the UpdateSibling in flight
// from n1, and the global state there. (Exported for the package's
// external tests; this file is compiled only into its tests.)
func BeforeUpdateSibling(t testing.TB, spec node.Spec) (*node.Core, node.Event, *consequence.GlobalState) {
	t.Helper()
	cps, err := paper.Figure2(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := consequence.NewActorModelFromCheckpoints(spec, cps, nil, consequence.ActorOptions{Faults: consequence.Faults{Resets: 1, SilentResets: true}})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Start()
	for _, step := range []string{
		"n13 reset silent",
		"n13 app randtree.JoinOverlay",
		"n9 deliver randtree.Join from n13",
		"n1 deliver randtree.Join from n9",
	} {
		var next *consequence.GlobalState
		for _, a := range m.Actions(g, nil) {
			if a.Act.String() == step {
				next, _ = m.Next(g, a.Act)
				break
			}
		}
		if next == nil {
			t.Fatalf("step %q not enabled", step)
		}
		g = next
	}
	in := g.InFlight(1, 9)
	if len(in) == 0 || in[0].Msg == nil || in[0].Msg.MessageType() != "randtree.UpdateSibling" {
		t.Fatalf("in flight n1 -> n9: %v", in)
	}
	st, now, _ := g.NodeState(9)
	clone, err := st.Clone(spec.New)
	if err != nil {
		t.Fatal(err)
	}
	core, err := node.NewCore(node.CoreConfig{ID: 9, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	core.SetState(clone, now)
	return core, node.Event{Kind: node.EventMessage, From: 1, Msg: in[0].Msg, At: now}, g
}

// StartSnapshot is the start state of an actor model of spec over ids (after
// every Init) as the snapshot gatherer would gather it, in-flight messages
// included. (Exported for the package's external tests; this file is
// compiled only into its tests.)
func StartSnapshot(t testing.TB, spec node.Spec, ids []node.ID, gatherer node.ID) *snapshot.Snapshot {
	t.Helper()
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{Nodes: ids})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Start()
	s := &snapshot.Snapshot{Gatherer: gatherer, CN: 3}
	for _, id := range ids {
		st, now, _ := g.NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: id, CN: 3, State: b})
		s.At = now
	}
	for _, to := range ids {
		for _, from := range ids {
			ch := snapshot.Channel{From: from, To: to, Complete: true}
			for _, env := range g.InFlight(from, to) {
				env.CN = 3
				ch.Messages = append(ch.Messages, env)
			}
			s.Channels = append(s.Channels, ch)
		}
	}
	return s
}

// newTestLive builds a Layer for spec attached to a fake host around core,
// started, with a SyncRunner (no virtual cost) unless cfg has a runner.
func newTestLive(t testing.TB, cfg LayerConfig, core *node.Core) (*Layer, *fakeHost) {
	t.Helper()
	reg, err := cfg.Controller.Spec.Registry()
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := snapshot.NewLayer(snapshot.Config{Registry: reg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Runner == nil {
		cfg.Runner = &SyncRunner{}
	}
	l, err := NewLayer(cfg, snaps)
	if err != nil {
		t.Fatal(err)
	}
	h := newFakeHost(core)
	if err := l.Attach(h); err != nil {
		t.Fatal(err)
	}
	l.Start(time.Now())
	t.Cleanup(l.Stop)
	return l, h
}

func figure2Config(mode Mode, spec node.Spec) Config {
	return Config{
		Mode:     mode,
		Spec:     spec,
		Workload: paper.Figure2Workload,
		Faults:   consequence.Faults{Resets: 1, SilentResets: true},

		// No MaxTime, though a live shell sets one: a wall-time bound
		// would make the rounds' outcomes depend on the machine's load.

		// The layers of these tests have no snapshot of the others, so
		// they judge RandTree's liveness properties on n9 alone, where
		// OneRoot fails; their holds outlast the default bound on
		// purpose. The liveness budget has tests of its own.
		Liveness:           LivenessBudget{DefaultBound: time.Hour},
		LivenessWalks:      LivenessWalks{MaxWalkSteps: Figure2WalkSteps},
		InterventionPolicy: InterventionPolicy{BreakConnection: true},
	}
}

// Figure2WalkSteps is the liveness search's budget (Config.MaxWalkSteps)
// of the rounds of the Figure 2 tests (figure2Config, and controller in
// the external tests): a tenth of DefaultMaxWalkSteps. Their safety search
// takes about 600 states, and the liveness search spends whatever budget
// it gets without a prediction — from Figure 2's state judging a suspect,
// from the initial state probing which liveness properties a walk
// satisfies — so with the default its 40,000 steps were 95% of a round's
// cost (about 1.1 s under the race detector). These tests assert on the
// safety predictions and their filters, which the budget does not touch.
const Figure2WalkSteps = 4000

// TestLiveFilterDropsExactlyTheTargetedMessage: a steering round on
// Figure 2's snapshot, run by the layer's runner, installs the paper's
// filter at n9 when the result is applied on the core goroutine (Tick); the gate
// then drops (and breaks the connection for) the Join from n13 and nothing
// else — not a Join from n1, not another message from n13, not a timer.
// A round on a state with nothing bad ahead removes the filter.
func TestLayerFilterDropsExactlyTheTargetedMessage(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, _, _ := BeforeUpdateSibling(t, spec)
	var rounds []*RoundReport
	cfg := LayerConfig{Controller: figure2Config(Steer, spec), OnRound: func(_ *snapshot.Snapshot, rep *RoundReport) { rounds = append(rounds, rep) }}
	l, h := newTestLive(t, cfg, core)

	if st := l.Status(); st.Mode != "steer" || len(st.Filters) != 0 || st.Rounds != 0 {
		t.Fatalf("status before a round: %+v", st)
	}
	l.Gathered(figure2(t, spec))
	awaitRound(t, l, h)
	st := l.Status()
	want := "n9: drop+break randtree.Join from n13"
	if st.Rounds != 1 || st.StatesExplored == 0 || st.Predicted[randtree.ChildrenSiblingsDisjoint] == 0 ||
		st.FiltersInstalled == 0 || !slices.Equal(st.Filters, []string{want}) || st.LastRound == nil || st.LastRoundCN != 7 || st.Running {
		t.Fatalf("status after the round: %+v", st)
	}
	if len(rounds) != 1 || len(rounds[0].Predictions) == 0 {
		t.Fatalf("OnRound saw %d rounds: %+v", len(rounds), rounds)
	}

	now := time.Now()
	join := randtree.Join{}
	cases := []struct {
		ev   node.Event
		want layer.Verdict
	}{
		{node.Event{Kind: node.EventMessage, From: 13, Msg: join, At: now}, layer.Verdict{Break: true}},
		{node.Event{Kind: node.EventMessage, From: 1, Msg: join, At: now}, layer.Verdict{Handle: true}},
		{node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: now}, layer.Verdict{Handle: true}},
		{node.Event{Kind: node.EventTimer, Timer: "recovery", At: now}, layer.Verdict{Handle: true}},
		{node.Event{Kind: node.EventTransportError, Peer: 13, At: now}, layer.Verdict{Handle: true}},
	}
	for _, c := range cases {
		v, out, err := l.Gate(now, c.ev, nil, false)
		if err != nil || len(out) != 0 || v != c.want {
			t.Errorf("%v: verdict %+v, %d sends, %v; want %+v", c.ev, v, len(out), err, c.want)
		}
	}
	// Before (a host without Gate) says the same, without the break.
	if handle, _, _ := l.Before(now, cases[0].ev, nil); handle {
		t.Error("Before let the filtered Join through")
	}
	if st := l.Status(); st.FilterHits != 2 || st.Events != 6 || st.Vetoes != 0 || st.ImmediateChecks != 0 {
		t.Errorf("counters after the events: %+v", st)
	}

	// Nothing bad ahead of the initial state: the next round's filter set
	// is empty, so the filter is gone.
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{Nodes: paper.Figure2Nodes})
	if err != nil {
		t.Fatal(err)
	}
	calm := &snapshot.Snapshot{Gatherer: 9, CN: 8}
	for _, id := range paper.Figure2Nodes {
		st, at, _ := m.Start().NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		calm.Nodes = append(calm.Nodes, snapshot.NodeCheckpoint{Node: id, CN: 8, State: b})
		calm.At = at
	}
	l.Gathered(calm)
	awaitRound(t, l, h)
	if st := l.Status(); st.Rounds != 2 || len(st.Filters) != 0 {
		t.Fatalf("status after a calm round: %+v", st)
	}
	if v, _, _ := l.Gate(now, cases[0].ev, nil, false); !v.Handle {
		t.Error("the Join from n13 is still filtered after a calm round")
	}
	l.Stop()
	l.Stop() // idempotent
}

// TestLivePostponesFilteredTimer: a timer filter postpones the timer by
// the PostponeDelay (the runtime delivers it again, node's tests show it);
// a retry is checked again but not counted again; once the filter is gone
// the retry runs. Past Config.MaxInterventions postponements the timer is
// escalated (held, not let through); it stays held a window later (no
// bound in time by default), and with a FilterHold of 10 s it runs past
// that, counted as an override.
func TestLayerPostponesFilteredTimer(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, _, _ := BeforeUpdateSibling(t, spec)
	cfg := LayerConfig{Controller: figure2Config(Steer, spec)}
	cfg.Controller.MaxInterventions = 3
	cfg.Controller.PostponeDelay = 300 * time.Millisecond
	l, _ := newTestLive(t, cfg, core)
	l.gate.Install([]Filter{{Kind: FilterTimer, Node: 9, Timer: "recovery"}, {Kind: FilterApp, Node: 9, Type: "randtree.JoinOverlay"}})

	now := time.Now()
	timer := node.Event{Kind: node.EventTimer, Timer: "recovery", Deadline: now, At: now}
	v, _, err := l.Gate(now, timer, nil, false)
	if err != nil || v.Handle || v.Break || !v.RetryAt.Equal(now.Add(300*time.Millisecond)) {
		t.Fatalf("timer verdict %+v, %v", v, err)
	}
	app := node.Event{Kind: node.EventApp, Msg: randtree.JoinOverlay{Targets: []node.ID{1}}, At: now}
	if v, _, _ := l.Gate(now, app, nil, false); v.Handle || v.RetryAt.IsZero() {
		t.Fatalf("app verdict %+v", v)
	}
	later := now.Add(300 * time.Millisecond)
	timer.At = later
	if v, _, _ := l.Gate(later, timer, nil, true); v.Handle || !v.RetryAt.Equal(later.Add(300*time.Millisecond)) {
		t.Fatalf("retry verdict %+v", v)
	}
	if st := l.Status(); st.FilterHits != 2 || st.Events != 2 {
		t.Fatalf("a retry was counted: %+v", st)
	}
	// Third postponement of the timer within the window, then the budget
	// is spent: the timer is escalated and held, not let through.
	if v, _, _ := l.Gate(later, timer, nil, true); v.Handle {
		t.Fatal("third attempt not postponed")
	}
	if v, _, _ := l.Gate(later, timer, nil, true); v.Handle {
		t.Fatal("the timer ran when its budget was spent: not escalated")
	}
	if st := l.Status(); st.Overrides != 0 || st.Escalations != 1 {
		t.Fatalf("overrides %d, escalations %d, want 0 and 1", st.Overrides, st.Escalations)
	}
	// Held a window later: no round has found it safe.
	timer.At = later.Add(time.Minute)
	if v, _, _ := l.Gate(timer.At, timer, nil, true); v.Handle {
		t.Fatal("the timer ran a window after its escalation, though nothing found it safe")
	}
	// With a bound in time (Config.FilterHold), past it the timer
	// runs, counted as an override.
	l.gate.cfg.FilterHold = 10 * time.Second
	if v, _, _ := l.Gate(timer.At, timer, nil, true); !v.Handle {
		t.Fatal("the timer is still postponed past its FilterHold")
	}
	if st := l.Status(); st.Overrides != 1 {
		t.Fatalf("overrides %d, want 1", st.Overrides)
	}
	// A new round's filters (none) replace these: the app call's retry runs.
	l.apply(&pendingRound{round: &Round{l: l, snap: &snapshot.Snapshot{}, rep: &RoundReport{}}}, later)
	if v, _, _ := l.Gate(later, app, nil, true); !v.Handle {
		t.Fatalf("app retry after the filters went: %+v", v)
	}
	l.Stop()
}

// TestLiveImmediateCheckVetoesUpdateSibling: with the immediate check on
// (mode Off: no rounds), n9's handling of n1's UpdateSibling(n13) in
// Figure 2 is vetoed on the view of the snapshot the node gathered: the
// message is dropped (and n1's connection broken), n9's state untouched;
// a harmless probe passes. A type the service declares lossy is dropped
// alone, unless BreakConnection.
func TestLayerImmediateCheckVetoesUpdateSibling(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, c := range []struct{ breakConn, lossy, brk bool }{
		{true, false, true},
		{false, false, true}, // a vetoed message breaks the connection by default
		{false, true, false}, // a lossy type: dropped alone
		{true, true, true},   // BreakConnection breaks for a lossy type too
	} {
		brk := c.brk
		spec := randtree.NewSpec(randtree.DefaultOptions())
		if c.lossy {
			spec.Delivery = node.DeliverySpec{Types: map[string]node.Delivery{"randtree.UpdateSibling": {Lost: true}}}
		}
		core, ev, _ := BeforeUpdateSibling(t, spec)
		cfg := LayerConfig{Controller: figure2Config(Off, spec), Immediate: true}
		cfg.Controller.BreakConnection = c.breakConn
		l, h := newTestLive(t, cfg, core)
		l.Gathered(figure2(t, spec)) // mode Off: the view, at once, no round
		if l.gate.View() == nil {
			t.Fatal("no view after the snapshot")
		}
		select {
		case <-h.woke:
			t.Fatal("mode Off ran a round")
		default:
		}
		h0, _ := core.Hash()
		v, _, err := l.Gate(ev.At, ev, nil, false)
		if err != nil || v.Handle || v.Break != brk || !v.RetryAt.IsZero() {
			t.Fatalf("break=%v: UpdateSibling verdict %+v, %v", brk, v, err)
		}
		if h1, _ := core.Hash(); h1 != h0 {
			t.Fatal("the check changed n9's real state")
		}
		probe := node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: ev.At}
		if v, _, err := l.Gate(ev.At, probe, nil, false); err != nil || !v.Handle {
			t.Fatalf("probe verdict %+v, %v", v, err)
		}
		if st := l.Status(); st.Mode != "off" || !st.Immediate || st.Vetoes != 1 || st.ImmediateChecks != 2 || st.Events != 2 || st.Rounds != 0 {
			t.Fatalf("status %+v", st)
		}
		l.Stop()
	}
}

// TestLiveConfigErrors: bad configurations and hosts are refused with an
// error, never a panic.
func TestLayerConfigErrors(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	reg, _ := spec.Registry()
	snaps, err := snapshot.NewLayer(snapshot.Config{Registry: reg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewLayer(LayerConfig{Controller: Config{Spec: spec, Mode: Debug}}, snaps); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("no runner: %v", err)
	}
	if _, err := NewLayer(LayerConfig{Controller: Config{}}, snaps); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "Config.Spec is not set") {
		t.Errorf("no spec: %v", err)
	}
	if _, err := NewLayer(LayerConfig{Controller: Config{Spec: spec, SearchBudget: SearchBudget{MaxStates: -1}}}, snaps); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative budget: %v", err)
	}
	if _, err := NewLayer(LayerConfig{Controller: Config{Spec: spec, InterventionPolicy: InterventionPolicy{PostponeDelay: -time.Second}}}, snaps); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative delay: %v", err)
	}
	l, err := NewLayer(LayerConfig{Controller: Config{Spec: spec, Mode: Steer}, Runner: &SyncRunner{}}, snaps)
	if err != nil {
		t.Fatal(err)
	}
	if st := l.Status(); st.Mode != "steer" || st.Predicted == nil || st.Filters == nil {
		t.Errorf("status before Attach: %+v", st)
	}
	core, _ := node.NewCore(node.CoreConfig{ID: 9, Factory: spec.New})
	if err := l.Attach(core); !errors.Is(err, ErrHost) {
		t.Errorf("Attach to a bare core: %v", err)
	}
	if err := l.Attach(newFakeHost(core)); err != nil {
		t.Fatal(err)
	}
	if err := l.Attach(newFakeHost(core)); !errors.Is(err, ErrAttached) {
		t.Errorf("second Attach: %v", err)
	}
	l.Stop() // never started
	if out := l.Start(time.Now()); out != nil {
		t.Errorf("Start after Stop sent %v", out)
	}
	l.Stop()
	if v, _, _ := l.Gate(time.Now(), node.Event{Kind: node.EventInit}, nil, false); !v.Handle {
		t.Error("init kept from the core")
	}
}

// BenchmarkLayerGate is what the steering layer adds to every event of a
// live node: with no filter in force and the check off (the gate only
// counts), with the immediate safety check on Figure 2's view, and with
// the check on a view merged from two snapshots (ImmediateMemory: the
// newest holds n9 alone, the one before all of Figure 2's nodes).
//
//	go test ./steering/ -run '^$' -bench LayerGate -benchmem
func BenchmarkLayerGate(b *testing.B) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	for _, name := range []string{"idle", "immediate", "remembered"} {
		immediate := name != "idle"
		b.Run(name, func(b *testing.B) {
			core, _, _ := BeforeUpdateSibling(b, spec)
			cfg := LayerConfig{Controller: figure2Config(Off, spec), Immediate: immediate}
			if name == "remembered" {
				cfg.ImmediateMemory = time.Minute
			}
			l, _ := newTestLive(b, cfg, core)
			snap := figure2(b, spec)
			l.Gathered(snap)
			if name == "remembered" {
				newer := *snap
				newer.At = snap.At.Add(10 * time.Second)
				newer.Nodes = nil
				for _, n := range snap.Nodes {
					if n.Node == 9 {
						newer.Nodes = append(newer.Nodes, n)
					}
				}
				l.Gathered(&newer)
				if got := len(l.gate.CheckView().Nodes()); got != len(snap.Nodes) {
					b.Fatalf("the merged view holds %d nodes, want %d", got, len(snap.Nodes))
				}
			}
			probe := node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: core.Now()}
			b.ReportAllocs()
			for b.Loop() {
				if v, _, err := l.Gate(probe.At, probe, nil, false); err != nil || !v.Handle {
					b.Fatal(v, err)
				}
			}
		})
	}
}
